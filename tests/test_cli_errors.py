"""Every command, given an input a user can get wrong, exits non-zero with one line on stderr
and no traceback (tracebacks only with ``dynid --debug``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

CLI = [sys.executable, "-m", "dynid.cli.main"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    t = np.arange(300) * 0.01
    rows = "\n".join(f"{x},0.1,0.2,1.0,0.5" for x in t)
    (d / "static.csv").write_text("t,q1,q2,tau1,tau2\n" + rows + "\n")  # nothing moves: ill-conditioned
    (d / "badcol.csv").write_text("t,q1,qq2,tau1,tau2\n" + rows + "\n")  # q2 misspelt
    (d / "notau.csv").write_text("t,q1,q2\n" + "\n".join(f"{x},0.1,0.2" for x in t) + "\n")
    (d / "broken.json").write_text("{not json")
    (d / "ols.json").write_text(json.dumps({"robot": "planar2", "n": 2, "estimator": "ols", "model": {},
                                            "preprocessing": {}, "base": {}, "base_parameters": []}))
    return d


CASES = {
    "robot show: unknown robot": ["robot", "show", "nosuch"],
    "base-params: unknown robot": ["base-params", "nosuch"],
    "simulate: bad option value": ["simulate", "-r", "planar2", "--out", "{d}/x.csv", "--rate", "-5"],
    "simulate: option not a number": ["simulate", "-r", "planar2", "--out", "{d}/x.csv", "--rate", "fast"],
    "identify: missing file": ["identify", "-r", "planar2", "--data", "{d}/missing.csv", "--out", "{d}/r.json"],
    "identify: bad column": ["identify", "-r", "planar2", "--data", "{d}/badcol.csv", "--out", "{d}/r.json"],
    "identify: no torques": ["identify", "-r", "planar2", "--data", "{d}/notau.csv", "--out", "{d}/r.json"],
    "identify: ill-conditioned data": ["identify", "-r", "planar2", "--data", "{d}/static.csv", "--out", "{d}/r.json"],
    "identify: unknown friction model": ["identify", "-r", "planar2", "--data", "{d}/static.csv", "--out",
                                         "{d}/r.json", "--friction", "stiction"],
    "identify: missing required option": ["identify", "--data", "{d}/static.csv"],
    "predict: broken result file": ["predict", "-r", "planar2", "--params", "{d}/broken.json", "--data",
                                    "{d}/static.csv", "--out", "{d}/p.csv"],
    "validate: missing result file": ["validate", "-r", "planar2", "--params", "{d}/none.json", "--data",
                                      "{d}/static.csv"],
    "multibody identify: missing body data": ["multibody", "identify", "-r", "kr500", "--body-data",
                                              "{d}/none.csv", "--out", "{d}/m.json"],
    "excite evaluate: unknown trajectory": ["excite", "evaluate", "-r", "er3a", "--trajectory", "nosuch"],
    "excite optimize: unknown family": ["excite", "optimize", "-r", "er3a", "--out", "{d}/t.json", "--family", "x"],
    "excite protocol: zero cycles": ["excite", "protocol", "-r", "er3a", "--out", "{d}/p.csv", "--cycles", "0"],
    "export: least-squares result": ["export", "-r", "planar2", "--params", "{d}/ols.json", "--urdf", "{d}/x.urdf"],
    "report: missing directory": ["report", "--from", "{d}/nowhere"],
    "demo: bad option value": ["demo", "--cycles", "1", "--out", "{d}/demo"],
    "unknown command": ["calibrate"],
}


def run(args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="80")  # a narrow terminal must not wrap the error line either
    return subprocess.run(CLI + args, capture_output=True, text=True, timeout=300, env=env)


# identify refuses a bad column after computing the model's base parameters, which compiles the
# regressor's Numba kernels on an empty cache (17 s of CPU): this case runs alone first and caches
# them, so that the other processes load them instead of each compiling the same kernels at once
FIRST = "identify: bad column"


@pytest.fixture(scope="module")
def outcomes(files):
    args = {name: [a.format(d=files) for a in argv] for name, argv in CASES.items()}
    done = {FIRST: run(args.pop(FIRST))}
    with ThreadPoolExecutor(max_workers=3) as pool:
        done.update(zip(args, pool.map(run, args.values())))
    return done


@pytest.mark.parametrize("case", list(CASES))
def test_user_error_is_one_line_and_non_zero(case, outcomes):
    proc = outcomes[case]
    assert proc.returncode != 0, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and "Traceback" not in proc.stderr


def test_debug_shows_the_traceback(files):
    proc = run(["--debug", "identify", "-r", "planar2", "--data", f"{files}/badcol.csv", "--out", f"{files}/r.json"])
    assert proc.returncode != 0 and "Traceback" in proc.stderr and "q2" in proc.stderr


def test_failed_command_exits_without_its_frames():
    """A command's error exits with a SystemExit that carries no ``__context__``: raised inside the
    except clause, it kept the error's traceback (and the failed command's frames, open pyarrow
    readers among them) alive until interpreter finalization, where pyarrow's torn-down thread pools
    aborted the process now and then ("terminate called without an active exception", exit -6)."""
    import weakref

    from dynid.cli.common import friendly_errors
    from dynid.errors import DataError

    class Resource:  # stands for a native reader held by a frame of the failed command
        pass

    held = []

    @friendly_errors
    def command():
        resource = Resource()
        held.append(weakref.ref(resource))
        raise DataError("bad input")

    with pytest.raises(SystemExit) as info:
        command()
    assert info.value.code == 2
    assert info.value.__context__ is None
    assert held[0]() is None  # the command's frame, and what it held, are already released
