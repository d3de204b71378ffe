"""dynid installed as users install it, and the demo run from there, once per test session.

``python -m build`` makes a source distribution and a wheel, the wheel installs with pip into a
fresh virtual environment, and ``dynid demo`` runs from that environment on ``make demo``'s robot
(er3a, the thesis' friction and drift) with a small budget. tests/test_wheel.py checks the
installation and the demo command end to end; tests/test_report.py checks the report of the same
demo directory. One run serves both files: conftest.py's session fixtures ``wheel_venv`` and
``wheel_demo`` call these functions, and conftest.py hands the two files to one xdist worker
(``SHARED_SCOPES``).

The dependencies are not installed a second time (pip resolved and installed the same
``pyproject.toml`` dependencies for the test environment moments before, ``make install``): the
fresh environment sees, through a ``.pth`` file, exactly the distributions the wheel's own
``Requires-Dist`` pull in (their closure, each version checked against its specifier), linked
from the test environment, and nothing else: not the test tools, not the editable dynid. An
import of a package the wheel does not declare still fails there, as on a user's machine; pip
installs the wheel itself (``--no-deps``) and ``pip check`` checks the environment.

About two minutes: the Numba kernels compile for the fresh environment. ``DYNID_WHEEL_KEEP=DIR``
keeps the environment and the demo in DIR.
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


def wheel_requirements(wheel: Path) -> list[str]:
    """The ``Requires-Dist`` lines of ``wheel``'s metadata."""
    import zipfile
    from email.parser import HeaderParser

    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = HeaderParser().parsestr(archive.read(name).decode())
    return metadata.get_all("Requires-Dist") or []


def dependency_closure(requirements: list[str]) -> list:
    """The distributions of this environment that ``requirements`` (without extras of the wheel)
    pull in, recursively; an assertion error names a requirement this environment does not meet."""
    import importlib.metadata as metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found, seen = {}, set()
    todo = [(Requirement(r), ()) for r in requirements]
    while todo:
        req, extras = todo.pop()
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in extras or ("",)):
            continue
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            raise AssertionError(f"the wheel requires {req}, which the test environment lacks") from None
        assert req.specifier.contains(dist.version, prereleases=True), f"{req}: installed {dist.version}"
        found[key[0]] = dist
        todo += [(Requirement(r), tuple(req.extras)) for r in dist.requires or []]
    return list(found.values())


def link_dependencies(dists: list, target: Path) -> None:
    """Symbolic links in ``target`` to the top-level files and directories of ``dists`` (their
    packages, modules, .pth files, dist-info and shared-library folders)."""
    target.mkdir(parents=True, exist_ok=True)
    for dist in dists:
        assert dist.files is not None, f"{dist.metadata['Name']} has no RECORD: which files it installed is unknown"
        for top in sorted({Path(str(f)).parts[0] for f in dist.files} - {"..", "__pycache__"}):
            source, link = Path(dist.locate_file(top)), target / top
            if source.exists() and not link.exists():
                link.symlink_to(source)


def install_wheel(work: Path) -> Path:
    """Build the sdist and the wheel of a copy of the sources in ``work``, install the wheel into a
    fresh environment ``work/venv`` that sees the wheel's dependencies (module docstring); that
    environment."""
    import sysconfig

    work.mkdir(parents=True, exist_ok=True)
    source = source_copy(work / "source")
    run(sys.executable, "-m", "build", "--outdir", work / "dist", source, cwd=work, timeout=600)
    wheels = sorted((work / "dist").glob("dynid-*.whl"))
    assert len(wheels) == 1 and sorted((work / "dist").glob("dynid-*.tar.gz")), list((work / "dist").iterdir())
    env = work / "venv"
    run(sys.executable, "-m", "venv", "--clear", "--without-pip", env, cwd=work, timeout=120)
    deps = work / "dependencies"
    shutil.rmtree(deps, ignore_errors=True)
    link_dependencies(dependency_closure(wheel_requirements(wheels[0])), deps)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(env), "platbase": str(env)}))
    # a line starting with "import" runs: addsitedir also reads the dependencies' own .pth files (cmeel's)
    (site / "dynid-test-dependencies.pth").write_text(f"import site; site.addsitedir({str(deps)!r})\n")
    pip = (sys.executable, "-m", "pip", "--python", env / "bin" / "python")
    # no byte-compiling of every installed module (Python compiles what it imports)
    run(*pip, "install", "--quiet", "--no-deps", "--no-compile", wheels[0], cwd=work, timeout=600)
    run(*pip, "check", cwd=work, timeout=120)
    return env


def run_demo(venv: Path) -> tuple[Path, str]:
    """``dynid demo`` as ``make demo`` runs it (its default robot), from ``venv``, small budget:
    (the output directory, the command's stdout)."""
    out_dir = venv.parent / "demo"
    if out_dir.exists():  # a kept environment (DYNID_WHEEL_KEEP) of an earlier session
        shutil.rmtree(out_dir)
    out = run(venv / "bin" / "dynid", "demo", "--out", out_dir, *DEMO_OPTIONS, cwd=venv.parent, timeout=1800)
    return out_dir, out
