"""Limit the BLAS thread pools while many small matrix products run back to back.

The batched criteria call thousands of small BLAS products; on a loaded machine with few
cores, OpenBLAS worker threads that wait for a busy core make one 0.02 s product take
seconds. ``single_blas_thread`` sets every loaded OpenBLAS library to one thread for the
duration of a block and restores the previous counts (the mechanism threadpoolctl uses:
call the library's own set/get functions, found in the process' loaded libraries).
"""

from __future__ import annotations

import contextlib
import ctypes
import sys

_SUFFIXES = ("", "64_")
_PREFIXES = ("openblas", "scipy_openblas")


def _openblas_handles() -> list[tuple[object, object]]:
    """(get, set) function pairs of every OpenBLAS loaded in this process (Linux only)."""
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
    pairs = []
    for path in sorted(paths):
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


@contextlib.contextmanager
def single_blas_thread():
    """Run the block with OpenBLAS limited to one thread; restore the counts afterwards."""
    pairs = _openblas_handles()
    previous = [get() for get, _ in pairs]
    for _, put in pairs:
        put(1)
    try:
        yield
    finally:
        for (_, put), count in zip(pairs, previous):
            put(count)
