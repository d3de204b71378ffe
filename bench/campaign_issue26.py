"""Replays the cases of issue 26 (the second outside campaign's 70 failures) against the installed
``dynid`` and counts OK / BAD. Each case runs the command line in a subprocess, as a user would:

- ``error``: exit code 2, exactly one ``error:`` line (``warning:`` lines may come before it), no
  traceback; optionally the error line must match a pattern (a misleading message is BAD);
- ``warn``: exit code 0 and a ``warning:`` line matching a pattern, no traceback;
- ``either``: one of the two;
- a case may add its own check (an input left intact, the time stamps written...).

    .venv/bin/python bench/campaign_issue26.py [--work DIR] [--only ID,ID] [--list]

The fixtures (simulated logs, a demo directory, a small fleet, bags, robot files) are written
into --work (default: a fresh temporary directory) and kept there when --work is given, so a
second run starts at once. The demo takes about a minute the first time.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fuzz_kinds import P2_URDF, transmission, write_bag  # noqa: E402  (the suite's robot files and bags)
DYNID = str(Path(sys.executable).parent / "dynid")
PYTHON = sys.executable


@dataclass
class Case:
    id: str
    group: str
    argv: list
    expect: str = "error"          # error | warn | either | ok
    pattern: str = ""              # the error/warning line must match (case-insensitive)
    env: dict = field(default_factory=dict)
    check: object = None           # f(work, proc) -> str | None (None: fine; text: why BAD)
    setup: object = None           # f(work) before the run
    shell: object = ""             # run this shell command (or f() -> it) instead of argv (closed stdout...)
    timeout: float = 300.0
    stdin: object = None


def run(cmd, work, env=None, timeout=600.0, stdin=None, shell=False):
    full = {**os.environ, "COLUMNS": "200", **(env or {})}
    for k, v in list(full.items()):
        if v is None:
            del full[k]
    return subprocess.run(cmd, cwd=work, env=full, capture_output=True, text=True, timeout=timeout,
                          stdin=stdin if stdin is not None else subprocess.DEVNULL, shell=shell)


# -- fixtures --------------------------------------------------------------------------------

TWO_JOINT_YAML = """name: {name}
convention: mdh
{extra}joints:
  - {{type: revolute, a: 0.0, alpha: 0.0, d: 0.3, theta: 0.0}}
  - {{type: revolute, a: 0.4, alpha: 0.0, d: 0.0, theta: 0.0}}
links:
  - {{mass: 2.0, com: [0.1, 0.0, 0.0], inertia: [0.02, 0.0, 0.0, 0.02, 0.0, 0.01]}}
  - {{mass: 1.0, com: [0.1, 0.0, 0.0], inertia: [0.01, 0.0, 0.0, 0.01, 0.0, 0.005]}}
limits:
  - {{q_min: -2.9, q_max: 2.9, dq_max: 3.0, tau_max: {tau}}}
  - {{q_min: -2.9, q_max: 2.9, dq_max: 3.0, tau_max: {tau}}}
"""


def read_csv(path):
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(path)
    return {n: table.column(n).to_numpy() for n in table.column_names}


def fixtures(work: Path) -> None:
    def dynid(*args):
        proc = run([DYNID, *map(str, args)], work)
        if proc.returncode != 0:
            raise SystemExit(f"fixture failed: dynid {' '.join(map(str, args))}\n{proc.stdout}\n{proc.stderr}")

    if not (work / "p2.csv").exists():
        dynid("simulate", "-r", "planar2", "--out", "p2.csv", "--duration", "20", "--seed", "1")
    if not (work / "p2.json").exists():
        dynid("identify", "-r", "planar2", "--data", "p2.csv", "--out", "p2.json")
    if not (work / "p2_pc.json").exists():
        dynid("identify", "-r", "planar2", "--data", "p2.csv", "--estimator", "pc", "--out", "p2_pc.json")
    if not (work / "er.csv").exists():
        dynid("simulate", "-r", "er3a", "--out", "er.csv", "--duration", "10", "--seed", "2")
    if not (work / "er.json").exists():
        dynid("identify", "-r", "er3a", "--data", "er.csv", "--out", "er.json")
    if not (work / "demo" / "report.html").exists():
        shutil.rmtree(work / "demo", ignore_errors=True)
        dynid("demo", "--out", "demo")
    if not (work / "fleet" / "fleet.yaml").exists():
        dynid("fleet", "simulate", "--out", "fleet", "--robots", "2", "--days", "2", "--minutes", "0.2",
              "--rate", "100")
    # a log with one NaN row (predict must write the log's own time stamps)
    cols = read_csv(work / "p2.csv")
    names = list(cols)
    data = np.column_stack([cols[n] for n in names])
    nan = data.copy()
    nan[1000, names.index("tau1")] = np.nan
    nan[1000, names.index("q2")] = np.nan
    np.savetxt(work / "nan_row.csv", nan, delimiter=",", header=",".join(names), comments="", fmt="%.17g")
    # the same log with time stamps offset by 1e15 s
    off = data.copy()
    off[:, 0] += 1e15
    np.savetxt(work / "offset.csv", off, delimiter=",", header=",".join(names), comments="", fmt="%.17g")
    link = work / "p2_link.csv"
    if not link.is_symlink():
        link.symlink_to("p2.csv")
    shutil.copy(work / "p2.csv", work / "log[1].csv")
    # per-signal text files
    sig = work / "sig"
    sig.mkdir(exist_ok=True)
    t = cols["t"]
    np.savetxt(sig / "time.txt", t)
    np.savetxt(sig / "pos.txt", np.column_stack([cols["q1"], cols["q2"]]))
    np.savetxt(sig / "trq.txt", np.column_stack([cols["tau1"], cols["tau2"]]))
    np.savetxt(sig / "trq3.txt", np.column_stack([cols["tau1"], cols["tau2"], cols["tau2"]]))
    np.savetxt(sig / "zero_time.txt", np.zeros_like(t))
    q_nan = np.column_stack([cols["q1"], cols["q2"]])
    q_nan[500, 1] = np.nan
    np.savetxt(sig / "pos_nan.txt", q_nan)
    (sig / "time_gz.txt").write_bytes(gzip.compress((sig / "time.txt").read_bytes()))
    (sig / "time_bin.txt").write_bytes(bytes(range(256)) * 40)
    # bags: header stamps that restart; one receive time for every message
    n = 1200
    tb = np.arange(n) * 0.01
    qb = np.column_stack([np.sin(tb), np.cos(0.7 * tb)])
    dqb = np.column_stack([np.cos(tb), -0.7 * np.sin(0.7 * tb)])
    taub = np.column_stack([2 * np.sin(tb), np.cos(tb)])
    restart = np.concatenate([100.0 + tb[:600], 100.0 + tb[:600]])
    write_bag(work / "restart.bag", restart, 1.7e9 + tb, q=qb, dq=dqb, tau=taub)
    write_bag(work / "onerecv.bag", 100.0 + tb, np.full(n, 1.7e9), q=qb, dq=dqb, tau=taub)
    write_bag(work / "plain.bag", 100.0 + tb, 1.7e9 + tb, q=qb, dq=dqb, tau=taub)
    # robot files
    (work / "p2.urdf").write_text(P2_URDF.format(extra=""))
    for name, extra in {
        "red_huge.urdf": transmission("t1", "joint1", "1e300"),
        "red_empty.urdf": transmission("t1", "joint1", None),
        "tr_dup.urdf": transmission("t1", "joint1", "50") + "\n" + transmission("t1b", "joint1", "100"),
        "tr_missing.urdf": transmission("t9", "joint9", "50"),
    }.items():
        (work / name).write_text(P2_URDF.format(extra=extra))
    (work / "g_zero.yaml").write_text(TWO_JOINT_YAML.format(name="g0", extra="gravity: [0, 0, 0]\n", tau=50))
    (work / "g_mm.yaml").write_text("urdf: p2.urdf\ngravity: [0, 0, -9810]\n")
    (work / "g_zero_desc.yaml").write_text("urdf: p2.urdf\ngravity: [0, 0, 0]\n")
    (work / "name_list.yaml").write_text(TWO_JOINT_YAML.format(name="[a, b]", extra="", tau=50))
    (work / "kt0.yaml").write_text("urdf: p2.urdf\ndrives:\n  joint1: {gear_ratio: 100, torque_constant: 0}\n")
    (work / "coupling_dup.yaml").write_text(
        "urdf: p2.urdf\ntransmission:\n  coupling: [{motor: joint2, joint: joint1, ratio: 2},"
        " {motor: joint2, joint: joint1, ratio: 3}]\n")
    (work / "weak.yaml").write_text(TWO_JOINT_YAML.format(name="weak", extra="", tau="1.0e-5"))
    # excitation limits files and a large obstacle scene
    (work / "lim_tiny.yaml").write_text("all: {q_min: -1.0e-9, q_max: 1.0e-9, dq_max: 1.0e-9, ddq_max: 1.0e-9}\n")
    (work / "lim_both.yaml").write_text("joints:\n  joint1: {dq_max: 1.0}\n  1: {dq_max: 2.0}\n")
    (work / "lim_wide.yaml").write_text("all: {q_min: -100, q_max: 100}\n")
    rng = np.random.default_rng(0)
    for name, count, low, high in (("obstacles2000.yaml", 2000, [0.3, -0.9, 0.05], [1.0, 0.9, 1.0]),
                                   ("obstacles2000_far.yaml", 2000, [1.5, -2, 0.2], [3, 2, 2]),
                                   ("obstacles300.yaml", 300, [0.6, -0.9, 0.05], [1.0, 0.9, 1.0])):
        boxes = "\n".join(f"  - {{name: b{k}, center: [{x:.3f}, {y:.3f}, {z:.3f}], size: [0.01, 0.01, 0.01]}}"
                          for k, (x, y, z) in enumerate(rng.uniform(low, high, size=(count, 3))))
        (work / name).write_text("floor: 0.0\nboxes:\n" + boxes + "\n")
    # results with edited covariances
    result = json.loads((work / "p2.json").read_text())
    cov = np.asarray(result["covariance"])
    for name, edit in {"cov_none": "none", "cov_negative": None, "cov_asym": None, "cov_nan": None}.items():
        c = cov.copy()
        if name == "cov_negative":
            c[0, 0] = -abs(c[0, 0]) - 1e-6
        elif name == "cov_asym":
            c[0, 1] += 1e-3
        elif name == "cov_nan":
            c[1, 1] = np.nan
        value = edit if edit is not None else [[float(x) for x in row] for row in c]
        (work / f"{name}.json").write_text(json.dumps({**result, "covariance": value}))  # NaN as JSON's NaN
    # report directories: empty; a pc result of planar2 beside a foreign (er3a) least-squares result
    (work / "empty_dir").mkdir(exist_ok=True)
    mixed = work / "mixed"
    mixed.mkdir(exist_ok=True)
    shutil.copy(work / "p2_pc.json", mixed / "result_pc.json")
    shutil.copy(work / "er.json", mixed / "result_ols.json")


# -- checks ----------------------------------------------------------------------------------

def unchanged(path, copy):
    def check(work, proc):
        if (work / path).read_bytes() != (work / copy).read_bytes():
            return f"{path} was overwritten"
        return None
    return check


def copy_setup(src, dst):
    def setup(work):
        if (work / dst).is_dir():
            shutil.rmtree(work / dst)
        if (work / src).is_dir():
            shutil.copytree(work / src, work / dst)
        else:
            shutil.copy(work / src, work / dst)
    return setup


def predict_keeps_time(work, proc):
    if proc.returncode != 0:
        return None  # an error line is checked by the expectation
    out, log = read_csv(work / "pred_nan.csv"), read_csv(work / "nan_row.csv")
    good = ~(np.isnan(log["q2"]) | np.isnan(log["tau1"]))
    t_out = out["t"]
    if len(t_out) == len(log["t"]) and np.array_equal(t_out, log["t"]):
        return None
    if len(t_out) == good.sum() and np.array_equal(t_out, log["t"][good]):
        return None
    return f"predict wrote {len(t_out)} rows whose t are not the log's own ({len(log['t'])} rows)"


def fleet_setup(work):
    for p in (work / "fleet").rglob("res*.parquet"):
        p.unlink()


def not_written(path):
    def check(work, proc):
        return f"{path} was written" if (work / path).exists() else None
    return check


def within(seconds):
    def check(work, proc):
        return f"ran {proc.elapsed:.0f} s, beyond {seconds} s" if proc.elapsed > seconds else None
    return check


def far_boxes_left_out(work, proc):
    if "2000 obstacle box(es) beyond the robot's reach" not in proc.stdout:
        return "the boxes out of reach were not named"
    return within(90)(work, proc)


def clean_stderr(work, proc):
    noise = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith(("warning:", "note:"))]
    return f"stderr noise: {noise[:2]}" if noise else None


def bag_segments(work, proc):
    if proc.returncode != 0:
        return None
    cols = read_csv(work / "restart.csv")
    if "segment" not in cols:
        return "no segment column"
    for s in np.unique(cols["segment"]):
        if np.any(np.diff(cols["t"][cols["segment"] == s]) <= 0):
            return f"t not increasing within segment {s}"
    return None


def cases() -> list[Case]:
    sig = ["convert", "sig", "--out"]
    p2 = ["-r", "planar2", "--data", "p2.csv"]
    ident = ["identify", *p2, "--out", "res.json"]
    ex = ["excite", "optimize", "--out", "traj.json", "--max-seconds", "60", "--starts", "1", "--generations", "3",
          "--popsize", "4", "--polish-iterations", "2"]
    return [
        # 1. a user's file overwritten
        Case("overwrite-signals", "1", ["convert", "sig_copy", "--out", "sig_copy/time.txt", "--signals",
                                        "t=time.txt,q=pos.txt,tau=trq.txt"],
             setup=lambda w: (copy_setup("sig", "sig_copy")(w), copy_setup("sig/time.txt", "time.bak")(w)),
             check=unchanged("sig_copy/time.txt", "time.bak"), pattern="same file as the input"),
        Case("overwrite-report-from", "1", ["report", "--from", "demo_copy", "--out", "demo_copy/train.csv"],
             setup=lambda w: (copy_setup("demo", "demo_copy")(w), copy_setup("demo/train.csv", "train.bak")(w)),
             check=unchanged("demo_copy/train.csv", "train.bak"), pattern="input"),
        Case("overwrite-fleet-dataset", "1", ["fleet", "identify", "fleet", "--workers", "1",
                                              "--out", "fleet/robot=r000/res.parquet"],
             setup=fleet_setup, check=not_written("fleet/robot=r000/res.parquet"), pattern="data set"),
        # 2. tracebacks
        Case("readonly-install", "2", [], expect="ok",
             shell=lambda: as_user_without_home(["identify", "-r", "planar2", "--data", "p2.csv", "--out", "ro.json",
                                                 "--lowpass", "10"])),
        Case("stdout-closed", "2", [], shell=f"{DYNID} robot show er3a >&-", pattern="standard output"),
        Case("scheduler-unreachable", "2", ["fleet", "identify", "fleet", "--scheduler", "tcp://10.255.255.1:8786",
                                            "--connect-timeout", "2", "--out", "fr.parquet"], pattern="scheduler", setup=fleet_setup,
             check=within(60)),
        Case("scheduler-not-an-address", "2", ["fleet", "identify", "fleet", "--scheduler", "not-an-address",
                                               "--out", "fr.parquet"], pattern="scheduler", check=within(20), setup=fleet_setup),
        Case("scheduler-http", "2", ["fleet", "identify", "fleet", "--scheduler", "http://127.0.0.1:80",
                                     "--out", "fr.parquet"], pattern="scheduler", check=within(20), setup=fleet_setup),
        Case("reduction-1e300", "2", ["robot", "show", "red_huge.urdf"], pattern="mechanicalReduction"),
        Case("cycles-groups-unknown-parameter", "2", ["cycles", "groups", "-r", "er3a", "--data", "demo/train.csv",
                                                      "--group", "late=2-6", "--parameters", "NOPE", "--figure", "f.png"],
             pattern="NOPE"),
        Case("draw-nan", "2", ["robot", "draw", "er3a", "--q", "nan,0,0,0,0,0", "--out", "d.png"], pattern="nan"),
        Case("predict-std-covariance-none", "2", ["predict", *p2[:2], "--params", "cov_none.json", "--data", "p2.csv",
                                                  "--std", "model", "--out", "pred.csv"], pattern="covariance"),
        # 3. a hang past its time limit
        Case("obstacles-2000", "3", [*ex[:4], "-r", "er3a", "--clearance", "0.02", "--obstacles", "obstacles2000.yaml",
                                     "--max-seconds", "20"], pattern="boxes", check=within(60), timeout=400),
        Case("obstacles-2000-far", "3", [*ex, "-r", "er3a", "--clearance", "0.02", "--obstacles",
                                         "obstacles2000_far.yaml"], expect="ok", check=far_boxes_left_out, timeout=400),
        Case("obstacles-300-max-seconds", "3", [*ex[:4], "-r", "er3a", "--clearance", "0.02", "--obstacles",
                                                "obstacles300.yaml", "--max-seconds", "15"], expect="either",
             pattern="max-seconds", check=within(45), timeout=400),
        # 4. documented and broken
        Case("csv-fifo", "4", [], expect="ok", shell=f"rm -f fifo.json; {DYNID} identify -r planar2 --data <(cat p2.csv) "
             "--out fifo.json",
             check=lambda w, p: None if (w / "fifo.json").exists() else "no result"),
        Case("csv-dev-stdin", "4", [], expect="ok", shell=f"rm -f stdin.json; cat p2.csv | {DYNID} identify -r planar2 "
             "--data /dev/stdin --out stdin.json", check=lambda w, p: None if (w / "stdin.json").exists() else "no result"),
        Case("bag-header-restart", "4", ["convert", "restart.bag", "-r", "planar2", "--out", "restart.csv"],
             expect="ok", check=bag_segments),
        Case("fleet-simulate-model-path", "4", [], expect="ok", shell=(
            "rm -rf fsim fsim_res.parquet && mkdir -p models && cp g_zero.yaml models/m.yaml && "
            f"{DYNID} fleet simulate --out fsim --robots 1 --days 1 --minutes 0.1 --rate 100 --model models/m.yaml "
            f"--no-temperature 2>/dev/null >/dev/null && {DYNID} fleet identify fsim --workers 1 --out fsim_res.parquet"),
             check=lambda w, p: None if "1 identified" in p.stdout else "the group was not identified"),
        Case("gravity-zero", "4", ["robot", "show", "g_zero.yaml"], expect="warn", pattern="gravity"),
        Case("gravity-mm", "4", ["robot", "show", "g_mm.yaml"], expect="warn", pattern="gravity"),
        # 5. exit 0 on nonsense or a silent conflict
        Case("negate-tau-tau", "5", [*ident, "--negate", "tau,tau"], pattern="tau"),
        Case("negate-tau-tau2", "5", [*ident, "--negate", "tau,tau2"], pattern="tau2"),
        Case("cv-folds-0", "5", [*ident, "--cv-folds", "0"], pattern="cv-folds"),
        Case("cv-folds-1", "5", [*ident, "--cv-folds", "1"], pattern="cv-folds"),
        Case("lowpass-nyquist-identify", "5", [*ident, "--lowpass", "400"], expect="either", pattern="nyquist"),
        Case("lowpass-nyquist-diagnose", "5", ["diagnose", *p2, "--lowpass", "400"], expect="either",
             pattern="nyquist"),
        Case("convert-nan-keep", "5", ["convert", "plain.bag", "--out", "c.csv", "--nan", "keep"], pattern="nan"),
        Case("convert-joints-twice", "5", ["convert", "plain.bag", "--out", "c.csv", "--joints", "joint1,joint1"],
             pattern="joint1"),
        Case("convert-joints-robot", "5", ["convert", "plain.bag", "--out", "c.csv", "--joints", "joint1",
                                           "-r", "planar2"], expect="either", pattern="joint2"),
        Case("signals-mismatched-columns", "5", [*sig, "c.csv", "--signals", "t=time.txt,q=pos.txt,tau=trq3.txt"],
             pattern="column"),
        Case("signals-nan-drop", "5", [*sig, "c_drop.csv", "--signals", "t=time.txt,q=pos_nan.txt,tau=trq.txt",
                                       "--nan", "drop"], expect="ok",
             check=lambda w, p: None if p.returncode or not np.isnan(read_csv(w / "c_drop.csv")["q2"]).any()
             else "NaN row kept"),
        Case("signals-nan-reject", "5", [*sig, "c.csv", "--signals", "t=time.txt,q=pos_nan.txt,tau=trq.txt",
                                         "--nan", "reject"], pattern="nan"),
        Case("signals-zero-time", "5", [*sig, "c.csv", "--signals", "t=zero_time.txt,q=pos.txt,tau=trq.txt"],
             pattern="time"),
        Case("signals-q-twice", "5", [*sig, "c.csv", "--signals", "t=time.txt,q=pos.txt,q=pos.txt"],
             pattern="twice"),
        Case("data-same-file-symlink", "5", ["identify", "-r", "planar2", "--data", "p2.csv", "--data",
                                             "p2_link.csv", "--out", "res.json"], expect="either", pattern="same file"),
        Case("time-offset-1e15", "5", ["identify", "-r", "planar2", "--data", "offset.csv", "--out", "res.json"],
             pattern="time"),
        Case("predict-std-negative-variance", "5", ["predict", "-r", "planar2", "--params", "cov_negative.json",
                                                    "--data", "p2.csv", "--std", "model", "--out", "pred.csv"],
             pattern="covariance"),
        Case("predict-std-asymmetric", "5", ["predict", "-r", "planar2", "--params", "cov_asym.json",
                                             "--data", "p2.csv", "--std", "model", "--out", "pred.csv"],
             pattern="symmetric"),
        Case("excite-limits-1e-9", "5", [*ex, "-r", "planar2", "--limits", "lim_tiny.yaml"], expect="either",
             pattern="limit"),
        Case("excite-limits-name-and-number", "5", [*ex, "-r", "planar2", "--limits", "lim_both.yaml"],
             pattern="joint1"),
        Case("excite-limits-wide", "5", [*ex, "-r", "planar2", "--limits", "lim_wide.yaml"], expect="either",
             pattern="limit"),
        Case("payload-same-file", "5", ["payload", "identify", "-r", "planar2", "-p", "p2.json", "--data", "p2.csv",
                                        "--unloaded", "p2.csv", "--out", "pay.json"], pattern="both with the load"),
        Case("report-empty-dir", "5", ["report", "--from", "empty_dir", "--out", "empty.html"], pattern="empty_dir"),
        Case("cycles-skip-first-beyond", "5", ["cycles", "stats", "-p", "demo/result_ols.json", "--skip-first", "99"],
             expect="either", pattern="skip-first"),
        Case("torque-constant-zero", "5", ["robot", "show", "kt0.yaml"], pattern="torque_constant"),
        Case("coupling-duplicated", "5", ["robot", "show", "coupling_dup.yaml"], pattern="twice"),
        Case("urdf-transmission-duplicated", "5", ["robot", "show", "tr_dup.urdf"], pattern="joint1"),
        Case("urdf-transmission-unknown-joint", "5", ["robot", "show", "tr_missing.urdf"], expect="either",
             pattern="joint9"),
        Case("urdf-reduction-empty", "5", ["robot", "show", "red_empty.urdf"], pattern="mechanicalReduction"),
        Case("yaml-name-list", "5", ["robot", "show", "name_list.yaml"], pattern="name"),
        Case("lock-twice", "5", ["robot", "show", "planar2", "--lock", "joint2=0.1,joint2=0.5"], pattern="joint2"),
        Case("lock-outside-limits", "5", ["robot", "show", "er3a", "--lock", "joint2=90"], pattern="limit"),
        Case("example-data-missing", "5", ["robot", "show", "example:ur5"],
             env={"DYNID_EXAMPLE_ROBOT_DATA": "/nonexistent-dynid-erd"}, expect="either", pattern="DYNID_EXAMPLE_ROBOT_DATA"),
        Case("example-data-file", "5", ["robot", "show", "example:ur5"],
             env={"DYNID_EXAMPLE_ROBOT_DATA": "p2.csv"}, expect="either", pattern="DYNID_EXAMPLE_ROBOT_DATA"),
        # 6. misleading messages
        Case("bag-one-receive-time", "6", ["convert", "onerecv.bag", "-r", "planar2", "--stamp", "receive",
                                           "--out", "c.csv"], pattern="receive"),
        Case("signals-gzip", "6", [*sig, "c.csv", "--signals", "t=time_gz.txt,q=pos.txt,tau=trq.txt"],
             pattern="gzip"),
        Case("signals-binary", "6", [*sig, "c.csv", "--signals", "t=time_bin.txt,q=pos.txt,tau=trq.txt"],
             pattern="binary|text"),
        Case("predict-std-covariance-nan", "6", ["predict", "-r", "planar2", "--params", "cov_nan.json",
                                                 "--data", "p2.csv", "--std", "model", "--out", "pred.csv"],
             pattern="nan"),
        Case("report-foreign-result", "6", ["report", "--from", "mixed", "--out", "mixed.html"],
             pattern="result_ols.json"),
        Case("fleet-drift-missing", "6", ["fleet", "drift", "missing.parquet", "--out", "drift_out"],
             pattern="not found|no such"),
        Case("matplotlib-home", "6", [], expect="ok", env={"XDG_CONFIG_HOME": None},
             shell=lambda: as_user_without_home(["robot", "draw", "er3a", "--out", "draw.png"]), check=clean_stderr),
        Case("path-with-brackets", "6", ["identify", "-r", "planar2", "--data", "log[1].csv", "--out", "br.json"],
             expect="ok"),
        # 7. still open from the first campaign
        Case("excite-torque-limits-prior", "7", [*ex, "-r", "er3a", "--torque-limits", "--tau-max", "0.0001",
                                                 "--ddq-max", "5"], pattern="x tau_max"),
        Case("excite-torque-limits-weak-robot", "7", [*ex, "-r", "weak.yaml", "--torque-limits"], expect="either"),
        Case("excite-dq-max-1e-9", "7", [*ex, "-r", "planar2", "--dq-max", "1:1e-9"], expect="either",
             pattern="joint1|dq_max|velocity"),
        Case("predict-nan-row", "7", ["predict", "-r", "planar2", "--params", "p2.json", "--data", "nan_row.csv",
                                      "--out", "pred_nan.csv"], expect="ok", check=predict_keeps_time),
    ]


READONLY = r"""
set -e
if [ -d ro ]; then chmod -R u+w ro; rm -rf ro; fi
mkdir -p ro/home ro/pkg && cp -r {src} ro/pkg/ && find ro/pkg -name __pycache__ -prune -exec rm -rf {{}} +
chmod -R a-w ro/pkg ro/home
{prefix} env -u XDG_CACHE_HOME -u NUMBA_CACHE_DIR -u MPLCONFIGDIR HOME=$PWD/ro/home PYTHONPATH=$PWD/ro/pkg \
  PYTHONDONTWRITEBYTECODE=1 {python} -c "import sys; sys.argv = ['dynid', {args}]; \
import dynid; assert dynid.__file__.startswith('$PWD/ro/pkg'), dynid.__file__; from dynid.cli.main import main; main()"
"""


def as_user_without_home(args: list[str]) -> str:
    """A shell command running dynid ARGS from a read-only copy of the package, with a HOME that
    cannot be written (as root: without the capability to ignore file modes)."""
    prefix = ""
    if os.geteuid() == 0:  # root ignores file modes unless it gives up CAP_DAC_OVERRIDE
        prefix = "setpriv --bounding-set=-dac_override,-dac_read_search --inh-caps=-dac_override,-dac_read_search"
    package = subprocess.run([PYTHON, "-c", "import dynid, os; print(os.path.dirname(dynid.__file__))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    return READONLY.format(src=package, prefix=prefix, python=PYTHON, args=", ".join(repr(a) for a in args))


def judge(case: Case, proc, work: Path) -> str | None:
    err = proc.stderr
    if "Traceback" in err or "Exception ignored" in err:
        tail = [ln for ln in err.splitlines() if ln.strip()][-1:]
        return f"traceback: {tail}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    warns = [ln for ln in lines if ln.startswith("warning:")]
    pat = re.compile(case.pattern, re.I) if case.pattern else None
    is_error = proc.returncode == 2 and len(errors) == 1 and lines and lines[-1].startswith("error:")
    is_warn = proc.returncode == 0 and any(pat is None or pat.search(w) for w in warns) and bool(warns)
    why = None
    if case.expect == "error":
        if not is_error:
            why = f"exit {proc.returncode}, {len(errors)} error line(s): {(errors or lines or [''])[-1][:150]}"
        elif pat and not pat.search(errors[0]):
            why = f"misleading: {errors[0][:200]}"
    elif case.expect == "warn":
        if not is_warn:
            why = f"exit {proc.returncode}, no matching warning: {(errors or warns or [''])[-1][:150]}"
    elif case.expect == "either":
        if is_error and pat and not pat.search(errors[0]):
            why = f"misleading: {errors[0][:200]}"
        elif not (is_error or is_warn):
            why = f"exit {proc.returncode}, no error or matching warning: {(errors or warns or [''])[-1][:150]}"
    elif case.expect == "ok" and proc.returncode != 0:
        why = f"exit {proc.returncode}: {(lines or [''])[-1][:200]}"
    if why is None and case.check is not None:
        why = case.check(work, proc)
    return why


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    all_cases = cases()
    if args.list:
        for c in all_cases:
            print(f"{c.group} {c.id}")
        return
    work = (args.work or Path(tempfile.mkdtemp(prefix="dynid-campaign-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    fixtures(work)
    print(f"fixtures in {work} ({time.time() - t0:.0f} s)")
    chosen = [c for c in all_cases if not args.only or c.id in args.only.split(",")]
    bad = []
    for case in chosen:
        if case.setup is not None:
            case.setup(work)
        start = time.time()
        try:
            if case.shell:
                cmd = case.shell() if callable(case.shell) else case.shell
                proc = run(["bash", "-c", cmd], work, case.env, case.timeout)
            else:
                proc = run([DYNID, *map(str, case.argv)], work, case.env, case.timeout)
            proc.elapsed = time.time() - start
            why = judge(case, proc, work)
        except subprocess.TimeoutExpired:
            why = f"still running after {case.timeout:.0f} s (killed)"
        status = "OK " if why is None else "BAD"
        print(f"{status} {case.group} {case.id:<34} {time.time() - start:6.1f} s  {why or ''}", flush=True)
        if why is not None:
            bad.append(case.id)
    print(f"\n{len(chosen) - len(bad)} OK, {len(bad)} BAD of {len(chosen)} cases ({time.time() - t0:.0f} s)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
