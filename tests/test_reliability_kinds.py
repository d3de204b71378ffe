"""Issue 26 (the second outside campaign), one test per kind of failure that tests/fuzz_kinds.py does
not generate: the environment (a read-only install, standard output closed, an unusable HOME),
inputs read once (FIFOs), clock restarts in a bag, a time limit inside a generation, an obstacle
scene too large, excitations that cannot identify anything, the time stamps predict writes, a
Dask scheduler address that names none, the inputs of a report directory, and the small refusals
(payload with one log twice, --skip-first beyond the cycles, DYNID_EXAMPLE_ROBOT_DATA wrong)."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import dynid
from cli_helpers import failing, read_columns, run_ok, runner
from dynid.cli.main import app
from dynid.errors import DataError, DynidWarning, ModelError
from fuzz_kinds import P2_URDF, write_bag

SRC = Path(dynid.__file__).resolve().parent


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("kinds26")
    run_ok("simulate", "-r", "planar2", "--out", d / "log.csv", "--duration", "4", "--seed", "3")
    run_ok("identify", "-r", "planar2", "--data", d / "log.csv", "--out", d / "r.json", "--lowpass", "10")
    return d


def _without_dac_override() -> list[str]:
    """A prefix that makes file modes bind the test process (root ignores them otherwise)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file modes cannot be made to bind")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search"]


# -- the environment -----------------------------------------------------------------------------

def test_a_read_only_install_and_an_unusable_home_fall_back_to_private_cache_directories(tmp_path):
    """Numba cannot cache beside a read-only package nor in an unwritable HOME: dynid points
    NUMBA_CACHE_DIR (and matplotlib's MPLCONFIGDIR) at private directories instead of crashing
    with 'cannot cache function ...: no locator available', and matplotlib prints no noise."""
    prefix = _without_dac_override()
    package, home = tmp_path / "pkg", tmp_path / "home"
    shutil.copytree(SRC, package / "dynid", ignore=shutil.ignore_patterns("__pycache__"))
    home.mkdir()
    for root, dirs, files in os.walk(tmp_path):
        for name in files:
            os.chmod(Path(root) / name, 0o444)
        for name in dirs:
            os.chmod(Path(root) / name, 0o555)
    probe = ("import os, dynid; from dynid.dynamics.sincos import sincos; s, c = sincos(0.5); "
             "import matplotlib.pyplot; "
             "print(os.environ['NUMBA_CACHE_DIR'], os.environ['MPLCONFIGDIR'], round(s, 12))")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "MPLCONFIGDIR", "XDG_CACHE_HOME",
                                                             "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), PYTHONPATH=str(package), PYTHONDONTWRITEBYTECODE="1")
    try:
        out = subprocess.run([*prefix, sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                             timeout=300)
    finally:
        for root, dirs, files in os.walk(tmp_path):
            for name in dirs + files:
                os.chmod(Path(root) / name, 0o755)
    assert out.returncode == 0, out.stderr[-2000:]
    numba_dir, mpl_dir, s = out.stdout.split()
    assert Path(numba_dir).name.startswith("dynid-numba-cache-") and Path(mpl_dir).name.startswith("dynid-matplotlib-")
    assert float(s) == round(math.sin(0.5), 12)
    assert out.stderr.strip() == "", out.stderr  # no matplotlib 'created a temporary cache directory' noise


def test_a_private_directory_planted_by_another_user_is_not_used(tmp_path, monkeypatch):
    """The private cache directory must be our own and writable by us alone (cached kernels are
    code): a world-writable one is refused and the caller falls back further."""
    from dynid.files import environment

    monkeypatch.setattr(environment.tempfile, "gettempdir", lambda: str(tmp_path))
    planted = tmp_path / f"dynid-numba-cache-{os.getuid()}"
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)
    assert environment.private_directory("numba-cache") is None
    planted.chmod(0o700)
    assert environment.private_directory("numba-cache") == planted


def test_standard_output_closed_is_one_error_line():
    out = subprocess.run(f"'{sys.executable}' -m dynid.cli.main robots >&-", shell=True, capture_output=True,
                         text=True, timeout=120)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: standard output is closed"), \
        out.stderr


# -- inputs that can be read once -----------------------------------------------------------------

def test_a_fifo_log_is_read_as_the_file_it_carries(work, tmp_path):
    """'--data <(zcat log.csv.gz)' (a FIFO; a pipe on /dev/stdin likewise) is copied once, so the
    readers that look at a file several times see the same log: the same result as the file."""
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    feeder = threading.Thread(target=lambda: fifo.write_bytes((work / "log.csv").read_bytes()))
    feeder.start()
    try:
        run_ok("identify", "-r", "planar2", "--data", fifo, "--out", tmp_path / "fifo.json", "--lowpass", "10")
    finally:
        feeder.join(timeout=30)
    import json

    a = json.loads((tmp_path / "fifo.json").read_text())["base_parameters"]
    b = json.loads((work / "r.json").read_text())["base_parameters"]
    assert [p["value"] for p in a] == pytest.approx([p["value"] for p in b], rel=1e-12, abs=1e-12)
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"dynid-fifo-*/{fifo.name}"))  # the copy is gone


# -- bags whose clock restarts ----------------------------------------------------------------------

def _bag(path, header_t, receive_t):
    k = np.arange(len(header_t))
    return write_bag(path, header_t, receive_t, q=np.column_stack([np.sin(k / 50), np.cos(k / 70)]))


def test_a_bag_whose_header_stamps_restart_is_converted_into_segments(tmp_path):
    t = np.arange(300) * 0.01
    bag = _bag(tmp_path / "restart.bag", np.concatenate([50 + t[:150], 50 + t[:150]]), 1.7e9 + t)
    run_ok("convert", bag, "-r", "planar2", "--out", tmp_path / "c.csv")
    cols = read_columns(tmp_path / "c.csv")
    assert sorted(set(cols["segment"])) == [0, 1]
    for s in (0, 1):
        assert np.all(np.diff(cols["t"][cols["segment"] == s]) > 0)


def test_messages_that_share_one_time_stamp_are_named_as_such(tmp_path):
    t = np.arange(200) * 0.01
    bag = _bag(tmp_path / "one.bag", 50 + t, np.full(t.size, 1.7e9))
    line = failing("convert", bag, "-r", "planar2", "--stamp", "receive", "--out", tmp_path / "c.csv")
    assert "all 200 messages" in line and "same receive time" in line and "--stamp header" in line


# -- the time limit and the size of an obstacle scene ---------------------------------------------

def test_the_time_limit_holds_inside_a_generation():
    """A deadline already passed stops the search inside its first generation, with one error line's
    worth of reason, instead of running on (the check sits in the distance loops)."""
    from dynid.excite.criteria import ExcitationModel
    from dynid.excite.geometry.setup import GeometryOptions, build_geometry
    from dynid.excite.optimize import OptimizeSettings, optimize_excitation
    from dynid.excite.limit_sources import resolve_limits, robot_with_limits

    robot = dynid.load_robot("er3a")
    resolved = resolve_limits(robot)
    limited = robot_with_limits(robot, resolved.limits)
    geometry = build_geometry(limited, resolved.limits, GeometryOptions(clearance=0.01))
    model = ExcitationModel.of(limited)
    start = time.perf_counter()
    with pytest.raises(DataError, match="ran out within the first generation"):
        optimize_excitation(model, OptimizeSettings(generations=2, polish_iterations=1, max_seconds=1.0),
                            geometry=geometry.constraints, start=geometry.start, deadline=start - 1.0)
    assert time.perf_counter() - start < 30


def test_boxes_out_of_reach_are_left_out_and_too_many_within_reach_refused():
    from dynid.excite.geometry.scene import Box, Scene
    from dynid.excite.geometry.setup import MAX_BOXES, GeometryOptions, build_geometry, within_reach, reach
    from dynid.excite.geometry.robot_capsules import robot_capsules
    from dynid.excite.limit_sources import resolve_limits, robot_with_limits

    robot = dynid.load_robot("er3a")
    resolved = resolve_limits(robot)
    limited = robot_with_limits(robot, resolved.limits)
    capsules = robot_capsules(limited, "auto", None)
    far = reach(limited, resolved.limits, capsules)
    assert 0.5 < far < 3.0
    rng = np.random.default_rng(0)
    boxes = tuple(Box(f"b{k}", c, [0.01, 0.01, 0.01]) for k, c in enumerate(rng.uniform(far + 0.2, far + 2, (50, 3))))
    kept, dropped = within_reach(limited, resolved.limits, capsules, Scene(0.0, boxes), 0.02)
    assert dropped == 50 and kept.boxes == ()
    near = tuple(Box(f"n{k}", c, [0.01, 0.01, 0.01]) for k, c in
                 enumerate(rng.uniform([0.3, -0.4, 0.3], [0.5, 0.4, 0.7], (MAX_BOXES + 1, 3))))
    with pytest.raises(ModelError, match=f"{MAX_BOXES + 1} boxes within the robot's reach"):
        build_geometry(limited, resolved.limits, GeometryOptions(clearance=0.02, boxes=near))


# -- excitations that cannot identify anything ----------------------------------------------------

def _trajectory(amplitude, n=2):
    from dynid.excite.periodic import periodic_from_family

    template = periodic_from_family("fourier", 2 * math.pi * 0.1, 5, n)
    c = np.random.default_rng(0).normal(size=template.coefficients.shape)
    c *= np.asarray(amplitude) / np.abs(template.with_coefficients(np.zeros(n), c).evaluate(
        np.linspace(0.0, 10.0, 2001))[0]).max(axis=0)  # joint j moves about +-amplitude[j]
    return template.with_coefficients(np.zeros(n), c)


@pytest.mark.parametrize("amplitude, outcome", [((1e-9, 1e-9), "problem"), ((0.5, 1e-9), "warning"),
                                                ((0.5, 0.01), "warning"), ((0.5, 0.4), "none")])
def test_joints_frozen_by_their_limits_are_named(amplitude, outcome):
    """Limits of 1e-9 give a well-conditioned but useless trajectory (every column of the
    normalized regressor scales alike, so cond stays near 10): no moving joint is a problem, one
    joint below identify's still range a warning naming it (a condition number beyond what
    identify accepts is a problem too)."""
    from dynid.excite.criteria import ExcitationModel
    from dynid.excite.evaluate import evaluate_trajectory, unusable

    robot = dynid.load_robot("planar2")
    traj = _trajectory(amplitude)
    problems, cautions = unusable(evaluate_trajectory(ExcitationModel.of(robot), traj), traj, robot)
    assert (len(problems), len(cautions)) == {"problem": (1, 0), "warning": (0, 1), "none": (0, 0)}[outcome]
    if outcome != "none":
        assert "joint2" in (problems + cautions)[0]


def test_torques_beyond_the_limits_asked_for_are_a_problem():
    from dynid.excite.criteria import ExcitationModel
    from dynid.excite.evaluate import evaluate_trajectory, unusable

    robot = dynid.load_robot("planar2")
    traj = _trajectory((0.5, 0.4))
    report = evaluate_trajectory(ExcitationModel.of(robot), traj)
    report["torque"] = {**report["torque"], "ok": False, "joint_ratio": [878833.0, 0.5]}
    problems, _ = unusable(report, traj, robot, torque_limits=True)
    assert any("878833 x tau_max on joint 1" in p for p in problems)
    assert not unusable(report, traj, robot, torque_limits=False)[0]


def test_limits_wider_than_the_description_warn():
    from dynid.excite.limit_sources import LimitOptions, resolve_limits

    robot = dynid.load_robot("planar2")
    with pytest.warns(DynidWarning) as seen:
        resolve_limits(robot, LimitOptions(q_range={1: (-100.0, 100.0)}))
    texts = [str(w.message) for w in seen]
    assert any("beyond the robot's own limits" in t for t in texts) and any("degrees?" in t for t in texts)


# -- the time stamps predict writes --------------------------------------------------------------

def test_predict_writes_the_logs_own_time_stamps_around_a_nan_row(work, tmp_path):
    """A NaN row makes the log irregular: it is resampled for the filters, but predict writes the
    log's own time stamps (not a drifting grid, no duplicate at a window boundary) and says why
    the NaN row has none."""
    cols = {k: np.array(v, dtype=float) for k, v in read_columns(work / "log.csv").items()}
    cols["tau1"][200] = np.nan
    names = list(cols)
    np.savetxt(tmp_path / "nan.csv", np.column_stack([cols[k] for k in names]), delimiter=",",
               header=",".join(names), comments="", fmt="%.17g")
    out = run_ok("predict", "-r", "planar2", "--params", work / "r.json", "--data", tmp_path / "nan.csv",
                 "--out", tmp_path / "p.csv", "--chunk-rows", "150")
    t = read_columns(tmp_path / "p.csv")["t"]
    assert np.array_equal(t, np.delete(cols["t"], 200))
    assert "1 row(s) with NaN dropped" in out and "get no prediction" in out


# -- Dask scheduler addresses ---------------------------------------------------------------------

@pytest.mark.parametrize("address, expected", [("not-an-address", "missing port"), ("http://127.0.0.1:80", "http"),
                                               ("tcp://:8786", "host")])
def test_an_address_that_names_no_scheduler_is_refused_before_connecting(address, expected):
    from dynid.errors import ClusterError
    from dynid.fleet.cluster import check_address

    with pytest.raises(ClusterError, match=expected):
        check_address(address)


def test_a_scheduler_that_does_not_answer_leaves_no_traceback_at_exit():
    probe = ("from dynid.fleet.cluster import dask_client\n"
             "try:\n    with dask_client('tcp://127.0.0.1:9', connect_timeout=1): pass\n"
             "except Exception as exc:\n    print(type(exc).__name__)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ClusterError", out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr, out.stderr


# -- small refusals ----------------------------------------------------------------------------------

def test_a_report_directory_protects_every_file_found_in_it(work, tmp_path):
    d = tmp_path / "demo"
    d.mkdir()
    shutil.copy(work / "r.json", d / "result_ols.json")
    shutil.copy(work / "log.csv", d / "train.csv")
    before = (d / "train.csv").read_bytes()
    line = failing("report", "--from", d, "--out", d / "train.csv")
    assert "same file as the input" in line and (d / "train.csv").read_bytes() == before
    (tmp_path / "empty").mkdir()
    assert "none of the files a report is made of" in failing("report", "--from", tmp_path / "empty")


def test_payload_refuses_one_log_with_and_without_the_load(work, tmp_path):
    (tmp_path / "link.csv").symlink_to(work / "log.csv")
    line = failing("payload", "identify", "-r", "planar2", "-p", work / "r.json", "--data", work / "log.csv",
                   "--unloaded", tmp_path / "link.csv", "--out", tmp_path / "pay.json")
    assert "both with the load" in line


@pytest.mark.parametrize("skip, left", [(5, 1), (6, 0), (99, 0)])
def test_skip_first_that_leaves_no_statistics_warns(skip, left):
    from dynid.identify.cycle_stats import thesis_statistics

    values = np.arange(12.0).reshape(6, 2)
    with pytest.warns(DynidWarning, match=f"leaves {left} of the 6 cycles"):
        assert thesis_statistics(values, skip_first=skip)["without_first"] is None


@pytest.mark.parametrize("value, state", [("missing", "does not exist"), ("file", "is a file")])
def test_a_wrong_example_robot_data_directory_is_refused(tmp_path, monkeypatch, value, state):
    target = tmp_path / "nope" if value == "missing" else tmp_path / "f.txt"
    if value == "file":
        target.write_text("x")
    monkeypatch.setenv("DYNID_EXAMPLE_ROBOT_DATA", str(target))
    assert state in failing("robot", "show", "example:ur5")


def test_a_lowpass_above_nyquist_warns_that_nothing_is_filtered(work, tmp_path):
    result = runner.invoke(app, ["identify", "-r", "planar2", "--data", str(work / "log.csv"), "--out",
                                 str(tmp_path / "r.json"), "--lowpass", "400"])
    assert result.exit_code == 0, result.output
    assert "at or above the Nyquist frequency 50 Hz" in result.output


def test_a_lowpass_just_under_nyquist_warns_and_filters_nothing(work, tmp_path):
    """A 100 Hz log whose time stamps give fs a hair above 100 Hz and --lowpass 50 (a grid setting of
    bench/real_defaults.py): the Butterworth filter just under Nyquist asked for ~2e10 settling
    samples, a ValueError traceback. Within 2 % of Nyquist nothing is filtered, with a warning."""
    import warnings

    from dynid.data.preprocess import Preprocessing

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert Preprocessing(lowpass_hz=50.0).cutoff(100.0000001) == 0.0
        assert Preprocessing(lowpass_hz=49.5).cutoff(100.0) == 0.0
        assert Preprocessing(lowpass_hz=48.0).cutoff(100.0) == 48.0
    assert [str(w.message).split(" Hz is ")[1].split(" 50 Hz")[0] for w in caught] == [
        "within 2 % of the Nyquist frequency", "within 2 % of the Nyquist frequency"]
    result = runner.invoke(app, ["identify", "-r", "planar2", "--data", str(work / "log.csv"), "--out",
                                 str(tmp_path / "r.json"), "--lowpass", "49.999999"])
    assert result.exit_code == 0, result.output
    assert "within 2 % of the Nyquist frequency 50 Hz" in result.output


def test_a_fleet_model_file_is_written_relative_to_fleet_yaml(tmp_path, monkeypatch):
    from dynid.fleet.config import load_config

    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.urdf").write_text(P2_URDF.format(extra=""))
    run_ok("fleet", "simulate", "--out", "fleet", "--robots", "1", "--days", "1", "--minutes", "0.05", "--rate",
           "50", "--model", "models/m.urdf", "--no-temperature")
    entry = next(iter(load_config("fleet/fleet.yaml").robots.values()))
    assert Path(entry.spec) == (tmp_path / "models" / "m.urdf").resolve()


# -- option values outside their range -------------------------------------------------------------

@pytest.mark.parametrize("option, value", [("--cv-folds", "0"), ("--cv-folds", "1"), ("--cv-folds", "-3"),
                                           ("--nan", "keep")])
def test_option_values_the_campaign_found_accepted_are_refused_by_every_command(work, tmp_path, option, value):
    """identify, diagnose and convert check the same option rules (cli.option_checks.RULES) before
    any work: --cv-folds below 2 cannot cross-validate, --nan keep would write NaN rows."""
    identify = ["identify", "-r", "planar2", "--data", work / "log.csv", "--out", tmp_path / "r.json"]
    commands = {"--cv-folds": [identify],
                "--nan": [["convert", work, "--signals", "t=a.txt,q=b.txt,tau=c.txt", "--out", tmp_path / "c.csv"],
                          identify, ["diagnose", "-r", "planar2", "--data", work / "log.csv"]]}
    for argv in commands[option]:
        assert option in failing(*argv, option, value), argv
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "c.csv").exists()
