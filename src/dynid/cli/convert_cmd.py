"""dynid convert: a foreign log (a directory of per-signal text files) as a joint data file."""

from __future__ import annotations

from pathlib import Path

import typer

from dynid.cli.common import console, friendly_errors
from dynid.errors import DataError


@friendly_errors(outputs=("out",))
def convert(source: Path = typer.Argument(..., help="the log: a directory of per-signal text files"),
            out: Path = typer.Option(..., "--out", "-o", help="joint data file to write (.parquet or .csv)"),
            signals: str = typer.Option(None, "--signals", help="which file holds which signal, e.g. "
                                        "'t=cur_traj_time_s.txt,q=joint_position_measured.txt,"
                                        "tau=joint_torque_measured.txt' (signals t, q, dq, ddq, tau, i, u, temp)"),
            chunk_rows: int = typer.Option(50_000, "--chunk-rows", help="rows read at a time (bounded memory)")) -> None:
    """Write a log as the contract's joint data format (CONTRACTS.md 3), streaming: values are
    kept as logged (signs and units are identify's --negate, --degrees... options); a time
    that restarts becomes a 'segment' column (docs/formats.md)."""
    from dynid.data.convert import parse_signals, text_signal_chunks, write_stream

    if chunk_rows < 1:
        raise DataError(f"--chunk-rows {chunk_rows}: expected a positive number of rows")
    if not source.is_dir():
        if not source.exists():
            raise FileNotFoundError(f"log not found: {source}")
        raise DataError(f"{source}: expected a directory of per-signal text files (with --signals)")
    if not signals:
        raise DataError(f"{source}: a directory of text files needs --signals 't=FILE,q=FILE,tau=FILE'")
    chunks = text_signal_chunks(source, parse_signals(signals), chunk_rows)
    rows = write_stream(out, chunks, {"source": str(source)})
    console.print(f"wrote [bold]{out}[/] ({rows} samples)")
