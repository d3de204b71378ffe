"""How many threads a batched dynamics kernel uses: measured on this machine, never assumed.

More threads are not always faster: two hardware threads of one core (SMT, common in cloud VMs
sold as "2 vCPUs") share its vector units, a kernel that fills a large Y can be bound by the
memory that every core shares, and on a busy machine a second thread waits for a core. So the
kernels of ``regressor`` and ``inverse_dynamics`` run on one thread or on all that Numba may
use (``numba.get_num_threads()``, which the caller sets) according to what they measured:

- below ``PARALLEL_MIN_SAMPLES`` samples, one thread (waking the pool costs more);
- the first large call of a kind (and every ``REPROBE_CALLS``-th after it, as the load of the
  machine changes) computes four equal slices of its own samples back to back, on one thread,
  all threads, all threads, one thread (a load that rises or falls during the probe favours
  one thread, the safe choice, rather than whichever count went first), and keeps the time per
  sample of each: the wall time of an all-threads slice, the CPU time of the calling thread for
  a one-thread slice (its wall time when no other process preempts it; a preemption would slow
  all threads too, and must not make them look faster); a count's figure is the best of its
  last ``KEEP`` slices (``Scaling``), as a busy machine only ever adds time; the first parallel
  slice of a process starts the thread pool, so a short slice goes before it, untimed;
- every large call runs its remaining samples on all threads only when they were faster than one
  by at least ``MARGIN`` (``Scaling.fastest``), else on one.

Why a margin: two free cores make these kernels 1.5-2x faster, but on a machine whose cores are
busy the two counts differ by less than the noise of a probe, and a wrong choice of all threads
costs far more than a wrong choice of one (a parallel loop waits for its slowest thread: 2.5 against
1.45 us/sample for iiwa14's regressor at load 18, bench/dynamics.py, 2026-11-26). Below the margin
one thread is kept, so more threads are taken only for a gain larger than a probe's noise.
Before one-thread slices were timed by their CPU time, solo12's RNEA still went to two threads
at load 22 (1.20 against 0.46 us/sample wall, the same bench): both one-thread slices had been
preempted.

Every sample's numbers are the same whichever count computes it (a sample never depends on the
others or on its place in a block: ``lanes.py``), so the choice changes only the time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba

from dynid.dynamics.lanes import PARALLEL_MIN_SAMPLES

PROBE_SAMPLES = 4096  # samples per probe slice (about 1 ms of work: long against timer noise)
PROBE_ORDER = (1, 0, 0, 1)  # the slices of a probe: 1 = one thread, 0 = all threads
REPROBE_CALLS = 32  # large calls between two probes
KEEP = 6  # slices remembered per thread count (the last three probes)
MARGIN = 1.15  # all threads are used only when one thread's time per sample is this much larger


@dataclass
class Scaling:
    """The seconds per sample of one kernel's last ``KEEP`` probe slices, per thread count (wall
    seconds for all threads, the calling thread's CPU seconds for one: module docstring)."""

    probes: dict = field(default_factory=dict)
    calls: int = 0

    def add(self, threads: int, seconds: float, samples: int) -> None:
        self.probes[threads] = (self.probes.get(threads, []) + [seconds / samples])[-KEEP:]

    def per_sample(self, threads: int) -> float:
        """Best recent wall seconds per sample on ``threads`` threads."""
        return min(self.probes[threads])

    def fastest(self) -> int:
        """The thread count to use: the fastest, when it beats one thread by ``MARGIN``."""
        best = min(self.probes, key=self.per_sample)
        if 1 in self.probes and self.per_sample(best) * MARGIN > self.per_sample(1):
            return 1
        return best


_measured: dict = {}
_pool_started: list = []


def scaling(kind: str, threads: int) -> Scaling:
    """The measurements of kernel ``kind`` (its name and the robot's n: the work and the bytes
    written per sample) with up to ``threads`` threads (this process)."""
    return _measured.setdefault((kind, threads), Scaling())


def run(kind: str, count: int, call) -> None:
    """Compute ``count`` samples with ``call(threads, start, stop)`` (samples start .. stop on
    that many threads), choosing the thread count as the module docstring says."""
    most = numba.get_num_threads()
    if most == 1 or count < PARALLEL_MIN_SAMPLES:
        call(1, 0, count)
        return
    state = scaling(kind, most)
    start = 0
    if len(state.probes) < 2 or state.calls % REPROBE_CALLS == 0:
        if not _pool_started:
            start = PARALLEL_MIN_SAMPLES // 2
            call(most, 0, start)
            _pool_started.append(most)
        probe = min(PROBE_SAMPLES, (count - start) // len(PROBE_ORDER))
        for threads in (one or most for one in PROBE_ORDER):
            clock = time.thread_time if threads == 1 else time.perf_counter
            t0 = clock()
            call(threads, start, start + probe)
            state.add(threads, clock() - t0, probe)
            start += probe
    state.calls += 1
    if start < count:
        call(state.fastest(), start, count)


def with_threads(threads: int, kernel, *args) -> None:
    """``kernel(*args)`` with Numba's parallel loops limited to ``threads`` threads."""
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        kernel(*args)
    finally:
        numba.set_num_threads(previous)
