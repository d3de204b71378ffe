"""Shared CLI plumbing: one console, error handling that prints one line and exits non-zero,
and the output safety of every command (``dynid.files.outputs``)."""

from __future__ import annotations

import functools
import gc
import inspect
import math
import os
import sys
import warnings
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from dynid.cli.option_checks import check_value
from dynid.files.outputs import check_output_directory, check_outputs, command_scope, running_command
from dynid.errors import DataError, DynidError, DynidWarning


def _is_terminal(stream) -> bool:
    """Whether ``stream`` is a terminal; False for a closed one (``dynid ... >&-`` leaves sys.stdout None)."""
    return stream is not None and stream.isatty()


PIPED_COLUMNS = 160


def _width(stream) -> int | None:
    """A terminal's own width; piped output (logs, CI, scripts that read it) at least PIPED_COLUMNS
    instead of rich's default of 80, wider if COLUMNS asks for it (a COLUMNS=80 inherited from a
    terminal, as pytest-xdist's workers have, must not wrap the lines a script greps)."""
    if _is_terminal(stream):
        return None
    columns = os.environ.get("COLUMNS", "")
    return max(PIPED_COLUMNS, int(columns)) if columns.isdigit() else PIPED_COLUMNS


console = Console(width=_width(sys.stdout))
err_console = Console(stderr=True, width=_width(sys.stderr))

_issued: list[list[str]] = []  # DynidWarning texts of the running command(s), innermost last


def debug_enabled() -> bool:
    return os.environ.get("DYNID_DEBUG", "") not in ("", "0")


def command_warnings() -> list[str]:
    """The DynidWarning lines printed so far by the running command (e.g. to store in result.json)."""
    return list(_issued[-1]) if _issued else []


def warn_line(text: str) -> None:
    err_console.print(f"[yellow]warning:[/] {escape(text)}", highlight=False, soft_wrap=True)


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, DynidError) and exc.filename and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    text = str(exc)
    if isinstance(exc, FileNotFoundError) and " " not in text.strip():  # a library's bare path (pyarrow)
        return f"{text}: file not found"
    return text


def _option_name(fn, name: str) -> str:
    """'--json' for the parameter json_out declared with typer.Option(None, '--json')."""
    default = inspect.signature(fn).parameters[name].default
    decls = [d for d in getattr(default, "param_decls", ()) or () if d.startswith("--")]
    return decls[0].split("/")[0] if decls else "--" + name.replace("_", "-")


def _paths(value) -> list:
    values = value if isinstance(value, (list, tuple)) else [value]
    return [v for v in values if isinstance(v, (str, Path)) and str(v) and os.path.lexists(str(v))]


def friendly_errors(fn=None, *, outputs: tuple[str, ...] = (), directories: tuple[str, ...] = (),
                    command: str | None = None):
    """Run a command inside ``dynid.files.outputs.command_scope``; user-caused errors (DynidError,
    OSError) become one line and exit code 2.

    ``outputs``: names of the parameters that are output paths: each is checked before the work
    starts against every other path argument (an input) and against the other outputs;
    ``directories``: those of them that are directory outputs (replaced only when they are an
    earlier output of ``command``, or with the command's ``force`` parameter).
    DynidWarnings print as one 'warning:' line each; other warnings (NumPy's RuntimeWarning...)
    print after a successful run and are dropped when the command ends in an error line."""
    if fn is None:
        return lambda f: friendly_errors(f, outputs=outputs, directories=directories, command=command)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        issued: list[str] = []
        others: list[str] = []
        scope = []  # the command's inputs registry: names copies of FIFOs as the user gave them

        def user_text(text: str) -> str:
            return scope[0].user_text(text) if scope else text

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, DynidWarning):
                if str(message) not in issued:
                    issued.append(str(message))
                    warn_line(user_text(str(message)))
            elif f"{category.__name__}: {message}" not in others:
                others.append(f"{category.__name__}: {message}")

        _issued.append(issued)
        failed = False
        unraisable = sys.unraisablehook  # e.g. pyarrow's CSV row handler failing to decode a binary line
        sys.unraisablehook = lambda u: show(str(u.exc_value), type(u.exc_value) if isinstance(
            u.exc_value, Warning) else RuntimeWarning, "", 0)
        try:
            with command_scope(), warnings.catch_warnings():
                scope.append(running_command())
                warnings.simplefilter("default")
                warnings.showwarning = show
                bound = inspect.signature(fn).bind(*args, **kwargs)
                for k, v in bound.arguments.items():
                    if isinstance(v, float) and math.isnan(v):
                        raise DataError(f"{_option_name(fn, k)} nan: expected a number")
                    check_value(_option_name(fn, k), v)  # ranges of numeric options (option_checks.RULES)
                named = {_option_name(fn, k): bound.arguments.get(k) for k in outputs}
                inputs = [p for k, v in bound.arguments.items() if k not in outputs for p in _paths(v)]
                check_outputs(named, inputs, tuple(_option_name(fn, k) for k in directories))
                for k in directories:
                    if bound.arguments.get(k) is not None:
                        check_output_directory(bound.arguments[k], command or fn.__name__,
                                               bool(bound.arguments.get("force")), _option_name(fn, k))
                value = fn(*args, **kwargs)
            for text in others:
                warn_line(text)
            return value
        except (DynidError, OSError) as exc:
            if debug_enabled():
                raise
            err_console.print(f"[bold red]error:[/] {escape(user_text(_error_text(exc)))}", highlight=False,
                              soft_wrap=True)
            failed = True
        finally:
            _issued.pop()
            sys.unraisablehook = unraisable
        # Exit outside the except clause: a SystemExit raised inside it would carry the error as its
        # __context__, whose traceback keeps the failed command's frames (open pyarrow CSV readers
        # among them) alive until interpreter finalization, where pyarrow's thread pools may already
        # be torn down ("terminate called without an active exception", exit -6, seen in CI).
        # The frames are released and collected here, while every library is still whole.
        if failed:
            gc.collect()
            sys.exit(2)

    return wrapper


def number_text(x, spec=".4g") -> str:
    """A number for the console; "-" for None."""
    return "-" if x is None else format(x, spec)


def diagnostics_line(d: dict) -> str:
    """One console line of result.json's "diagnostics" (numerical honesty of the fit)."""
    fixed = d.get("fixed", 0)
    rank = (f"rank {d['rank']} of {d['base_parameters']}" if not fixed else
            f"rank {d['rank']} of {d['base_parameters'] - fixed} fitted ({fixed} held at the description's values)")
    rank += " (RANK DEFICIENT)" if d["rank_deficient"] else ""
    limit = "never refused" if d["max_condition"] is None else f"refused above {number_text(d['max_condition'])}"
    cond = (f"condition number {number_text(d['condition_number']) if d['condition_number'] else 'infinite'} "
            f"(warning above {number_text(d['warn_condition'])}, {limit})"
            + (" ILL-CONDITIONED" if d["ill_conditioned"] else ""))
    how = []
    if d["iterations"] is not None:
        how.append(f"{d['iterations']} iterations")
    if d["solver_status"] is not None:
        how.append(f"solver status {d['solver_status']}")
    converged = ("converged" if d["converged"] else "NOT CONVERGED") + (f" ({', '.join(how)})" if how else "")
    return f"diagnostics: {rank}; {cond}; {converged}"


def robot_option(help_text: str = "builtin name (dynid robots), .urdf or .yaml file"):
    return typer.Option(..., "--robot", "-r", help=help_text)


JOINTS = typer.Option(None, "--joints", help="keep these actuated joints (comma-separated names), lock the others")
LOCK = typer.Option(None, "--lock", help="hold joints at a value: NAME=VALUE[,NAME=VALUE] [rad | m]")


def load_selected(robot: str, joints: str | None, lock: str | None):
    """dynid.load_robot with the --joints / --lock options of a command (robot/select.py)."""
    from dynid.robot import load_robot
    from dynid.robot.select import parse_joints, parse_lock

    return load_robot(robot, joints=parse_joints(joints), lock=parse_lock(lock))
