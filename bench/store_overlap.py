"""Do a core's non-temporal line stores overlap its arithmetic? A synthetic test, one thread.

    .venv/bin/python bench/store_overlap.py [--megabytes 128] [--repeat 5]

The streamed regressor kernel (dynamics/regressor.py, ``write_lines``) computes a block of 32
samples, then writes its lines past the caches: bursts of about a thousand non-temporal line
stores (er3a: 30 lines x 32 samples) between stretches of arithmetic, and its time is the sum of
the two (docs/performance.md). This prints, for bursts of 8 to 960 lines written by
``tiles.stream8`` into a large array, each followed by a stretch of arithmetic sized to take about
as long as the burst (eight independent multiply-add chains, so that the arithmetic runs at the
core's rate), the calling thread's CPU time of: the stores alone, the arithmetic alone, both
interleaved; and the same with the arithmetic storing each result to a small array in L1 (as the
lane kernels store theirs to workspace rows). Both near the larger of the two alone: the stores
overlap the arithmetic; near their sum: they do not.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402  (bench/machine.py)


def kernel():
    import numba

    tiles = importlib.import_module("dynid.dynamics.tiles")
    stream8, store_fence = tiles.stream8, tiles.store_fence

    @numba.njit
    def run(y, line, ws, burst, work, stores, write):
        """Bursts of ``burst`` non-temporal line stores into y (when ``write``), each followed by
        ``work`` rounds of eight multiply-adds (each result also stored to ws when ``stores``)."""
        x0 = x1 = x2 = x3 = x4 = x5 = x6 = x7 = 1.0
        d, total = 0, y.size // 8
        while d + burst <= total:
            if write:
                for k in range(burst):
                    stream8(line, 0, y, 8 * (d + k))
            d += burst
            for i in range(work):
                x0, x1, x2, x3 = x0 * 1.0000001 + 1e-9, x1 * 1.0000001 + 1e-9, x2 * 1.0000001 + 1e-9, x3 * 1.0000001 + 1e-9
                x4, x5, x6, x7 = x4 * 1.0000001 + 1e-9, x5 * 1.0000001 + 1e-9, x6 * 1.0000001 + 1e-9, x7 * 1.0000001 + 1e-9
                if stores:
                    j = (i * 8) & 255
                    ws[j], ws[j + 1], ws[j + 2], ws[j + 3] = x0, x1, x2, x3
                    ws[j + 4], ws[j + 5], ws[j + 6], ws[j + 7] = x4, x5, x6, x7
        store_fence()
        return x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7

    return run


def aligned(size: int) -> np.ndarray:
    """A zero-filled float64 array of ``size`` numbers starting on a 64-byte line."""
    buffer = np.zeros(size + 8)
    return buffer[(-(buffer.ctypes.data // 8)) % 8:][:size]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--megabytes", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    run = kernel()
    y, line, ws = aligned(args.megabytes * 2**20 // 8), aligned(8), np.zeros(512)
    line[:] = 1.0

    def cpu_ms(*how) -> float:
        run(y, line, ws, *how)
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.thread_time()
            run(y, line, ws, *how)
            best = min(best, time.thread_time() - t0)
        return best * 1e3

    print(f"CPU: {machine.cpu_model()}; {args.megabytes} MB written by non-temporal line stores; load {machine.load()}")
    scale = cpu_ms(1, 0, False, True) / cpu_ms(1, 1, False, False)  # multiply-add rounds per line at equal time
    print(f"{'lines per burst':>15} {'arithmetic stores':>18} {'stores alone':>13} {'arithmetic alone':>17} "
          f"{'both':>7} {'sum':>7} {'larger':>7}   CPU ms of one thread")
    for burst in (8, 30, 120, 960):
        work = max(1, round(burst * scale))
        for stores in (False, True):
            alone, arithmetic = cpu_ms(burst, 0, stores, True), cpu_ms(burst, work, stores, False)
            both = cpu_ms(burst, work, stores, True)
            print(f"{burst:15d} {'yes' if stores else 'no':>18} {alone:13.1f} {arithmetic:17.1f} {both:7.1f} "
                  f"{alone + arithmetic:7.1f} {max(alone, arithmetic):7.1f}")
    print(f"load {machine.load()}")


if __name__ == "__main__":
    main()
