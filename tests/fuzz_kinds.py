"""Seeded cases of the kinds of issue 26 (the second outside campaign): each kind is one mechanism,
and ``run(kind, seed, ctx)`` makes a random instance of it and runs it through the command line.

``fuzz_inputs`` mutates files until a reader breaks; these kinds are inputs that every reader
accepts but that conflict with themselves or with the rest of the command, or name values that
cannot be right (tests/plausibility_inputs.py has the nonsense *inside* logs and results):

==================  =================================================================  ========
kind                what the case does (random in each seed)                           outcome
==================  =================================================================  ========
repeated_item       a list option naming one thing twice or within another             refused
                    (--negate tau,tau2, --ignore, --joints, --lock, --signals, --rename)
number_list         a comma-separated number option with NaN, inf or a word            refused
                    (robot draw --q, simulate --coulomb, multibody --times)
covariance          a result's covariance that is text, has NaN, is asymmetric,        refused
                    has a negative variance, is not positive semidefinite, or another
                    shape (predict --std model); the line names which
drive_value         a robot YAML drive field that cannot be right (torque_constant 0,  refused
                    gear_ratio 0 or 1e7..1e300, negative rotor_inertia, rated_torque 0)
transmission        URDF transmissions: two for one joint, an empty or impossible      refused
                    mechanicalReduction, a robot YAML coupling entry given twice;
                    one for a joint the file does not have                             (warned)
gravity             gravity of zero, below 2 or above 20 m/s^2, in a robot YAML        warned
lock_value          --lock outside the joint's limits                                  refused
time_resolution     time stamps so large (1e12.5 .. 1e17 s) that floats cannot tell    refused
                    the samples apart
signal_files        convert's per-signal text files: NaN (--nan reject), widths that   refused
                    differ, a time that never advances, gzip/bzip2/binary content;
                    NaN with --nan drop                                                (read)
same_file           one log given twice by another name (link, hard link, ./name)      warned
limits_conflict     one joint limited by name and by number (limits file, options)     refused
output_in_input     --out naming a signal file, a file a report directory holds, a     refused
                    Parquet file of a --data DIR data set, or one below a fleet ROOT
bag_stamps          a ROS bag whose header stamps restart (convert: segments) or are   read
                    all one (refused, naming --stamp)                                  (refused)
lowpass_nyquist     --lowpass at, above or just under the log's Nyquist frequency      warned
                    (identify, diagnose)
bag_joints          convert --joints naming a joint twice, or leaving out joints of    refused
                    --robot
pattern_characters  an existing log named with [ ], * or ?, beside a file the pattern  read
                    would match: that log is read, not the pattern
missing_path        an input file or folder that does not exist (every kind of input)  refused
text_field          a robot YAML name or description that is a list, a mapping, a      refused
                    boolean or empty (robot, joint, link; DH table or over a URDF)
report_two_robots   report --from a directory whose results name two robots (both      refused
                    files named)
time_backwards      a log whose clock restarts or steps back, without --segments       refused
unknown_name        a parameter or joint the model does not have (cycles groups        refused
                    --parameters, before the work; --joints, --lock, --dq-max), a
                    --rename of a column the log does not have
==================  =================================================================  ========

The outcome observed is ``refused`` (exit 2, exactly one ``error:`` line matching the kind's
pattern; in every kind, no line may show a Python or NumPy repr such as ``np.float64(0.0)``), ``warned`` (exit 0 and a matching ``warning:`` line), ``read`` (exit 0), ``silent``
(exit 0 on what must be refused or warned: the defect this harness looks for) or ``other: ...``.
tests/test_fuzz_readers.py runs a few seeds of every kind; bench/fuzz.py --kinds N runs more.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

P2_URDF = """<?xml version="1.0"?>
<robot name="p2u">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.25 0 0"/><mass value="2.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.2 0 0"/><mass value="1.0"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <joint name="joint1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-2.9" upper="2.9" velocity="3" effort="50"/></joint>
  <joint name="joint2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.5 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-2.9" upper="2.9" velocity="3" effort="20"/></joint>
{extra}
</robot>
"""


def transmission(name: str, joint: str, reduction: str | None) -> str:
    red = "<mechanicalReduction/>" if reduction is None else f"<mechanicalReduction>{reduction}</mechanicalReduction>"
    return (f'  <transmission name="{name}"><type>transmission_interface/SimpleTransmission</type>'
            f'<joint name="{joint}"/><actuator name="m_{name}">{red}</actuator></transmission>')


@dataclass
class Context:
    directory: Path
    log: Path         # planar2, 3 s at 100 Hz (simulate)
    result: Path      # identify --lowpass 10 of ``log``
    signals: Path     # time.txt, pos.txt, trq.txt of ``log`` (convert's per-signal text files)
    dataset: Path     # a folder holding ``log`` as Parquet (a --data DIR data set)
    urdf: Path        # a planar two-joint URDF (joint1, joint2)
    report: Path      # a report directory: result_ols.json and train.csv (report --from)
    fleet: Path       # a fleet ROOT: fleet.yaml and robot=r000/date=2026-01-05/log.parquet


def make_context(directory: Path) -> Context:
    """Simulate the log, identify it, write the signal files, the data set and the URDF (seconds)."""
    from typer.testing import CliRunner

    from dynid.cli.main import app

    runner = CliRunner()
    d = Path(directory)
    for args in (["simulate", "-r", "planar2", "--out", d / "log.csv", "--duration", "3", "--seed", "1"],
                 ["identify", "-r", "planar2", "--data", d / "log.csv", "--out", d / "r.json", "--lowpass", "10"]):
        res = runner.invoke(app, [str(a) for a in args])
        assert res.exit_code == 0, res.output
    cols = read_columns(d / "log.csv")
    signals = d / "signals"
    signals.mkdir(exist_ok=True)
    np.savetxt(signals / "time.txt", cols["t"])
    np.savetxt(signals / "pos.txt", np.column_stack([cols["q1"], cols["q2"]]))
    np.savetxt(signals / "trq.txt", np.column_stack([cols["tau1"], cols["tau2"]]))
    dataset = d / "dataset"
    dataset.mkdir(exist_ok=True)
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    pq.write_table(pacsv.read_csv(d / "log.csv"), dataset / "log.parquet")
    (d / "p2.urdf").write_text(P2_URDF.format(extra=""))
    report = d / "report"
    report.mkdir(exist_ok=True)
    shutil.copy(d / "r.json", report / "result_ols.json")
    shutil.copy(d / "log.csv", report / "train.csv")
    fleet = d / "fleet"
    (fleet / "robot=r000" / "date=2026-01-05").mkdir(parents=True, exist_ok=True)
    shutil.copy(dataset / "log.parquet", fleet / "robot=r000" / "date=2026-01-05" / "log.parquet")
    (fleet / "fleet.yaml").write_text("robots:\n  r000: planar2\n")
    return Context(d, d / "log.csv", d / "r.json", signals, dataset, d / "p2.urdf", report, fleet)


def read_columns(path: Path) -> dict[str, np.ndarray]:
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(path)
    return {k: table.column(k).to_numpy().astype(float) for k in table.column_names}


@dataclass
class Case:
    argv: list
    expected: str      # refused | warned | read
    pattern: str = ""  # the error / warning line must match (case-insensitive)
    check: object = None  # read: f() -> None, or what is wrong with what the command wrote


def _identify(ctx: Context, *extra, data=None) -> list:
    return ["identify", "-r", "planar2", "--data", data or ctx.log, "--out", ctx.directory / "out.json",
            "--lowpass", "10", *extra]


# -- the kinds ---------------------------------------------------------------------------------

def repeated_item(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    j, other = rng.randint(1, 2), rng.randint(1, 2)
    kind = rng.choice(["negate", "ignore", "lock", "joints", "signals", "rename"])
    if kind == "negate":
        value = rng.choice([f"tau,tau{j}", f"tau{j},tau", "tau,tau", f"q{j},q{j}", f"tau{j},q{other},tau{j}"])
        return Case(_identify(ctx, "--negate", value), "refused", "twice|part of")
    if kind == "ignore":
        return Case(_identify(ctx, "--ignore", "dq,dq"), "refused", "twice")
    if kind == "lock":
        a, b = rng.uniform(-1, 1), rng.uniform(-1, 1)
        return Case(["robot", "show", "planar2", "--lock", f"joint{j}={a:.3f},joint{j}={b:.3f}"], "refused", "twice")
    if kind == "joints":
        return Case(["robot", "show", "planar2", "--joints", f"joint{j},joint{other},joint{j}"], "refused", "twice")
    if kind == "signals":
        name = rng.choice(["t", "q", "tau"])
        pairs = ["t=time.txt", "q=pos.txt", "tau=trq.txt"]
        pairs.insert(rng.randint(0, 3), {"t": "t=time.txt", "q": "q=pos.txt", "tau": "tau=trq.txt"}[name])
        return Case(["convert", ctx.signals, "--out", case_dir / "c.csv", "--signals", ",".join(pairs)],
                    "refused", "twice")
    return Case(_identify(ctx, "--rename", "time=t,time=q1"), "refused", "twice")


def number_list(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    bad = rng.choice(["nan", "NaN", "inf", "-inf", "abc", "1e999"])
    which = rng.choice(["draw", "coulomb", "times"])
    if which == "draw":
        values = ["0.1", "0.2"]
        values[rng.randint(0, 1)] = bad
        return Case(["robot", "draw", "planar2", "--q", ",".join(values), "--out", case_dir / "d.png"], "refused",
                    "number")
    if which == "coulomb":
        return Case(["simulate", "-r", "planar2", "--out", case_dir / "s.csv", "--duration", "1",
                     "--coulomb", f"0.1,{bad}"], "refused", "number")
    return Case(["multibody", "identify", "-r", "kr500", "--body-data", case_dir / "none.csv", "--out",
                 case_dir / "m.json", "--times", f"0.3,{bad}"], "refused", "number")


def covariance(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    result = json.loads(ctx.result.read_text())
    cov = np.array(result["covariance"], dtype=float)
    b = cov.shape[0]
    i, j = rng.sample(range(b), 2)
    kind = rng.choice(["text", "nan", "asymmetric", "negative", "indefinite", "shape"])
    if kind == "text":
        value = rng.choice(["none", "", "diag", [["x"] * b] * b])
    elif kind == "nan":
        cov[i, j] = rng.choice([float("nan"), float("inf")])
        value = cov.tolist()
    elif kind == "asymmetric":
        cov[i, j] += rng.uniform(1e-6, 1.0) * (abs(cov).max() + 1e-12)
        value = cov.tolist()
    elif kind == "negative":
        cov[i, i] = -rng.uniform(1e-9, 1.0)
        value = cov.tolist()
    elif kind == "indefinite":
        v = np.zeros(b)
        v[i], v[j] = 1.0, 1.0
        scale = max(abs(cov[i, i]), abs(cov[j, j]), 1e-12)
        cov[i, j] = cov[j, i] = rng.uniform(3.0, 100.0) * scale  # |C_ij| > sqrt(C_ii C_jj)
        value = cov.tolist()
    else:
        value = cov[: rng.randint(1, b - 1)].tolist()
    path = case_dir / "cov.json"
    path.write_text(json.dumps({**result, "covariance": value}))
    # the line names what is wrong, not only the field (a NaN was once reported as "shape (52, 52), expected
    # (52, 52) finite numbers")
    what = {"text": "matrix of numbers|has none|no covariance", "nan": "not finite", "asymmetric": "not symmetric",
            "negative": "variance .* negative", "indefinite": "not positive semidefinite", "shape": "has shape"}[kind]
    return Case(["predict", "-r", "planar2", "--params", path, "--data", ctx.log, "--std", "model", "--out",
                 case_dir / "p.csv"], "refused", f"covariance.*({what})")


def drive_value(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    field, value = rng.choice([("torque_constant", "0"), ("torque_constant", ".nan"), ("gear_ratio", "0"),
                               ("gear_ratio", f"{10 ** rng.uniform(6.5, 300):.3g}"), ("gear_ratio", ".inf"),
                               ("rotor_inertia", f"{-rng.uniform(1e-6, 1):.3g}"), ("rated_torque", "0"),
                               ("rated_torque", f"{-rng.uniform(0.1, 10):.3g}")])
    path = case_dir / "robot.yaml"
    path.write_text(f"urdf: {ctx.urdf}\ndrives:\n  joint{rng.randint(1, 2)}: {{{field}: {value}}}\n")
    return Case(["robot", "show", path], "refused", field)


def transmission_kind(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    j = rng.randint(1, 2)
    kind = rng.choice(["twice", "empty", "huge", "missing", "coupling_twice"])
    if kind == "coupling_twice":  # a robot YAML coupling entry given twice: the later would win
        a, b = (f"{rng.uniform(0.5, 40):.3f}" for _ in range(2))
        entries = [f"{{motor: joint2, joint: joint1, ratio: {a}}}", f"{{motor: joint2, joint: joint1, ratio: {b}}}"]
        path = case_dir / "robot.yaml"
        path.write_text(f"urdf: {ctx.urdf}\ntransmission:\n  coupling: [{', '.join(entries)}]\n")
        return Case(["robot", "show", path], "refused", "twice")
    if kind == "twice":
        extra = transmission("ta", f"joint{j}", f"{rng.uniform(1, 200):.3f}") + "\n" + \
            transmission("tb", f"joint{j}", f"{rng.uniform(1, 200):.3f}")
        expected, pattern = "refused", f"joint{j}"
    elif kind == "empty":
        extra, expected, pattern = transmission("ta", f"joint{j}", None), "refused", "mechanicalReduction"
    elif kind == "huge":
        extra = transmission("ta", f"joint{j}", f"{rng.choice([1, -1]) * 10 ** rng.uniform(6.5, 307):.4g}")
        expected, pattern = "refused", "mechanicalReduction"
    else:
        extra, expected, pattern = transmission("ta", f"joint{rng.randint(3, 99)}", "50"), "warned", "does not have"
    path = case_dir / "robot.urdf"
    path.write_text(P2_URDF.format(extra=extra))
    return Case(["robot", "show", path], expected, pattern)


def gravity(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    magnitude = rng.choice([0.0, rng.uniform(1e-3, 1.99), 10 ** rng.uniform(1.31, 5)])
    direction = np.array([rng.gauss(0, 1) for _ in range(3)])
    g = magnitude * direction / np.linalg.norm(direction)
    path = case_dir / "robot.yaml"
    path.write_text(f"urdf: {ctx.urdf}\ngravity: [{float(g[0])!r}, {float(g[1])!r}, {float(g[2])!r}]\n")
    return Case(["robot", "show", path], "warned", "gravity")


def lock_value(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    value = rng.choice([1, -1]) * rng.uniform(2.81, 400.0)
    return Case(["robot", "show", "planar2", "--lock", f"joint{rng.randint(1, 2)}={value:.4f}"], "refused",
                "outside")


def time_resolution(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    cols = read_columns(ctx.log)
    cols["t"] = cols["t"] + 10 ** rng.uniform(12.5, 17)
    path = case_dir / "clock.csv"
    write_columns(path, cols)
    return Case(_identify(ctx, data=path), "refused", "stored to")


def signal_files(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    d = case_dir / "signals"
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(ctx.signals, d)
    signals = "t=time.txt,q=pos.txt,tau=trq.txt"
    extra, expected, pattern = [], "refused", ""
    kind = rng.choice(["nan_reject", "nan_drop", "widths", "constant_time", "gzip", "bzip2", "binary"])
    if kind in ("nan_reject", "nan_drop"):
        q = np.loadtxt(d / "pos.txt")
        q[rng.randrange(len(q)), rng.randrange(2)] = np.nan
        np.savetxt(d / "pos.txt", q)
        extra = ["--nan", "reject" if kind == "nan_reject" else "drop"]
        expected, pattern = ("refused", "NaN") if kind == "nan_reject" else ("read", "")
        if kind == "nan_drop":
            def dropped():
                cols = read_columns(case_dir / "c.csv")
                return None if len(cols["t"]) == len(q) - 1 and not np.isnan(cols["q1"]).any() \
                    and not np.isnan(cols["q2"]).any() else "the NaN row was not dropped"
            return Case(["convert", d, "--out", case_dir / "c.csv", "--signals", signals, *extra], expected, "",
                        dropped)
    elif kind == "widths":
        tau = np.loadtxt(d / "trq.txt")
        np.savetxt(d / "trq.txt", np.column_stack([tau] + [tau[:, :1]] * rng.randint(1, 3)))
        pattern = "columns"
    elif kind == "constant_time":
        np.savetxt(d / "time.txt", np.full(len(np.loadtxt(d / "time.txt")), rng.uniform(-1e3, 1e3)))
        pattern = "time stamp"
    elif kind in ("gzip", "bzip2"):
        name = rng.choice(["time.txt", "pos.txt", "trq.txt"])
        packed = (gzip.compress if kind == "gzip" else bz2.compress)((d / name).read_bytes())
        (d / name).write_bytes(packed)
        pattern = "compressed"
    else:
        name = rng.choice(["time.txt", "pos.txt", "trq.txt"])
        (d / name).write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(64, 4000))) + b"\x00\xff")
        pattern = "binary|UTF-8|NUL"
    return Case(["convert", d, "--out", case_dir / "c.csv", "--signals", signals, *extra], expected, pattern)


def same_file(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    kind = rng.choice(["symlink", "hardlink", "dot"])
    first = case_dir / "log.csv"
    if not first.exists():
        shutil.copy(ctx.log, first)
    if kind == "symlink":
        second = case_dir / "link.csv"
        if not second.is_symlink():
            second.symlink_to(first.name)
    elif kind == "hardlink":
        second = case_dir / "hard.csv"
        if not second.exists():
            os.link(first, second)
    else:
        second = Path(str(case_dir) + "/./log.csv")
    order = [first, second] if rng.random() < 0.5 else [second, first]
    return Case(_identify(ctx, "--data", order[1], data=order[0]), "warned", "same file")


def limits_conflict(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    j = rng.randint(1, 6)
    key = rng.choice(["dq_max", "ddq_max"])
    option = "--" + key.replace("_", "-")
    if rng.random() < 0.5:
        path = case_dir / "limits.yaml"
        path.write_text(f"joints:\n  joint{j}: {{{key}: {rng.uniform(0.5, 2):.3f}}}\n  {j}: {{{key}: "
                        f"{rng.uniform(0.5, 2):.3f}}}\n")
        extra = ["--limits", path]
    else:
        extra = [option, f"{j}:{rng.uniform(0.5, 2):.3f}", option, f"joint{j}:{rng.uniform(0.5, 2):.3f}"]
    return Case(["excite", "evaluate", "-r", "er3a", "--trajectory", "thesis-table-4.1", *extra], "refused",
                "twice|both name")


def output_in_input(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    where = rng.choice(["report", "signals", "data_dir", "fleet"])
    if where == "report":
        target = ctx.report / rng.choice(["result_ols.json", "train.csv"])
        return Case(["report", "--from", ctx.report, "--out", target], "refused", "same file")
    if where == "signals":
        d = case_dir / "signals"
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(ctx.signals, d)
        target = d / rng.choice(["time.txt", "pos.txt", "trq.txt"])
        return Case(["convert", d, "--out", target, "--signals", "t=time.txt,q=pos.txt,tau=trq.txt"], "refused",
                    "same file")
    if where == "data_dir":
        target = ctx.dataset / rng.choice(["pred.parquet", "log2.parquet", "PRED.PARQUET"])  # read by --data DIR next
        return Case(["predict", "-r", "planar2", "--params", ctx.result, "--data", ctx.dataset, "--out", target],
                    "refused", "data set")
    # a fleet ROOT reads every Parquet file below it whose path has no part starting with '.' or '_'
    target = ctx.fleet / rng.choice(["res.parquet", "robot=r000/res.parquet", "robot=r000/date=2026-01-05/r.parquet",
                                     "results/fleet.parquet", "robot=r001/Res.Parquet"])
    return Case(["fleet", "identify", ctx.fleet, "--workers", "1", "--out", target], "refused", "data set")


def write_bag(path: Path, header, receive, names=("joint1", "joint2"), q=None, dq=None, tau=None) -> Path:
    """A ROS 1 bag of JointState messages with header stamps ``header`` and receive times
    ``receive`` [s]; q, dq, tau (count, len(names)) default to a slow motion, no velocity and
    constant efforts."""
    from rosbags.rosbag1 import Writer
    from rosbags.typesys import Stores, get_typestore

    count = len(header)
    k = np.arange(count)
    q = np.column_stack([np.sin(k / 9), np.cos(k / 7)]) if q is None else np.asarray(q, float)
    dq = np.zeros((count, len(names))) if dq is None else np.asarray(dq, float)
    tau = np.tile(np.arange(1.0, len(names) + 1), (count, 1)) if tau is None else np.asarray(tau, float)
    store = get_typestore(Stores.ROS1_NOETIC)
    js, head, stamp = (store.types[t] for t in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header",
                                                "builtin_interfaces/msg/Time"))
    if path.exists():
        path.unlink()
    with Writer(path) as writer:
        conn = writer.add_connection("/joint_states", js.__msgtype__, typestore=store)
        for i in range(count):
            ns = int(round(header[i] * 1e9))
            msg = js(header=head(seq=i, stamp=stamp(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
                     name=list(names), position=q[i], velocity=dq[i], effort=tau[i])
            writer.write(conn, int(round(receive[i] * 1e9)), store.serialize_ros1(msg, js.__msgtype__))
    return path


def bag_stamps(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    count = rng.randint(40, 300)
    t = np.arange(count) * rng.choice([0.001, 0.01, 0.02])
    restart = rng.random() < 0.5
    if restart:  # the clock restarts once or twice: segments
        cuts = sorted(rng.sample(range(5, count - 5), rng.randint(1, 2)))
        header = np.concatenate([t[a:b] - t[a] for a, b in zip([0, *cuts], [*cuts, count])]) + rng.uniform(0, 100)
    else:  # every message one stamp
        header = np.full(count, rng.uniform(1.0, 1e9))
    path = write_bag(case_dir / "run.bag", header, 1e9 + t)
    argv = ["convert", path, "-r", "planar2", "--out", case_dir / "c.csv"]
    if not restart:
        return Case(argv, "refused", "same header stamp")

    def segments_written():
        cols = read_columns(case_dir / "c.csv")
        labels = cols.get("segment")
        if labels is None or len(np.unique(labels)) != len(cuts) + 1:
            return f"segments {None if labels is None else np.unique(labels).tolist()} for {len(cuts)} restart(s)"
        if any(np.any(np.diff(cols["t"][labels == s]) <= 0) for s in np.unique(labels)):
            return "time not increasing inside a segment"
        return None

    return Case(argv, "read", "", segments_written)


def bag_joints(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    """convert --joints naming a joint twice, or leaving out joints of --robot (the file would claim
    to be a log of the robot without them)."""
    t = np.arange(rng.randint(20, 80)) * 0.01
    path = write_bag(case_dir / "j.bag", 50.0 + t, 1e9 + t)
    j, other = rng.sample(["joint1", "joint2"], 2)
    if rng.random() < 0.5:
        joints = rng.choice([f"{j},{j}", f"{j},{other},{j}", f" {j} ,{j}"])
        extra = rng.choice([[], ["-r", "planar2"]])
        return Case(["convert", path, "--out", case_dir / "c.csv", "--joints", joints, *extra], "refused", "twice")
    return Case(["convert", path, "--out", case_dir / "c.csv", "--joints", j, "-r", "planar2"], "refused",
                f"leaves out.*{other}")


def lowpass_nyquist(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    # the log is at 100 Hz: at or above Nyquist, or just under it (a Butterworth filter there took
    # ~1900 / (1 - 2 fc / fs) samples to settle: a traceback or an exhausted memory)
    cutoff = 50.0 * rng.choice([1.0, rng.uniform(1.0, 100.0), rng.uniform(0.98, 1.0), 1.0 - 1e-9])
    if rng.random() < 0.5:
        return Case(["identify", "-r", "planar2", "--data", ctx.log, "--out", case_dir / "r.json", "--lowpass",
                     f"{cutoff:.6g}"], "warned", "Nyquist")
    return Case(["diagnose", "-r", "planar2", "--data", ctx.log, "--lowpass", f"{cutoff:.6g}"], "warned", "Nyquist")


def pattern_characters(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    """An existing log whose name holds glob characters ([ ], *, ?) is that file, never a pattern:
    a decoy that the pattern would match (not a log) must not be read."""
    name, decoy = rng.choice([("log[1].csv", "log1.csv"), ("run*.csv", "run_2.csv"), ("a?b.csv", "axb.csv"),
                              ("[ab].csv", "a.csv"), ("x[!y].csv", "xz.csv")])
    shutil.copy(ctx.log, case_dir / name)
    (case_dir / decoy).write_text("not,a,log\n1,2,3\n")
    out = case_dir / "r.json"
    if out.exists():
        out.unlink()
    return Case(["identify", "-r", "planar2", "--data", case_dir / name, "--out", out, "--lowpass", "10"], "read",
                "", lambda: None if out.exists() else "no result written")


def missing_path(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    """An input that does not exist is named as such (not a library's text: "The following paths
    are missing: [PosixPath(...)]", not "error: missing.parquet")."""
    stem = rng.choice(["missing", "no such", "gone/deeper", "x"])
    which = rng.choice(["data", "bag_data", "params", "fleet_drift", "report_from", "robot", "trajectory",
                        "convert_bag", "body_data", "obstacles", "limits"])
    ext = {"data": rng.choice([".csv", ".parquet"]), "bag_data": rng.choice([".bag", ".mcap", ".db3"]),
           "params": ".json", "fleet_drift": ".parquet", "report_from": "", "robot": rng.choice([".urdf", ".yaml"]),
           "trajectory": ".json", "convert_bag": rng.choice([".bag", ".mcap", ".db3"]), "body_data": ".csv",
           "obstacles": ".yaml", "limits": ".yaml"}[which]
    gone = case_dir / (stem + ext)
    argv = {
        "data": ["identify", "-r", "planar2", "--data", gone, "--out", case_dir / "r.json"],
        "bag_data": ["identify", "-r", "planar2", "--data", gone, "--out", case_dir / "r.json"],
        "params": ["predict", "-r", "planar2", "--params", gone, "--data", ctx.log, "--out", case_dir / "p.csv"],
        "fleet_drift": ["fleet", "drift", gone, "--out", case_dir / "drift"],
        "report_from": ["report", "--from", gone, "--out", case_dir / "r.html"],
        "robot": ["robot", "show", gone],
        "trajectory": ["excite", "evaluate", "-r", "planar2", "--trajectory", gone],
        "convert_bag": ["convert", gone, "--out", case_dir / "c.csv"],
        "body_data": ["multibody", "identify", "-r", "kr500", "--body-data", gone, "--out", case_dir / "m.json"],
        "obstacles": ["excite", "optimize", "-r", "planar2", "--out", case_dir / "t.json", "--obstacles", gone],
        "limits": ["excite", "optimize", "-r", "planar2", "--out", case_dir / "t.json", "--limits", gone],
    }[which]
    return Case(argv, "refused", f"(not found|no such file).*{re.escape(gone.name)}|{re.escape(gone.name)}.*"
                                 "(not found|no such file)")


def unknown_name(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    """An option naming a parameter or joint the model does not have, refused before any work
    (cycles groups --parameters was checked only after the whole study: on a log without cycles
    the user learnt of the typo last, and a ZeroDivisionError before that)."""
    name = rng.choice(["NOPE", "joint9", "Fv9", "link1", "q1"])
    which = rng.choice(["parameters", "joints", "lock", "dq_max", "rename"])
    if which == "rename":  # a source column the log does not have (was ignored without a word)
        column = "pos1" if name == "q1" else name
        return Case(_identify(ctx, "--rename", f"{column}=q{rng.randint(1, 2)}"), "refused",
                    f"no column '{column}' in the file")
    if which == "parameters":  # ctx.log has no cycle column: the name must be refused first
        known = rng.sample(["Fv1", "Fc2", "mx2"], rng.randint(0, 2))
        value = ",".join(known + [name])
        return Case(["cycles", "groups", "-r", "planar2", "-d", ctx.log, "--parameters", value, "--figure",
                     case_dir / "g.png"], "refused", f"not base parameter.*{name}|{name}.*not base parameter")
    if which == "joints":
        return Case(["robot", "show", "planar2", "--joints", f"joint1,{name}"], "refused", f"no actuated joint '{name}'")
    if which == "lock":
        return Case(["robot", "show", "planar2", "--lock", f"{name}=0.1"], "refused", f"cannot lock.*{name}")
    return Case(["excite", "evaluate", "-r", "er3a", "--trajectory", "thesis-table-4.1", "--dq-max", f"{name}:1"],
                "refused", f"no joint '{name}'")


def text_field(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    """A robot YAML name or description that is a list, a mapping, a boolean or empty (``name: [a,
    b]`` became the robot "['a', 'b']"), in a DH table (robot, joint or link name) or over a URDF."""
    value = rng.choice(["[a, b]", "{x: 1}", "true", "''", "[]", "' '"])
    where = rng.choice(["robot", "description", "joint", "link", "urdf"])
    name = {"robot": value, "description": "d", "joint": "n", "link": "n", "urdf": "n"}
    if where == "urdf":
        text = f"urdf: {ctx.urdf}\n{rng.choice(['name', 'description'])}: {value}\n"
    else:
        joint = f", name: {value}" if where == "joint" else ""
        link = f"name: {value}, " if where == "link" else ""
        text = (f"name: {name['robot']}\n" + (f"description: {value}\n" if where == "description" else "") +
                "convention: mdh\njoints:\n"
                f"  - {{type: revolute, a: 0.0, alpha: 0.0, d: 0.3, theta: 0.0{joint}}}\n"
                "  - {type: revolute, a: 0.4, alpha: 0.0, d: 0.0, theta: 0.0}\n"
                f"links:\n  - {{{link}mass: 2.0, com: [0.1, 0.0, 0.0], inertia: [0.02, 0.0, 0.0, 0.02, 0.0, 0.01]}}\n"
                "  - {mass: 1.0, com: [0.1, 0.0, 0.0], inertia: [0.01, 0.0, 0.0, 0.01, 0.0, 0.005]}\n")
    path = case_dir / "robot.yaml"
    path.write_text(text)
    return Case(["robot", "show", path], "refused", "must be a text|is empty")


def report_two_robots(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    """report --from a directory whose two results name different robots: refused naming both files
    (the foreign result_ols.json was once reported as a problem of result_pc.json)."""
    d = case_dir / "report"
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(ctx.report, d)
    other = rng.choice(["er3a", "kr500", "planar6", "my-arm.urdf"])
    foreign = rng.choice(["result_ols.json", "result_pc.json"])
    own = "result_pc.json" if foreign == "result_ols.json" else "result_ols.json"
    shutil.copy(ctx.result, d / own)
    (d / foreign).write_text(json.dumps({**json.loads(ctx.result.read_text()), "robot": other}))
    return Case(["report", "--from", d, "--out", case_dir / "r.html"], "refused",
                f"different robots.*{foreign} \\({re.escape(other)}\\)")


def time_backwards(rng: random.Random, ctx: Context, case_dir: Path) -> Case:
    """A log whose clock restarts or steps back, without --segments: refused at the row, with the
    two times as numbers (once 't = np.float64(0.0) after np.float64(5.99)')."""
    cols = read_columns(ctx.log)
    k = rng.randrange(20, len(cols["t"]) - 20)
    back = rng.choice([cols["t"][k], rng.uniform(0.001, 0.5)])  # a restart at t0, or one step back
    cols["t"] = np.concatenate([cols["t"][:k], cols["t"][k:] - back])
    path = write_columns(case_dir / "restart.csv", cols)
    command = rng.choice(["identify", "predict"])
    argv = _identify(ctx, data=path) if command == "identify" else \
        ["predict", "-r", "planar2", "--params", ctx.result, "--data", path, "--out", case_dir / "p.csv"]
    return Case(argv, "refused", f"time goes backwards at row {k + 1}")


KINDS = {
    "repeated_item": repeated_item,
    "number_list": number_list,
    "covariance": covariance,
    "drive_value": drive_value,
    "transmission": transmission_kind,
    "gravity": gravity,
    "lock_value": lock_value,
    "time_resolution": time_resolution,
    "signal_files": signal_files,
    "same_file": same_file,
    "limits_conflict": limits_conflict,
    "output_in_input": output_in_input,
    "bag_stamps": bag_stamps,
    "lowpass_nyquist": lowpass_nyquist,
    "bag_joints": bag_joints,
    "pattern_characters": pattern_characters,
    "missing_path": missing_path,
    "unknown_name": unknown_name,
    "text_field": text_field,
    "report_two_robots": report_two_robots,
    "time_backwards": time_backwards,
}


def write_columns(path: Path, cols: dict[str, np.ndarray]) -> Path:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    pacsv.write_csv(pa.table({k: pa.array(v) for k, v in cols.items()}), path)
    return path


# Python and NumPy reprs in a message ("t = np.float64(0.0)", "[PosixPath('a.bag')]"): never what a user typed
INTERNAL_REPR = re.compile(r"np\.(float|int|uint|bool|str)\w*\(|array\(|PosixPath\(|<\w+ object at 0x")


def run(kind: str, seed: int, ctx: Context, case_dir: Path | None = None) -> tuple[str, str, Case]:
    """(expected, observed, case) of one seeded case of ``kind`` (module docstring)."""
    from typer.testing import CliRunner

    from dynid.cli.main import app

    case_dir = Path(case_dir or ctx.directory / f"{kind}-{seed}")
    case_dir.mkdir(parents=True, exist_ok=True)
    case = KINDS[kind](random.Random(seed), ctx, case_dir)
    result = CliRunner().invoke(app, [str(a) for a in case.argv])
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error: ")]
    warnings_ = [ln for ln in lines if ln.startswith("warning: ")]
    pattern = re.compile(case.pattern, re.I) if case.pattern else None
    internals = [ln for ln in errors + warnings_ if INTERNAL_REPR.search(ln)]
    if internals:  # a message that shows the program's own objects instead of the user's values
        observed = f"other: {internals[0][:200]}"
    elif result.exit_code == 2 and len(errors) == 1 and lines[-1].startswith("error: ") \
            and "Traceback" not in result.output:
        observed = "refused" if pattern is None or pattern.search(errors[0]) else f"other: {errors[0][:200]}"
    elif result.exit_code == 0:
        matched = [w for w in warnings_ if pattern is None or pattern.search(w)]
        observed = "warned" if matched and case.expected == "warned" else \
            "read" if case.expected == "read" else "silent"
        problem = case.check() if observed == "read" and case.check is not None else None
        if problem:
            observed = f"other: read, but {problem}"
    else:
        observed = f"other: exit {result.exit_code} {result.output[-300:]!r} {result.exception!r}"
    return case.expected, observed, case
