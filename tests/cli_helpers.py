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


def read_columns(path) -> dict:
    table = pacsv.read_csv(path)
    return {name: table.column(name).to_numpy() for name in table.column_names}
