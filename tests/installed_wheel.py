"""dynid installed as users install it, and the demo run from there, once per test session.

``python -m build`` makes a source distribution and a wheel, the wheel installs with pip into a
fresh virtual environment (pip's cache serves the packages ``make install`` fetched), and
``dynid demo`` runs from that environment on ``make demo``'s robot (er3a, the thesis' friction
and drift) with a small budget. tests/test_wheel.py checks the installation and the demo command
end to end; tests/test_report.py checks the report of the same demo directory. One run serves
both files: conftest.py's session fixtures ``wheel_venv`` and ``wheel_demo`` call these functions,
and conftest.py hands the two files to one xdist worker (``SHARED_SCOPES``).

A few minutes: the dependencies install from pip's cache and the Numba kernels compile for the
fresh environment. ``DYNID_WHEEL_KEEP=DIR`` keeps the environment and the demo in DIR.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# dynid demo's options of a small budget (the command's defaults are 6 cycles, 10 generations, 20 s)
DEMO_OPTIONS = ("--cycles", "2", "--generations", "1", "--warming", "5")


def run(*command, cwd: Path, timeout: float) -> str:
    """Run ``command`` (outside src/: no PYTHONPATH); its stdout, or an assertion error with its output."""
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


def install_wheel(work: Path) -> Path:
    """Build the sdist and the wheel of a copy of the sources in ``work``, install the wheel into a
    fresh environment ``work/venv``; that environment."""
    work.mkdir(parents=True, exist_ok=True)
    source = source_copy(work / "source")
    run(sys.executable, "-m", "build", "--outdir", work / "dist", source, cwd=work, timeout=600)
    wheels = sorted((work / "dist").glob("dynid-*.whl"))
    assert len(wheels) == 1 and sorted((work / "dist").glob("dynid-*.tar.gz")), list((work / "dist").iterdir())
    env = work / "venv"
    run(sys.executable, "-m", "venv", "--clear", env, cwd=work, timeout=120)
    # no byte-compiling of every installed module (Python compiles what it imports)
    run(env / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-compile", wheels[0], cwd=work, timeout=1200)
    return env


def run_demo(venv: Path) -> tuple[Path, str]:
    """``dynid demo`` as ``make demo`` runs it (its default robot), from ``venv``, small budget:
    (the output directory, the command's stdout)."""
    out_dir = venv.parent / "demo"
    if out_dir.exists():  # a kept environment (DYNID_WHEEL_KEEP) of an earlier session
        shutil.rmtree(out_dir)
    out = run(venv / "bin" / "dynid", "demo", "--out", out_dir, *DEMO_OPTIONS, cwd=venv.parent, timeout=1800)
    return out_dir, out
