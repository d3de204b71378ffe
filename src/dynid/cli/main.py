"""The dynid command line. Each command lives in a small module of this package."""

from __future__ import annotations

import os

import typer

from dynid.cli.base_params_cmd import base_params
from dynid.cli.demo import demo
from dynid.cli.excite import excite_app
from dynid.cli.friction import friction_app
from dynid.cli.export_cmd import export
from dynid.cli.identify_cmd import identify, predict, validate
from dynid.cli.multibody import multibody_app
from dynid.cli.report import report
from dynid.cli.robots import robot_app, robots
from dynid.cli.simulate_cmd import simulate

app = typer.Typer(
    name="dynid",
    help="Robot dynamic model identification: robots, dynamics, identification, excitation, multibody.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _global(debug: bool = typer.Option(False, "--debug", help="show tracebacks of errors")) -> None:
    if debug:
        os.environ["DYNID_DEBUG"] = "1"


app.command("robots")(robots)
app.add_typer(robot_app, name="robot")
app.command("demo")(demo)
app.command("simulate")(simulate)
app.command("identify")(identify)
app.command("predict")(predict)
app.command("validate")(validate)
app.command("base-params")(base_params)
app.add_typer(multibody_app, name="multibody")
app.add_typer(excite_app, name="excite")
app.add_typer(friction_app, name="friction")
app.command("export")(export)
app.command("report")(report)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
