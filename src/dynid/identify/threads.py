"""Limit the BLAS thread pools while many small matrix products run back to back.

The batched criteria, the streaming Gram workers and the small factorizations of the
identification call many small BLAS products; on a loaded machine with few cores, OpenBLAS
worker threads that wait for a busy core make one 0.02 s product take seconds.
``single_blas_thread`` sets every loaded OpenBLAS library to one thread for the duration of a
block and restores the previous counts (the mechanism threadpoolctl uses: call the library's
own set/get functions, found in the process' loaded libraries).

Finding the libraries reads /proc/self/maps (thousands of lines in a process that loaded
NumPy, SciPy, Numba and Dask: ~20 ms at a load of 20 on 2 cores), so the (get, set) pairs are
kept per process and found again only when the process has imported modules since (a new
extension module is how a new OpenBLAS comes in: SciPy brings its own). It lives here, the
lowest room that uses it (identify; excite, friction and fleet use it too).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys

_SUFFIXES = ("", "64_")
_PREFIXES = ("openblas", "scipy_openblas")
_found: dict = {"pid": None, "modules": -1, "pairs": []}


def _openblas_paths() -> list[str]:
    """Paths of the OpenBLAS shared libraries mapped into this process (Linux only)."""
    if not sys.platform.startswith("linux"):
        return []
    paths = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "openblas" in path.lower() and ".so" in path:
                    paths.add(path)
    except OSError:
        return []
    return sorted(paths)


def _pairs(paths: list[str]) -> list[tuple[object, object]]:
    pairs = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    pairs.append((get, put))
                    break
            else:
                continue
            break
    return pairs


def openblas_handles() -> list[tuple[object, object]]:
    """(get, set) function pairs of every OpenBLAS loaded in this process; found once per
    process and again only after new imports (module docstring)."""
    modules = len(sys.modules)
    if _found["pid"] != os.getpid() or _found["modules"] != modules:
        _found.update(pid=os.getpid(), modules=modules, pairs=_pairs(_openblas_paths()))
    return _found["pairs"]


@contextlib.contextmanager
def single_blas_thread():
    """Run the block with OpenBLAS limited to one thread; restore the counts afterwards."""
    pairs = openblas_handles()
    previous = [get() for get, _ in pairs]
    for _, put in pairs:
        put(1)
    try:
        yield
    finally:
        for (_, put), count in zip(pairs, previous):
            put(count)


@contextlib.contextmanager
def one_compute_thread():
    """Run the block with OpenBLAS and Numba's parallel kernels on one thread (for a task that
    is one of many running in parallel: extra threads would only contend, and OpenMP's
    spinning threads cost CPU time on a busy machine); restore the counts afterwards."""
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with single_blas_thread():
            yield
    finally:
        numba.set_num_threads(previous)
