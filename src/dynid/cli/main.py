"""The dynid command line. Each command lives in a small module of this package."""

from __future__ import annotations

import os
import sys

import typer

from dynid.cli.base_params_cmd import base_params
from dynid.cli.cycles_cmd import cycles_app
from dynid.cli.draw_cmd import draw
from dynid.cli.drift_cmd import friction_drift
from dynid.cli.drives_cmd import drives_app
from dynid.cli.common import debug_enabled, err_console
from dynid.cli.convert_cmd import convert
from dynid.cli.demo import demo
from dynid.cli.diagnose_cmd import diagnose
from dynid.cli.excite import excite_app
from dynid.cli.friction import friction_app
from dynid.cli.export_cmd import export
from dynid.cli.fleet_cmd import fleet_app
from dynid.cli.identify_cmd import identify, predict, validate
from dynid.cli.multibody import multibody_app
from dynid.cli.payload_cmd import payload_app
from dynid.cli.replay_cmd import replay
from dynid.cli.report import report
from dynid.cli.robots import robot_app, robots
from dynid.cli.simulate_cmd import simulate

app = typer.Typer(
    name="dynid",
    help="Robot dynamic model identification: robots, dynamics, identification, excitation, multibody.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


@app.callback()
def _global(debug: bool = typer.Option(False, "--debug", help="show tracebacks of errors")) -> None:
    if debug:
        os.environ["DYNID_DEBUG"] = "1"


app.command("robots")(robots)
robot_app.command("draw")(draw)
app.add_typer(robot_app, name="robot")
app.command("demo")(demo)
app.command("simulate")(simulate)
app.command("identify")(identify)
app.command("predict")(predict)
app.command("validate")(validate)
app.command("diagnose")(diagnose)
app.command("convert")(convert)
app.command("base-params")(base_params)
app.add_typer(multibody_app, name="multibody")
app.add_typer(payload_app, name="payload")
app.add_typer(drives_app, name="drives")
app.add_typer(excite_app, name="excite")
friction_app.command("drift")(friction_drift)
app.add_typer(friction_app, name="friction")
app.add_typer(cycles_app, name="cycles")
app.command("export")(export)
app.command("replay")(replay)
app.command("report")(report)
app.add_typer(fleet_app, name="fleet")


def main() -> None:
    """Entry point: usage errors (unknown option, bad or missing value) print one line and exit 2,
    like the errors of the commands themselves (``common.friendly_errors``)."""
    try:
        from typer._click import exceptions as click_errors  # typer >= 0.20 vendors click
    except ImportError:  # pragma: no cover - older typer with click installed
        from click import exceptions as click_errors
    if sys.stdout is None:  # started with standard output closed (>&-): what it prints would be lost
        if sys.stderr is not None:
            err_console.print("error: standard output is closed (>&-); dynid prints its results there: redirect "
                              "it to a file, or to /dev/null to discard it", markup=False, highlight=False,
                              soft_wrap=True)
        sys.exit(2)
    try:
        code = app(standalone_mode=False)
    except click_errors.ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help is already printed
            sys.exit(exc.exit_code)
        if debug_enabled():
            raise
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        message = " ".join(exc.format_message().split())
        err_console.print(f"error: {message}{hint}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("error: aborted", markup=False, highlight=False)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
