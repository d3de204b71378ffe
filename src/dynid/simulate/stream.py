"""A long simulated log in bounded memory (issue 18 section 4): ``simulate_joint_data`` chunk by
chunk, each chunk's columns handed to a streaming writer (``data.convert.write_stream``).

Every step of a joint-space simulation is pointwise in time except the random draws, which come
from two generators carried from chunk to chunk (NumPy's ``Generator`` draws the same numbers in
pieces as at once): the time-stamp jitter (seed + 1) and the torque noise (seed). Friction drift
counts the operating time from the log's first sample (plus ``since_cold``), cycles are numbered over the whole log.
The output is therefore the same, number for number, as a simulation of the whole log at once,
and the memory is O(``CHUNK`` samples) whatever ``duration x rate``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from dynid.data.io import joint_data_columns
from dynid.identify.model import ModelOptions
from dynid.simulate.joint_space import Measurement, simulate_joint_data

CHUNK = 50_000


@dataclass
class Timeline:
    """The sample times of a simulation: ``count`` samples, ``times(i0, i1)`` the (i1 - i0,) times
    of samples i0..i1-1 [s], ``step`` the nominal step [s] (jitter is a fraction of it), and the
    per-sample ``cycle`` and ``stage`` labels of a trajectory file (None otherwise)."""

    count: int
    times: Callable[[int, int], np.ndarray]
    step: float
    cycle: np.ndarray | None = None
    stage: np.ndarray | None = None

    @classmethod
    def uniform(cls, duration: float, rate: float) -> "Timeline":
        """t_i = i / rate for t < duration (as ``np.arange(0, duration, 1 / rate)``)."""
        step = 1.0 / rate
        count = max(int(np.ceil(duration / step)), 0)  # numpy's arange length
        return cls(count, lambda i0, i1: np.arange(i0, i1) * step, step)

    @classmethod
    def of(cls, t: np.ndarray, cycle=None, stage=None) -> "Timeline":
        t = np.asarray(t, dtype=float)
        return cls(t.size, lambda i0, i1: t[i0:i1], float(np.median(np.diff(t))) if t.size > 1 else 0.0, cycle, stage)


def simulated_chunks(robot, timeline: Timeline, sample, options: ModelOptions = ModelOptions(), friction=None,
                     offsets=None, measurement: Measurement = Measurement(), seed: int = 0, drift=None,
                     jitter: float = 0.0, cycles: int = 0, warmup=None, motor_side: bool = False,
                     currents: bool = False, chunk: int = CHUNK, since_cold: float = 0.0) -> Iterator[dict]:
    """Column chunks (contract names, ``data.io.joint_data_columns``; temperatures, motor-side
    columns as asked) of a simulated log, ``chunk`` samples at a time (module docstring).

    sample(t) -> (q, dq, ddq) (N, n) each at times t; jitter: time-stamp jitter, a fraction of the
    step in [0, 1) (uniform in +-jitter/2 steps); cycles > 0 numbers the samples by cycle of that
    many equal parts; warmup: a ``simulate.drift.Warmup`` (temp1..tempn); since_cold: the operating
    time of the first sample [s] (friction drift and warm-up start that long before it)."""
    from dynid.simulate.motor_side import motor_side_columns

    jitter_rng, noise_rng = np.random.default_rng(seed + 1), np.random.default_rng(seed)
    theta, t0 = None, None
    for i0 in range(0, timeline.count, chunk):
        i1 = min(i0 + chunk, timeline.count)
        t = timeline.times(i0, i1)
        if jitter > 0:  # irregular stamps: the motion is sampled at the jittered times
            t = t + jitter_rng.uniform(-0.5, 0.5, t.shape) * jitter * timeline.step
        t0 = float(t[0]) if t0 is None else t0
        q, dq, ddq = sample(t)
        data, _, theta = simulate_joint_data(robot, t, q, dq, ddq, options, friction, offsets, measurement,
                                             seed, theta=theta, drift=drift, cold_start=t0 - since_cold,
                                             rng=noise_rng)
        if timeline.cycle is not None:
            data.cycle = timeline.cycle[i0:i1]
        if timeline.stage is not None:
            data.stage = timeline.stage[i0:i1]
        if cycles > 0:
            data.cycle = np.minimum((np.arange(i0, i1) * cycles) // timeline.count, cycles - 1) + 1
        cols = joint_data_columns(data)
        if warmup is not None:
            cols.update({f"temp{j + 1}": v for j, v in enumerate(warmup.temperatures(t - t0 + since_cold, robot.n).T)})
        yield motor_side_columns(robot, cols, motor_side, currents)
