"""Installable as users install: ``python -m build`` makes a source distribution and a wheel, the
wheel installs with pip into a fresh virtual environment, and ``dynid demo`` runs from there
(the builtin robots, the package's data files and every room the demo touches come from the
wheel, not from src/). The demo runs on ``make demo``'s robot, er3a with the thesis' friction and
drift, with a small budget (2 cycles, 1 generation): every step (excitation, protocol,
simulation, diagnosis, identification, payload, validation, drift, cycles, friction, KR500 per
body, export, report). This run is also the demo command's end-to-end test (its input and output
checks, its printed summary); tests/test_report.py checks the report of the same run.

Slow (a minute or two: the Numba kernels compile for the fresh environment, which sees the test
environment's installation of exactly the dependencies the wheel declares, installed by ``make
install`` from the same pyproject.toml: tests/installed_wheel.py); part of ``make test``, not of
``make check``. The environment and the demo are conftest.py's session
fixtures (tests/installed_wheel.py); ``DYNID_WHEEL_KEEP=DIR`` keeps them in DIR.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from installed_wheel import ROOT, run

pytestmark = pytest.mark.slow


def test_the_wheel_carries_the_version_and_the_builtin_robots(wheel_venv):
    from dynid import __version__

    out = run(wheel_venv / "bin" / "python", "-c", "import dynid, json; print(json.dumps([dynid.__version__, "
              "dynid.__file__, dynid.load_robot('er3a').n]))", cwd=wheel_venv.parent, timeout=300)
    version, where, n = json.loads(out)
    assert version == __version__
    assert Path(where).is_relative_to(wheel_venv) and not Path(where).is_relative_to(ROOT / "src")
    assert n == 6
    robots = run(wheel_venv / "bin" / "dynid", "robots", cwd=wheel_venv.parent, timeout=300)
    assert all(name in robots for name in ("kr500", "kr500-rail", "er3a", "planar6", "scara5", "planar2", "tx40"))
    # the environment sees only what the wheel declares (tests/installed_wheel.py links exactly that closure):
    # the test environment's own tools are not importable there, so an undeclared import of dynid would fail here
    seen = run(wheel_venv / "bin" / "python", "-c", "import importlib.util as u; print([m for m in ('pytest', "
               "'hypothesis', 'xdist', 'build') if u.find_spec(m)])", cwd=wheel_venv.parent, timeout=300)
    assert seen.strip() == "[]"


def test_dynid_demo_runs_from_the_installed_wheel(wheel_demo):
    """dynid demo as make demo runs it (the command's input and output checks included: its report
    reads summary.json, which finish must not write again), on make demo's robot."""
    out_dir, out = wheel_demo
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["settings"]["robot"] == "er3a" and summary["settings"]["cycles"] == 2
    assert "What you can trust" in out and summary["trust"].startswith("What you can trust") and summary["headline"]
    assert summary["figures"]["base parameters"] > 0
    # the demo's headline (demo/drift.py): the drift-aware model predicts the log recorded after the test
    # better than the static one whose friction is the test's average (thesis ch. 5)
    drift = summary["figures"]["validation error, drift-aware OLS, log right after the test [%]"]
    static = summary["figures"]["validation error, static OLS (cold and warm friction averaged), same log [%]"]
    assert 0.0 < drift < static < 100.0
    html = (out_dir / "report.html").read_text()
    assert "<img" in html and "Traceback" not in html
