"""The command line starts without the heavy libraries (issue 15): `dynid --help` and
`dynid robots` import neither SciPy, Numba, PyArrow, cvxpy nor matplotlib; commands import
what they use when they run. Checked on the set of loaded modules in a fresh interpreter (a
fact about the import graph, not a timing; the times are measured by bench/cli_startup.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("scipy", "numba", "pyarrow", "cvxpy", "matplotlib", "pandas", "dask", "rosbags", "mujoco", "pinocchio")
SRC = Path(__file__).resolve().parents[1] / "src"


def loaded_heavy(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter; the heavy top-level packages it left in sys.modules."""
    probe = code + f"\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_dynid_and_the_cli_stay_light():
    assert loaded_heavy("import dynid") == []
    assert loaded_heavy("import dynid.cli.main") == []


def test_help_and_robots_run_without_heavy_imports():
    run = ("import contextlib, io\nfrom dynid.cli.main import app\n"
           "for args in (['--help'], ['robots'], ['identify', '--help'], ['simulate', '--help']):\n"
           "    with contextlib.redirect_stdout(io.StringIO()):\n"
           "        app(args, standalone_mode=False)\n")
    assert loaded_heavy(run) == []


def test_lazy_api_is_the_dynamics_api():
    import dynid
    import dynid.data
    from dynid.data.io import load_joint_data
    from dynid.dynamics import inverse_dynamics, regressor
    from dynid.robot import load_robot

    assert dynid.regressor is regressor and dynid.inverse_dynamics is inverse_dynamics
    assert dynid.load_robot is load_robot and dynid.data.load_joint_data is load_joint_data
    assert set(dynid.__all__) <= set(dir(dynid))
    try:
        dynid.no_such_function
    except AttributeError as exc:
        assert "no_such_function" in str(exc)
    else:
        raise AssertionError("an unknown attribute of dynid must raise AttributeError")
