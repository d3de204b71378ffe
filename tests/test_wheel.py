"""Installable as users install: ``python -m build`` makes a source distribution and a wheel, the
wheel installs with pip into a fresh virtual environment, and ``dynid demo`` runs from there
(the builtin robots, the package's data files and every room the demo touches come from the
wheel, not from src/). The demo runs on planar2: every step of the er3a demo (excitation,
protocol, simulation, diagnosis, identification, payload, validation, drift, cycles, friction,
KR500 per body, export, report) at a third of its CPU time; er3a's own file is loaded from the
wheel by the first test. This run is also the demo command's end-to-end test (its input and
output checks, its printed summary).

Slow (a few minutes: pip installs NumPy, SciPy, Numba, Pinocchio, MuJoCo, cvxpy... from pip's
cache or the configured index, and the Numba kernels compile for the fresh environment); part of
``make test``, not of ``make check``. ``DYNID_WHEEL_KEEP=DIR`` keeps the environment in DIR.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def run(*command, cwd: Path, timeout: float) -> str:
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed ({done.returncode}):\n{done.stdout[-3000:]}\n" \
                                 f"{done.stderr[-3000:]}"
    return done.stdout


def source_copy(target: Path) -> Path:
    """What a clone holds of the package (tracked files: no .venv, caches, egg-info or build/)."""
    files = subprocess.run(["git", "ls-files", "pyproject.toml", "README.md", "LICENSE*", "src"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)
    return target


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    keep = os.environ.get("DYNID_WHEEL_KEEP")
    work = Path(keep) if keep else tmp_path_factory.mktemp("wheel")
    work.mkdir(parents=True, exist_ok=True)
    source = source_copy(work / "source")
    run(sys.executable, "-m", "build", "--outdir", work / "dist", source, cwd=work, timeout=600)
    wheels = sorted((work / "dist").glob("dynid-*.whl"))
    assert len(wheels) == 1 and sorted((work / "dist").glob("dynid-*.tar.gz")), list((work / "dist").iterdir())
    env = work / "venv"
    run(sys.executable, "-m", "venv", "--clear", env, cwd=work, timeout=120)
    # pip's cache (on by default) serves the packages `make install` fetched; no byte-compiling of
    # every installed module (Python compiles what it imports)
    run(env / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-compile", wheels[0], cwd=work, timeout=1200)
    return env


def test_the_wheel_carries_the_version_and_the_builtin_robots(venv):
    from dynid import __version__

    out = run(venv / "bin" / "python", "-c", "import dynid, json; print(json.dumps([dynid.__version__, "
              "dynid.__file__, dynid.load_robot('er3a').n]))", cwd=venv.parent, timeout=300)
    version, where, n = json.loads(out)
    assert version == __version__
    assert Path(where).is_relative_to(venv) and not Path(where).is_relative_to(ROOT / "src")
    assert n == 6
    robots = run(venv / "bin" / "dynid", "robots", cwd=venv.parent, timeout=300)
    assert all(name in robots for name in ("kr500", "kr500-rail", "er3a", "planar6", "scara5", "planar2", "tx40"))


def test_dynid_demo_runs_from_the_installed_wheel(venv):
    """dynid demo as make demo runs it (the command's input and output checks included: its report
    reads summary.json, which finish must not write again), on the small planar2."""
    out_dir = venv.parent / "demo"
    out = run(venv / "bin" / "dynid", "demo", "--robot", "planar2", "--out", out_dir, "--cycles", "2",
              "--generations", "1", "--warming", "5", cwd=venv.parent, timeout=1200)
    summary = json.loads((out_dir / "summary.json").read_text())
    assert "What you can trust" in out and summary["trust"].startswith("What you can trust") and summary["headline"]
    assert summary["figures"]["base parameters"] > 0
    # the demo's headline (demo/drift.py): the drift-aware model predicts the log recorded after the test
    # better than the static one whose friction is the test's average (thesis ch. 5)
    drift = summary["figures"]["validation error, drift-aware OLS, log right after the test [%]"]
    static = summary["figures"]["validation error, static OLS (cold and warm friction averaged), same log [%]"]
    assert 0.0 < drift < static < 100.0
    html = (out_dir / "report.html").read_text()
    assert "<img" in html and "Traceback" not in html
