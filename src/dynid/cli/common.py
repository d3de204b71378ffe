"""Shared CLI plumbing: one console, error handling that prints one line and exits non-zero."""

from __future__ import annotations

import functools
import os
import sys

import typer
from rich.console import Console
from rich.markup import escape

from dynid.errors import DynidError

# Piped output (logs, CI) gets a wide console instead of rich's default of 80 columns.
console = Console(width=None if sys.stdout.isatty() else 140)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 140)


def debug_enabled() -> bool:
    return os.environ.get("DYNID_DEBUG", "") not in ("", "0")


def friendly_errors(fn):
    """Turn user-caused errors (DynidError, missing files) into one line and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (DynidError, FileNotFoundError, PermissionError, IsADirectoryError) as exc:
            if debug_enabled():
                raise
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
            sys.exit(2)

    return wrapper


def robot_option(help_text: str = "builtin name (dynid robots), .urdf or .yaml file"):
    return typer.Option(..., "--robot", "-r", help=help_text)
