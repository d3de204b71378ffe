"""How many threads a batched dynamics kernel uses: measured on this machine, never assumed.

More threads are not always faster: two hardware threads of one core (SMT, common in cloud VMs
sold as "2 vCPUs") share its vector units, a kernel that fills a large Y can be bound by the
memory that every core shares, on a busy machine a second thread waits for a core, and waking
the thread pool costs a fixed time per call. So the kernels of ``regressor`` and
``inverse_dynamics`` run on one thread or on all that Numba may use (``numba.get_num_threads()``,
which the caller sets) according to the batch size and what they measured:

- below ``ALL_THREADS_MIN_SAMPLES`` samples, one thread: the pool's wake-up is not paid back,
  and all threads were never measured on so small a batch (their probe slices are this large);
- the first large call of a kind (and every ``REPROBE_CALLS``-th after it, as the load of the
  machine changes) computes four equal slices of its own samples back to back, on one thread,
  all threads, all threads, one thread (a load that rises or falls during the probe favours
  one thread, the safe choice, rather than whichever count went first); a one-thread slice is
  timed by the calling thread's CPU time (its wall time when no other process preempts it; a
  preemption would slow all threads too, and must not make them look faster), an all-threads
  slice by its wall time; the first parallel slice of a process starts the thread pool, so a
  short slice goes before it, untimed;
- a probe can pay costs that later calls do not (a Y in memory new to the process, zeroed by the
  system page by page on its first touch, which no thread count speeds up: er3a's regressor
  probed 3.6 us per sample on one thread and 3.4 on two, then ran at 0.13 and 0.08 on memory
  it had used before, iiwa14's at 0.17 and 0.10; bench/dynamics.py's robots, 2026-11-27): when
  a later call on one thread runs more than ``ONE_TIME_COST`` times faster than the probe's
  one-thread slices did, the next call probes again, instead of keeping one thread for
  ``REPROBE_CALLS`` calls on figures of another regime;
- the rest of a large call goes to all threads only when they were faster than one by at least
  ``MARGIN`` (``Scaling.fastest``), judging one thread by its best recent figure (what it does
  whenever it runs: a busy machine only ever adds time) and all threads by their latest one (what
  the machine allows now); on all threads it runs in segments of ``SEGMENT_SAMPLES``, each timed
  and remembered like a probe slice, so when the machine gets busier during a call (a neighbour
  takes the other core) the next segment already goes back to one thread. The most a wrong
  choice can cost is one segment, about as long as a probe.

Why a margin: two free cores make these kernels 1.5-2x faster, but on a machine whose cores are
busy the two counts differ by less than the noise of a probe, and a wrong choice of all threads
costs far more than a wrong choice of one (a parallel loop waits for its slowest thread: 2.5 against
1.45 us/sample for iiwa14's regressor at load 18, bench/dynamics.py, 2026-11-26). Below the margin
one thread is kept, so more threads are taken only for a gain larger than a probe's noise.
Before one-thread slices were timed by their CPU time, solo12's RNEA still went to two threads
at load 22 (1.20 against 0.46 us/sample wall, the same bench): both one-thread slices had been
preempted; and before all threads were judged by their latest figure and run in segments, the
best of a lucky probe sent iiwa14's regressor to two threads at load 14, 10 % slower than one.

Every sample's numbers are the same whichever count computes it (a sample never depends on the
others or on its place in a block: ``lanes.py``), so the choice changes only the time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba

from dynid.dynamics.lanes import PARALLEL_MIN_SAMPLES

PROBE_SAMPLES = 4096  # samples per probe slice (about 1 ms of work: long against timer noise)
ALL_THREADS_MIN_SAMPLES = PROBE_SAMPLES  # smaller batches: one thread
SEGMENT_SAMPLES = 4 * PROBE_SAMPLES  # samples per timed segment of a call on all threads
PROBE_ORDER = (1, 0, 0, 1)  # the slices of a probe: 1 = one thread, 0 = all threads
REPROBE_CALLS = 32  # large calls between two probes
KEEP = 6  # slices remembered per thread count (the last three probes)
MARGIN = 1.15  # all threads are used only when one thread's time per sample is this much larger
ONE_TIME_COST = 2.0  # a probe whose one-thread figure is this much slower than a later one is done again


@dataclass
class Scaling:
    """The seconds per sample of one kernel's last ``KEEP`` timed slices (probes and segments), per
    thread count (wall seconds for all threads, the calling thread's CPU seconds for one: module
    docstring)."""

    probes: dict = field(default_factory=dict)
    calls: int = 0
    ran: dict = field(default_factory=dict)  # thread count -> samples computed on it, probes included
    probed_one: float = float("inf")  # one thread's best figure in the last probe
    reprobe: bool = False  # the last probe paid a one-time cost: probe again at the next call

    def add(self, threads: int, seconds: float, samples: int) -> None:
        self.probes[threads] = (self.probes.get(threads, []) + [seconds / samples])[-KEEP:]
        self.count(threads, samples)

    def count(self, threads: int, samples: int) -> None:
        """Record that ``samples`` samples were computed on ``threads`` threads (``ran``)."""
        self.ran[threads] = self.ran.get(threads, 0) + samples

    def per_sample(self, threads: int) -> float:
        """Seconds per sample on ``threads`` threads: one thread's best recent figure, the latest
        figure of more threads (module docstring)."""
        return min(self.probes[threads]) if threads == 1 else self.probes[threads][-1]

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
    if most == 1 or count < ALL_THREADS_MIN_SAMPLES:
        call(1, 0, count)
        return
    state = scaling(kind, most)
    start = 0
    if len(state.probes) < 2 or state.calls % REPROBE_CALLS == 0 or state.reprobe:
        state.reprobe = False
        if not _pool_started:
            start = PARALLEL_MIN_SAMPLES // 2
            call(most, 0, start)
            state.count(most, start)
            _pool_started.append(most)
        probe = min(PROBE_SAMPLES, (count - start) // len(PROBE_ORDER))
        for threads in (one or most for one in PROBE_ORDER):
            _timed(state, call, threads, start, start + probe)
            start += probe
        state.probed_one = min(state.probes[1][-2:])
    state.calls += 1
    while start < count:
        threads = state.fastest()
        stop = count
        if threads != 1 and count - start >= SEGMENT_SAMPLES + ALL_THREADS_MIN_SAMPLES:
            stop = start + SEGMENT_SAMPLES  # a remainder too small for all threads joins this segment
        if threads != 1 and stop - start < ALL_THREADS_MIN_SAMPLES:
            threads = 1
        _timed(state, call, threads, start, stop)
        if threads == 1 and state.probed_one > ONE_TIME_COST * state.probes[1][-1]:
            state.reprobe = True  # the probe's figures were not this call's: memory new to the process, a first load
        start = stop


def _timed(state: Scaling, call, threads: int, start: int, stop: int) -> None:
    """``call(threads, start, stop)``, its time per sample added to ``state`` (module docstring)."""
    clock = time.thread_time if threads == 1 else time.perf_counter
    t0 = clock()
    call(threads, start, stop)
    state.add(threads, clock() - t0, stop - start)


def with_threads(threads: int, kernel, *args) -> None:
    """``kernel(*args)`` with Numba's parallel loops limited to ``threads`` threads."""
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        kernel(*args)
    finally:
        numba.set_num_threads(previous)
