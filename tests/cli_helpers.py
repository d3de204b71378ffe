"""Running dynid commands in-process and reading the CSV files they write."""

from __future__ import annotations

import pyarrow.csv as pacsv
from typer.testing import CliRunner

from dynid.cli.main import app

runner = CliRunner()


def run_ok(*args) -> str:
    """Run ``dynid ARGS``; fail the test with the command's output unless it exits 0."""
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def failing(*args) -> str:
    """Run ``dynid ARGS``; fail the test unless it ends in exactly one 'error:' line and exit code 2."""
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def read_columns(path) -> dict:
    table = pacsv.read_csv(path)
    return {name: table.column(name).to_numpy() for name in table.column_names}
