"""What a speed figure depends on, printed beside it: the CPU, its SIMD flags, the target the
kernels were compiled for, the store bandwidth and the load of the (shared) machine.

``select_target(name)`` must run before Numba is imported: it sets the CPU that Numba compiles
for (``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES``). ``avx2`` compiles dynid's kernels as for an
Intel CPU without AVX-512 (LLVM's ``haswell`` with every AVX-512 feature of this CPU turned
off): the proxy, on this machine, for the Intel CPUs the project has no access to. The
Pinocchio C++ baseline is then built with ``-march=haswell`` too.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import platform
import sys
import time

import numpy as np

TARGETS = {"native": "native", "avx2": "haswell"}  # --target: g++ -march and LLVM CPU name
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl",
              "avx512ifma", "avx512vbmi", "avx512_vnni", "avx512_bf16", "amx_tile")


def select_target(name: str) -> str:
    """Make Numba compile for ``name`` (a key of TARGETS); returns the -march for g++."""
    if name == "native":
        return "native"
    import llvmlite.binding as llvm  # llvmlite only: Numba reads the variables when imported

    if "numba" in sys.modules:
        raise RuntimeError("select_target must run before numba is imported")
    features = llvm.get_host_cpu_features().flatten().split(",")
    off = ("avx512", "amx", "avx10")
    os.environ["NUMBA_CPU_NAME"] = TARGETS[name]
    os.environ["NUMBA_CPU_FEATURES"] = ",".join("-" + f[1:] if any(x in f for x in off) else f for f in features)
    return TARGETS[name]


def cpu_model() -> str:
    """Model name, family/model/stepping (/proc/cpuinfo) and LLVM's name for the host CPU."""
    info = {}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or platform.machine()
    import llvmlite.binding as llvm

    return (f"{info.get('model name', '?')} (vendor {info.get('vendor_id', '?')}, family {info.get('cpu family', '?')} "
            f"model {info.get('model', '?')}; LLVM: {llvm.get_host_cpu_name()}), {os.cpu_count()} logical CPUs, "
            f"{info.get('siblings', '?')} siblings / {info.get('cpu cores', '?')} cores per package")


def simd_flags() -> str:
    """The SIMD extensions /proc/cpuinfo lists, of those that matter to double-precision kernels."""
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), [])
    except OSError:
        return "?"
    return " ".join(f for f in SIMD_FLAGS if f in flags) or "none listed"


def compiled_for() -> str:
    """The CPU and vector width Numba compiles for in this process."""
    name, features = os.environ.get("NUMBA_CPU_NAME"), os.environ.get("NUMBA_CPU_FEATURES", "")
    if name is None:
        return "this CPU (native)"
    width = "AVX-512" if "+avx512f" in features else "AVX2, no AVX-512" if "+avx2" in features else "SSE"
    return f"{name} ({width}; NUMBA_CPU_NAME/NUMBA_CPU_FEATURES)"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def best_of(fn, repeat: int) -> float:
    return best_of_both(fn, repeat)[0]


def best_of_both(fn, repeat: int) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds of this process) over ``repeat`` calls."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu)


def store_bandwidth(threads: int, megabytes: int = 256, repeat: int = 5) -> float:
    """Bytes per second that ordinary compiled stores reach when filling a large array on
    ``threads`` threads (what writing Y is; no cache holds it), by the wall clock."""
    return store_bandwidths(threads, megabytes, repeat)[0]


def store_bandwidths(threads: int, megabytes: int = 256, repeat: int = 5) -> tuple[float, float]:
    """(wall, CPU) bytes per second of ``store_bandwidth``: the array's bytes over the best wall
    time and over the best CPU time of the process (summed over its threads). On a busy machine
    the CPU figure is the one to set beside CPU times: it leaves out the time slices of others."""
    import numba

    a, fill = np.empty(megabytes * 2**20 // 8), _fill_kernel()
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        fill(a, 1.0)
        wall, cpu = best_of_both(lambda: fill(a, 1.0), repeat)
        return a.nbytes / wall, a.nbytes / cpu
    finally:
        numba.set_num_threads(previous)


@functools.cache
def _fill_kernel():
    import numba

    @numba.njit(parallel=True)
    def fill(a, value):
        for k in numba.prange(a.size):
            a[k] = value

    return fill


@contextlib.contextmanager
def store_neighbour(enabled: bool = True):
    """While the block runs, a second process streams ordinary stores into 512 MB (when
    ``enabled``): a core whose memory is busy with a neighbour's writes, as on a smaller or busier
    machine (the benches' ``--contend``)."""
    stop = multiprocessing.Event()
    neighbour = multiprocessing.Process(target=_stream_stores, args=(stop,), daemon=True) if enabled else None
    if neighbour:
        neighbour.start()
    try:
        yield
    finally:
        if neighbour:
            stop.set()
            neighbour.join()


def _stream_stores(stop) -> None:
    a = np.empty(64 * 2**20)  # 512 MB
    while not stop.is_set():
        a.fill(1.0)
