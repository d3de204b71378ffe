"""The thread count of the batched dynamics kernels (dynamics/threads.py): chosen from what was
measured, never slower by construction of the choice, and invisible in the numbers: a sample's
regressor and torques are bit for bit the same whatever the thread count, the batch it came in
or its place in a block of SIMD lanes."""

import importlib
import math

import numba
import numpy as np
import pytest

import dynid
from dynid.dynamics.lanes import LANES, PARALLEL_MIN_SAMPLES, kernel_arrays

threads = importlib.import_module("dynid.dynamics.threads")
regressor_module = importlib.import_module("dynid.dynamics.regressor")
rnea_module = importlib.import_module("dynid.dynamics.rnea")


class _Clock:
    """The clocks threads.py reads, advanced only by the fake kernels (no timing noise): wall
    time ``now`` and the calling thread's CPU time ``cpu`` (equal unless a kernel says it was
    preempted)."""

    def __init__(self):
        self.now = 0.0
        self.cpu = None

    def perf_counter(self):
        return self.now

    def thread_time(self):
        return self.now if self.cpu is None else self.cpu


def _fake_kernel(clock: _Clock, seconds_per_sample: dict, calls: list):
    """A kernel that takes seconds_per_sample[threads] per sample on ``clock`` and records
    (threads, start, stop)."""

    def call(count, start, stop):
        calls.append((count, start, stop))
        clock.now += seconds_per_sample[count] * (stop - start)

    return call


@pytest.fixture
def clock(monkeypatch):
    """Fresh measurements, the fake clock, and two threads allowed (restored afterwards)."""
    monkeypatch.setattr(threads, "_measured", {})
    fake = _Clock()
    monkeypatch.setattr(threads, "time", fake)
    previous = numba.get_num_threads()
    numba.set_num_threads(2)
    yield fake
    numba.set_num_threads(previous)


def _covered_once(calls, count):
    spans = sorted((start, stop) for _, start, stop in calls)
    assert spans[0][0] == 0 and spans[-1][1] == count
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


def test_the_faster_thread_count_computes_the_rest_whichever_it_is(clock):
    count = 40_000
    for slow, fast in ((2, 1), (1, 2)):  # SMT-like (more threads slower), then real cores
        calls = []
        threads.run(f"fake-{slow}", count, _fake_kernel(clock, {slow: 2e-6, fast: 2e-7}, calls))
        _covered_once(calls, count)
        used = {c for c, _, _ in calls}
        assert used == {1, 2}  # the probes ran both
        probe_end = max(b for _, a, b in calls if b - a <= threads.PROBE_SAMPLES)
        rest = [(c, a, b) for c, a, b in calls if a >= probe_end]  # one call, or timed segments on all threads
        assert {c for c, _, _ in rest} == {fast} and sum(b - a for _, a, b in rest) > count / 2
        assert threads.scaling(f"fake-{slow}", 2).fastest() == fast
        ran = {c: sum(b - a for k, a, b in calls if k == c) for c in used}
        assert threads.scaling(f"fake-{slow}", 2).ran == ran  # what benches report as the count used
        # the next large call does not probe again: all of it on the faster count
        calls.clear()
        threads.run(f"fake-{slow}", count, _fake_kernel(clock, {slow: 2e-6, fast: 2e-7}, calls))
        _covered_once(calls, count)
        assert {c for c, _, _ in calls} == {fast}


def test_all_threads_only_for_a_gain_larger_than_the_probe_noise(clock):
    """Two threads a little faster than one (a busy machine: within a probe's noise) are not
    taken; clearly faster ones are."""
    for gain, expected in ((1.05, 1), (threads.MARGIN * 0.99, 1), (threads.MARGIN * 1.01, 2), (1.8, 2)):
        kind, calls = f"fake-gain-{gain}", []
        threads.run(kind, 40_000, _fake_kernel(clock, {1: 1e-6, 2: 1e-6 / gain}, calls))
        assert threads.scaling(kind, 2).fastest() == expected
        assert calls[-1][0] == expected  # the rest of the samples went to that count


def test_a_load_changing_during_the_probe_favours_one_thread(clock):
    """Both counts equally fast, the machine's load rising or falling while the probe runs: the
    slices one, all, all, one give the earliest (rising) or the latest (falling) slice to one
    thread, so the drift never makes all threads look faster."""
    for sign in (1.0, -1.0):
        kind, calls = f"fake-drift-{sign}", []

        def call(count, start, stop):  # 1 us per sample, changing by a factor e every 20 ms
            calls.append((count, start, stop))
            clock.now += 1e-6 * math.exp(sign * 50.0 * clock.now) * (stop - start)

        clock.now = 0.0
        threads.run(kind, 40_000, call)
        assert [c for c, _, _ in calls[-5:-1]] == [1, 2, 2, 1]  # the probe's slices, then the rest
        assert threads.scaling(kind, 2).fastest() == 1
        assert calls[-1][0] == 1


def test_a_preempted_one_thread_probe_does_not_make_all_threads_look_faster(clock):
    """A busy machine preempts the one-thread slices (wall twice their CPU time); two threads,
    whose wall time is 1.3x better than that wall but worse than one thread's CPU time, are
    not taken. On a free machine the same two threads are."""
    for preempted, expected in ((True, 1), (False, 2)):
        kind, calls = f"fake-preempted-{preempted}", []
        clock.cpu = 0.0

        def call(count, start, stop):
            calls.append((count, start, stop))
            work = 1e-6 * (stop - start)
            if count == 1:
                clock.cpu += work
                clock.now += 2.0 * work if preempted else work
            else:
                clock.now += (2.0 / 1.3 if preempted else 1.0 / 1.3) * work

        threads.run(kind, 40_000, call)
        assert threads.scaling(kind, 2).fastest() == expected
        assert calls[-1][0] == expected
    clock.cpu = None


def test_small_batches_and_a_single_allowed_thread_never_start_the_pool(clock):
    """Below ALL_THREADS_MIN_SAMPLES one thread, even after all threads measured 10x faster on
    large batches (the pool's wake-up is not paid back on a small batch)."""
    calls = []
    threads.run("fake-small", threads.ALL_THREADS_MIN_SAMPLES - 1, _fake_kernel(clock, {1: 0.0, 2: 0.0}, calls))
    assert calls == [(1, 0, threads.ALL_THREADS_MIN_SAMPLES - 1)]
    threads.run("fake-small", 100_000, _fake_kernel(clock, {1: 1e-6, 2: 1e-7}, []))
    assert threads.scaling("fake-small", 2).fastest() == 2
    calls = []
    threads.run("fake-small", threads.ALL_THREADS_MIN_SAMPLES - 1, _fake_kernel(clock, {1: 1e-6, 2: 1e-7}, calls))
    assert calls == [(1, 0, threads.ALL_THREADS_MIN_SAMPLES - 1)]
    numba.set_num_threads(1)
    calls = []
    threads.run("fake-one", 100_000, _fake_kernel(clock, {1: 0.0}, calls))
    assert calls == [(1, 0, 100_000)]


def test_a_samples_numbers_do_not_depend_on_threads_batch_or_lane():
    robot = dynid.load_robot("er3a")
    rng = np.random.default_rng(8)
    count = 3 * PARALLEL_MIN_SAMPLES + 7
    q, dq, ddq = rng.uniform(-2, 2, (3, count, robot.n))
    constants, parents, slots, gravity = kernel_arrays(robot)
    y_serial, y_parallel = np.zeros((2, count, robot.n, 10 * robot.n))
    regressor_module.regressor_serial(q, dq, ddq, constants, parents, slots, gravity, y_serial, 0, False)
    threads.with_threads(2, regressor_module._regressor_parallel, q, dq, ddq, constants, parents, slots, gravity,
                         y_parallel, 2, 0, False)
    assert np.array_equal(y_serial, y_parallel)
    shift = LANES // 2 + 3  # every sample in another lane of another block
    assert np.array_equal(dynid.regressor(robot, q[shift:], dq[shift:], ddq[shift:]), y_serial[shift:])
    assert np.array_equal(dynid.regressor(robot, q[5], dq[5], ddq[5]), y_serial[5])
    theta = robot.parameters().reshape(-1, 10)
    tau_serial, tau_parallel = np.zeros((2, count, robot.n))
    no_pairs = np.full_like(slots, -1)
    rnea_module._rnea_serial(q, dq, ddq, constants, parents, no_pairs, gravity, theta, tau_serial)
    threads.with_threads(2, rnea_module._rnea_parallel, q, dq, ddq, constants, parents, no_pairs, gravity, theta,
                         tau_parallel, 2)
    assert np.array_equal(tau_serial, tau_parallel)
    assert np.array_equal(dynid.inverse_dynamics(robot, q[shift:], dq[shift:], ddq[shift:]), tau_serial[shift:])


def test_the_choice_follows_the_machine_when_it_changes(clock):
    """A neighbour that leaves the second core (or takes it) changes the choice within
    three re-probes (the KEEP slices they keep)."""
    busy, free = {1: 2e-7, 2: 2e-6}, {1: 2e-7, 2: 1e-7}
    for speeds, expected in ((busy, 1), (free, 2), (busy, 1)):
        for _ in range(threads.KEEP // 2 * threads.REPROBE_CALLS):
            threads.run("fake-changing", 20_000, _fake_kernel(clock, speeds, []))
        assert threads.scaling("fake-changing", 2).fastest() == expected


def test_a_machine_that_gets_busy_during_a_call_moves_the_rest_of_it_to_one_thread(clock):
    """All threads 2x faster until a neighbour takes the second core in the middle of a long call
    (all threads then 10x slower): the call's next segment already runs on one thread, so the
    wrong choice costs at most one segment; the next call stays on one thread."""
    busy_from, calls, slowed = 20e-3, [], []  # after the probe (12 ms), during the first segment

    def call(count, start, stop):
        calls.append((count, start, stop))
        for _ in range(stop - start):  # sample by sample: the neighbour arrives within a call
            clock.now += 1e-6 if count == 1 else (5e-7 if clock.now < busy_from else 1e-5)
        slowed.append(count == 2 and clock.now > busy_from)

    count = 12 * threads.SEGMENT_SAMPLES
    threads.run("fake-busy", count, call)
    _covered_once(calls, count)
    first = slowed.index(True)  # the segment during which the neighbour came
    assert calls[first][2] - calls[first][1] <= threads.SEGMENT_SAMPLES
    assert [c for c, _, _ in calls[first + 1:]] == [1]  # the rest of the call in one piece on one thread
    assert calls[-1][2] - calls[-1][1] > count / 2
    calls.clear()
    threads.run("fake-busy", count, call)
    assert calls == [(1, 0, count)]


def test_a_probe_that_paid_a_one_time_cost_is_done_again_at_the_next_call(clock):
    """The first call writes a Y in memory new to the process (page faults: no thread count is
    faster: 3.6 against 3.4 us per sample for er3a's regressor); from the second call on the memory
    is warm and two threads are 1.7x faster (iiwa14's: 0.18 against 0.11). The second call, on one thread, runs 20x faster than the
    probe did, so the third probes again and takes two threads, not after REPROBE_CALLS calls."""
    count, cold, warm = 20_000, {1: 3.6e-6, 2: 3.4e-6}, {1: 1.8e-7, 2: 1.06e-7}
    threads.run("fake-fresh", count, _fake_kernel(clock, cold, []))
    assert threads.scaling("fake-fresh", 2).fastest() == 1  # right for that call: its memory was new
    calls = []
    threads.run("fake-fresh", count, _fake_kernel(clock, warm, calls))
    assert calls == [(1, 0, count)]  # no probe: figures of one thread only
    calls.clear()
    threads.run("fake-fresh", count, _fake_kernel(clock, warm, calls))
    assert {c for c, _, _ in calls} == {1, 2} and threads.scaling("fake-fresh", 2).fastest() == 2
    calls.clear()
    threads.run("fake-fresh", count, _fake_kernel(clock, warm, calls))
    assert {c for c, _, _ in calls} == {2}  # and no probe again while the figures hold


def test_regressor_keeps_its_measurements_under_the_name_benches_read(monkeypatch):
    """bench/dynamics.py reports the thread count from ``threads.scaling(regressor.thread_kind(...))``:
    the library must keep its measurements under that very name."""
    robot = dynid.load_robot("er3a")
    kinds = []

    def run(kind, count, call):
        kinds.append(kind)
        call(1, 0, count)

    monkeypatch.setattr(threads, "run", run)
    q = np.zeros((8, robot.n))
    dynid.regressor(robot, q, q, q, folded_kernel=False)
    assert kinds == [regressor_module.thread_kind(robot, 0, False)]

