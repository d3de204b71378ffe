"""Memory for the large arrays ``dynid.regressor`` returns, recycled once their last user drops them.

A new large array costs more than the kernel that fills it. Memory fresh from the operating
system is zeroed by the kernel page by page on first touch (a page fault each 4 KB), and a Y is
mostly zeros and large: er3a's is 2880 bytes per sample, solo12's 11 520. Measured
(``bench/dynamics.py``, row "regressor, new Y each call"; AMD EPYC Zen 4, 2026-11-26, load ~1, CPU
us per sample of one thread): ``Y = dynid.regressor(robot, q, dq, ddq)`` with a fresh np.zeros
took 0.53 (er3a), 0.77 (iiwa14) and 1.47 (solo12) against 0.27, 0.33 and 0.35 for the kernel
filling a Y that exists already; np.zeros alone, its pages touched, 0.30, 0.42 and 1.04. Asking
for transparent huge pages (MADV_HUGEPAGE: one fault per 2 MB) saves the faults but not the
zeroing (0.51, 0.70 and 1.43). Pinocchio never pays this: its Python and C++ calls fill the one
regressor in its ``Data``.

So a Y of at least ``MIN_BYTES`` lives in an anonymous mapping owned by a ``_Lease``; when the
last array that uses it is freed (numpy keeps the lease as the base of the array and of every
view of it), the mapping goes back to a small pool instead of to the system, marked MADV_FREE
(the system may take its pages back under memory pressure, without writing them anywhere; if it
does, they come back zeroed on the next touch). The next Y of a size that fits takes it:
no fault and no zeroing by the system, but the memory holds old numbers, so the kernel writes
every number of that Y, the zeros of non-ancestor blocks included (``recycled``: for a streamed
Y, every cache line by non-temporal stores in the same pass; for a Y that fits the cache, a fill
of zeros first). The pool keeps at most ``KEEP`` mappings and ``keep_bytes()`` bytes (1/16 of the
machine's memory); the oldest goes back to the system first.

Safe by construction: a mapping returns to the pool only from its lease's finalizer, which
runs when no array, view or buffer export refers to the lease any more.
"""

from __future__ import annotations

import mmap
import os
import threading

import numpy as np

MIN_BYTES = 4 * 2**20  # smaller arrays: numpy's own allocator (its heap reuses memory already)
KEEP = 2  # mappings kept: a loop `Y = regressor(...)` frees the last Y only after the next exists
HUGE_PAGE = 2 * 2**20

_pool: list = []  # (mapping, bytes), oldest first
_lock = threading.RLock()  # a finalizer may run (garbage collection) while this thread holds it


def keep_bytes() -> int:
    """Largest total size the pool keeps: 1/16 of the machine's memory."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 16
    except (ValueError, OSError, AttributeError):
        return 256 * 2**20


class _Lease:
    """Owner of one mapping while arrays use it (their ``base``); gives it back when freed."""

    def __init__(self, mapping: mmap.mmap, size: int, shape: tuple):
        self._mapping = mapping
        self._size = size
        raw = np.frombuffer(mapping, dtype=np.float64, count=int(np.prod(shape)))
        self._raw = raw  # holds the buffer export while the lease lives
        self.__array_interface__ = {"shape": shape, "typestr": "<f8", "data": (raw.ctypes.data, False),
                                    "version": 3}

    def __del__(self):
        mapping, size = self._mapping, self._size
        self._raw = self._mapping = None  # the buffer export ends here
        if mapping is not None:
            try:
                _give_back(mapping, size)
            except Exception:  # noqa: BLE001  (interpreter shutdown: the module is gone; the mapping goes)
                pass


def _give_back(mapping: mmap.mmap, size: int) -> None:
    try:
        mapping.madvise(mmap.MADV_FREE)
    except (AttributeError, OSError, ValueError):
        return  # no lazy freeing here: let the system have it now
    limit = keep_bytes()
    with _lock:
        _pool.append((mapping, size))
        while len(_pool) > KEEP or sum(s for _, s in _pool) > limit:
            _pool.pop(0)  # unmapped when its last reference goes


def empty(shape: tuple) -> tuple[np.ndarray, bool]:
    """(array of float64 ``shape``, recycled). A recycled array holds old numbers (the caller writes
    every one); a new one holds zeros. Below ``MIN_BYTES``: np.zeros, not recycled. Every array
    starts at a page boundary (a whole number of cache lines)."""
    nbytes = 8 * int(np.prod(shape))
    if nbytes < MIN_BYTES or not hasattr(mmap, "MAP_ANONYMOUS"):
        return _zeros_in_whole_lines(shape), False
    taken = None
    with _lock:  # a finalizer may change the pool meanwhile: take an entry only if it is still there
        for entry in sorted(_pool, key=lambda e: e[1]):
            if nbytes <= entry[1] <= 2 * nbytes + HUGE_PAGE and entry in _pool:
                _pool.remove(entry)
                taken = entry
                break
    if taken is not None:
        return np.asarray(_Lease(taken[0], taken[1], shape)), True
    size = -(-nbytes // HUGE_PAGE) * HUGE_PAGE
    mapping = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        mapping.madvise(mmap.MADV_HUGEPAGE)  # one fault per 2 MB where the system allows it
    except (AttributeError, OSError, ValueError):
        pass
    return np.asarray(_Lease(mapping, size, shape)), False


def _zeros_in_whole_lines(shape) -> np.ndarray:
    """np.zeros(shape) starting at a 64-byte boundary, so that every stage of a streamed Y fills
    whole cache lines (no line shared by two stages, read before it is written)."""
    size = int(np.prod(shape))
    buffer = np.zeros(size + 8)
    first = (-(buffer.ctypes.data // 8)) % 8
    return buffer[first:first + size].reshape(shape)
