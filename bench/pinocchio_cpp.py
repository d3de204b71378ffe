"""Pinocchio called from C++ (bench/cpp/pinocchio_loop.cpp): build it, run it on dynid's robot and states.

The honest baseline for the dynamics benchmarks: Pinocchio's own loop in C++, `-O3
-march=native` (or the -march of the target benchmarked), one thread, its fastest joint types
(RX/RY/RZ where the axis allows), against which dynid's per-thread figures are compared. Headers and the library come with the `pin`
wheel, Eigen with `cmeel-eigen`; the binary is built at bench time into a cache directory
(``$DYNID_BENCH_CACHE`` or ``~/.cache/dynid-bench``), never committed. ``build`` returns None
with the reason when there is no C++ compiler or no Pinocchio headers.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).parent / "cpp" / "pinocchio_loop.cpp"
# Pinocchio's CMake config (lib/cmake/pinocchio) requires these; without them Boost.MPL fails
DEFINES = ["-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_MPL_LIMIT_LIST_SIZE=30",
           "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12"]
FLAGS = ["-O3", "-DNDEBUG", "-std=c++17", "-w"]


def prefix() -> Path:
    """The cmeel prefix of the venv (include/, include/eigen3, lib/ of the pin and cmeel-eigen wheels)."""
    for site in map(Path, sys.path):
        if (site / "cmeel.prefix" / "include" / "pinocchio").is_dir():
            return site / "cmeel.prefix"
    raise FileNotFoundError("no cmeel.prefix/include/pinocchio on sys.path (pip install pin cmeel-eigen)")


def cache_dir() -> Path:
    return Path(os.environ.get("DYNID_BENCH_CACHE", Path.home() / ".cache" / "dynid-bench"))


def build(march: str = "native") -> tuple[Path | None, str]:
    """(path of the compiled loop, how it was built) or (None, why not); ``march``: g++'s
    -march (``haswell``: the AVX2-only proxy of bench/machine.py)."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if cxx is None:
        return None, "no C++ compiler (g++, c++ or clang++; set CXX): Pinocchio C++ baseline not run"
    try:
        root = prefix()
    except FileNotFoundError as exc:
        return None, f"{exc}: Pinocchio C++ baseline not run"
    if not (root / "include" / "eigen3" / "Eigen").is_dir():
        return None, (f"no Eigen headers in {root / 'include' / 'eigen3'} (pip install cmeel-eigen; `make bench` "
                      "installs the bench extras): Pinocchio C++ baseline not run")
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    command = [cxx, *FLAGS, f"-march={march}", *DEFINES, f"-I{root / 'include'}", f"-I{root / 'include' / 'eigen3'}", str(SOURCE),
               f"-L{root / 'lib'}", f"-Wl,-rpath,{root / 'lib'}", "-lpinocchio_default"]
    key = hashlib.sha256((SOURCE.read_text() + " ".join(command) + version).encode()).hexdigest()[:16]
    binary = cache_dir() / f"pinocchio_loop-{key}"
    how = f"{version}, {FLAGS[0]} -march={march}, Pinocchio headers from {root}"
    if binary.exists():
        return binary, how
    binary.parent.mkdir(parents=True, exist_ok=True)
    print(f"building the Pinocchio C++ loop ({cxx}, about a minute) into {binary.parent} ...", flush=True)
    tmp = binary.with_suffix(".tmp")
    done = subprocess.run([*command[:-3], "-o", str(tmp), *command[-3:]], capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        first = next((line for line in lines if "error" in line), lines[-1] if lines else "no message")
        return None, f"the C++ build failed ({first.strip()}): Pinocchio C++ baseline not run"
    tmp.replace(binary)
    return binary, how


def write_input(path: Path, robot, q, dq, ddq, repeats: int, n_check: int) -> None:
    if any(j.is_offset for j in robot.joints):
        raise ValueError(f"{robot.name}: joints with a frame offset after the motion have no Pinocchio twin here")
    n, count = robot.n, q.shape[0]
    with open(path, "wb") as fh:
        np.array([n, count, repeats, n_check], dtype="<i8").tofile(fh)
        for i, joint in enumerate(robot.joints):
            np.array([joint.parent, 0 if joint.type == "revolute" else 1], dtype="<i8").tofile(fh)
            np.concatenate([joint.axis, np.ravel(joint.placement_rotation), joint.placement_translation,
                            robot.links[i].inertial]).astype("<f8").tofile(fh)
        np.asarray(robot.gravity, dtype="<f8").tofile(fh)
        for a in (q, dq, ddq):
            np.ascontiguousarray(a, dtype="<f8").tofile(fh)


def run(binary: Path, robot, q, dq, ddq, repeats: int = 5, n_check: int = 200) -> dict:
    """Pinocchio's regressor and RNEA over the samples in C++: ns per sample [best wall, median
    wall, best CPU],
    its tau (N, n) and Y of the first n_check samples (n_check, n, 10 n), dynid's column order."""
    n, count = robot.n, q.shape[0]
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = Path(tmp) / "in.bin", Path(tmp) / "out.bin"
        write_input(inp, robot, q, dq, ddq, repeats, n_check)
        done = subprocess.run([str(binary), str(inp), str(out)], capture_output=True, text=True, check=True)
        result = np.fromfile(out, dtype="<f8")
    times = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in done.stdout.splitlines()}
    checked = min(count, n_check)
    tau = result[:count * n].reshape(count, n)
    y = result[count * n:].reshape(checked, n, 10 * n)
    return {"regressor_ns": times["regressor"], "rnea_ns": times["rnea"], "tau": tau, "Y": y}
