"""dynid convert: a foreign log (a ROS bag, a directory of per-signal text files) as a joint data file."""

from __future__ import annotations

from pathlib import Path

import typer

from dynid.cli import data_options as O
from dynid.cli.common import console, friendly_errors
from dynid.errors import DataError


@friendly_errors(outputs=("out",))
def convert(source: Path = typer.Argument(..., help="the log: a ROS bag (.bag, .db3, .mcap or a ROS 2 bag directory) "
                                          "or a directory of per-signal text files"),
            out: Path = typer.Option(..., "--out", "-o", help="joint data file to write (.parquet or .csv)"),
            signals: str = typer.Option(None, "--signals", help="text files: which file holds which signal, e.g. "
                                        "'t=cur_traj_time_s.txt,q=joint_position_measured.txt,"
                                        "tau=joint_torque_measured.txt' (signals t, q, dq, ddq, tau, i, u, temp)"),
            topic: str = typer.Option("/joint_states", "--topic", help="bags: the sensor_msgs/JointState topic"),
            robot: str = typer.Option(None, "--robot", "-r", help="bags: keep this robot's joints, in its order "
                                      "(builtin name, .urdf or .yaml)"),
            joints: str = typer.Option(None, "--joints", help="bags: keep these joints, in this order "
                                       "(comma-separated names; default: the first message's)"),
            stamp: str = O.STAMP,
            effort: str = typer.Option("tau", "--effort", help="bags: write effort as 'tau' (torques) or 'i' (currents)"),
            nan: str = O.NAN,
            chunk_rows: int = typer.Option(50_000, "--chunk-rows", help="rows read at a time (bounded memory)")) -> None:
    """Write a log as the contract's joint data format (docs/formats.md section 3), streaming: values are
    kept as logged (signs and units are identify's --negate, --degrees... options); a time
    that restarts becomes a 'segment' column (docs/formats.md)."""
    from dynid.data.bags import bag_joint_names, is_bag
    from dynid.data.convert import bag_chunks, parse_signals, signal_files, text_signal_chunks, write_stream

    if effort not in ("tau", "i"):
        raise DataError(f"--effort '{effort}': expected tau or i")
    if is_bag(source):
        from dynid.robot.select import parse_joints

        names = parse_joints(joints)  # as --joints of the other commands
        meta = {"source": str(source), "topic": topic}
        if robot is not None:
            import dynid
            r = dynid.load_robot(robot)
            left_out = [j for j in r.joint_names if j not in (names or r.joint_names)]
            if left_out:  # the file would claim to be a log of the robot without these joints
                raise DataError(f"--joints {joints} leaves out joint(s) {left_out} of robot '{r.name}' (--robot): "
                                "a log of the robot holds all its joints; omit --joints (the robot's joints, in its "
                                "order), or omit --robot to write only the joints listed")
            names, meta["robot"] = names or r.joint_names, r.name
        names = names or bag_joint_names(source, topic)
        notes: list[str] = []
        rows = write_stream(out, bag_chunks(source, names, topic, stamp, chunk_rows, effort, nan, notes),
                            {**meta, "joints": names})
        for note in notes:
            console.print(f"[dim]note: {note}[/]")
    else:
        if not source.is_dir():
            if not source.exists():
                raise FileNotFoundError(f"log not found: {source}")
            raise DataError(f"{source}: expected a ROS bag (.bag, .db3, .mcap, a ROS 2 bag directory) or a "
                            "directory of per-signal text files (with --signals)")
        if not signals:
            raise DataError(f"{source}: a directory of text files needs --signals 't=FILE,q=FILE,tau=FILE'")
        pairs = parse_signals(signals)
        signal_files(source, pairs)  # inputs before the work: --out may not name one of them
        notes = []
        rows = write_stream(out, text_signal_chunks(source, pairs, chunk_rows, nan, notes), {"source": str(source)})
        for note in notes:
            console.print(f"[dim]note: {note}[/]")
    console.print(f"wrote [bold]{out}[/] ({rows} samples)")
