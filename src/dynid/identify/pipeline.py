"""The identification pipeline: data -> preprocessing -> base regressor -> estimator.

Two paths give the same numbers:

- ``accumulate_file`` streams a file in chunks (``data.stream``); worker threads (one per
  core) evaluate the regressor ``BLOCK`` samples at a time and add them to per-joint Gram
  matrices (``gram.py``) while the main thread reads and filters the next chunk, so any log
  length runs in bounded memory (OLS, WLS and PC need nothing else);
- ``regressor_arrays`` builds the base regressor of an in-memory ``JointData`` (IRLS and
  per-cycle identification need the samples).

Samples of a joint moving slower than ``Preprocessing.min_velocity`` are left out of the fit
(thesis 5.1.3: friction is least accurate at low velocity), and so are ``edge_samples`` at
both ends of a log, where filtered derivatives are distorted.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from dynid.data.columns import ColumnMapping, JointData
from dynid.data.preprocess import (
    Preprocessing, edge_mask, edge_samples, prepare, sample_rate, segments, velocity_mask,
)
from dynid.data.stream import prepared_chunks
from dynid.errors import DataError, DynidError
from dynid.excite.threads import single_blas_thread
from dynid.identify.base import BaseParameters, identifiability_table
from dynid.identify.block_regressor import rigid_regressor_block
from dynid.identify.estimators import ESTIMATORS, Estimator
from dynid.identify.gram import RegressorGram
from dynid.identify.model import ModelOptions, identification_regressor, motor_columns, place_motor_columns
from dynid.identify.normal_equations import NormalEquations

ESTIMATOR_NAMES = ("ols", "wls", "irls", "pc")
BLOCK = 2048  # samples per regressor evaluation: its scratch (BLOCK x n x 10 n) stays in cache for the Gram


def make_estimator(name: str, robot, options: ModelOptions, base: BaseParameters, **kw) -> Estimator:
    """An estimator by name: ols | wls | irls | pc (keyword options passed through)."""
    if name == "pc":
        from dynid.identify.physical import PhysicallyConsistent
        return PhysicallyConsistent(robot, options, base, **kw)
    if name not in ESTIMATORS:
        raise DataError(f"estimator '{name}' unknown, expected one of {list(ESTIMATOR_NAMES)}")
    for pc_only in ("prior", "bound"):
        kw.pop(pc_only, None)
    return ESTIMATORS[name](names=base.names, **kw)


@dataclass
class Accumulated:
    """Result of a streaming pass: the sums, the sample count, the rate and the notes."""

    ne: NormalEquations
    samples: int
    fs: float
    notes: list[str]


def row_mask(dq: np.ndarray, keep: np.ndarray | None, prep: Preprocessing) -> np.ndarray | None:
    """(N, n) rows used in a fit: away from the log's ends and not slower than min_velocity."""
    mask = None if keep is None else np.repeat(keep[:, None], dq.shape[1], axis=1)
    if prep.min_velocity > 0:
        moving = velocity_mask(dq, prep.min_velocity)
        mask = moving if mask is None else mask & moving
    return mask


def add_samples(robot, data: JointData, options: ModelOptions, prep: Preprocessing,
                gram: RegressorGram, buffer: np.ndarray, keep: np.ndarray | None = None) -> int:
    """Add prepared samples (those with ``keep``, (N,), when given) to ``gram`` block by block;
    returns the number of samples added. ``buffer`` (BLOCK, n, 10 n) zeros, reused: the
    regressor kernel rewrites its non-zero blocks. Runs without the GIL in its heavy parts."""
    if data.tau is None:
        raise DataError(f"{data.source}: no torques (tau1..taun) or currents (i1..in) to identify from")
    count = 0
    for s in range(0, len(data), BLOCK):
        sl = slice(s, s + BLOCK)
        m = len(data.t[sl])
        rigid = buffer[:m]  # a leading slice stays C-contiguous
        rigid_regressor_block(robot, np.ascontiguousarray(data.q[sl]), np.ascontiguousarray(data.dq[sl]),
                              np.ascontiguousarray(data.ddq[sl]), rigid)
        own = data.own[sl] if data.own is not None else motor_columns(robot, data.dq[sl], data.ddq[sl], options)
        tau, dq, kb = data.tau[sl], data.dq[sl], None if keep is None else keep[sl]
        gram.add(rigid, own, tau, row_mask(dq, kb, prep))
        count += tau.shape[0] if kb is None else int(kb.sum())
    return count


class _Workers:
    """Worker threads that each own a Gram accumulator and a regressor buffer; a chunk is cut
    into one contiguous share per worker. At most one chunk is in flight while the caller
    reads and filters the next one, so memory stays bounded."""

    def __init__(self, robot, options, base, prep, count: int):
        table = identifiability_table(robot, options)
        self.robot, self.options, self.prep = robot, options, prep
        self.grams = [RegressorGram(robot, options, base, table) for _ in range(count)]
        self.buffers = [np.zeros((BLOCK, robot.n, 10 * robot.n_bodies)) for _ in range(count)]
        self.pool = ThreadPoolExecutor(max_workers=count)
        self.running: list = []
        self.samples = 0

    def submit(self, chunk: JointData, keep: np.ndarray) -> None:
        self.wait()
        count = len(self.grams)
        share = -(-len(chunk) // (count * BLOCK)) * BLOCK  # whole blocks per worker
        for w in range(count):
            part = slice(w * share, (w + 1) * share)
            if part.start >= len(chunk):
                break
            self.running.append(self.pool.submit(add_samples, self.robot, chunk.select(part), self.options,
                                                 self.prep, self.grams[w], self.buffers[w], keep[part]))

    def wait(self) -> None:
        for future in self.running:
            self.samples += future.result()
        self.running = []

    def finish(self, base) -> NormalEquations:
        self.wait()
        self.pool.shutdown()
        total = self.grams[0]
        for other in self.grams[1:]:
            total.merge(other)
        return total.to_normal_equations(base)


def stream_workers() -> int:
    """Worker threads of the streaming accumulation: the number of cores (at most 4)."""
    return max(1, min(4, os.cpu_count() or 1))


def accumulate_file(robot, path, options: ModelOptions, base: BaseParameters,
                    mapping: ColumnMapping = ColumnMapping(), prep: Preprocessing = Preprocessing(),
                    chunk_rows: int = 50_000, nan: str = "drop", workers: int | None = None) -> Accumulated:
    """Stream ``path`` through preprocessing into per-joint normal equations (``workers``
    threads, default one per core, compute regressors and Gram matrices meanwhile)."""
    pool = _Workers(robot, options, base, prep, workers or stream_workers())
    notes, fs, trim, first = [], float("nan"), 0, True
    pending = None  # one chunk of look-ahead, to know which chunk is the last
    # single BLAS thread: the workers are the parallelism (BLAS threads would contend)
    with single_blas_thread():
        try:
            columns = lambda dq, ddq: motor_columns(robot, dq, ddq, options)  # noqa: E731
            for chunk in prepared_chunks(path, robot, mapping, prep, chunk_rows, nan=nan, joint_columns=columns):
                notes.extend(chunk.notes)
                if len(chunk) == 0:
                    continue
                if not np.isfinite(fs) and len(chunk) > 2:
                    fs = sample_rate(chunk.t)
                    trim = edge_samples(prep, fs)
                if pending is not None:
                    pool.submit(pending, edge_mask(len(pending), trim, head=first, tail=False))
                    first = False
                pending = chunk
            if pending is not None:
                pool.submit(pending, edge_mask(len(pending), trim, head=first, tail=True))
            ne = pool.finish(base)
        finally:
            pool.pool.shutdown(wait=True, cancel_futures=True)
    if pool.samples == 0:
        raise DataError(f"{path}: no samples left after preprocessing")
    return Accumulated(ne, pool.samples, fs, notes)


def regressor_arrays(robot, data: JointData, options: ModelOptions, base: BaseParameters,
                     prep: Preprocessing) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(Y_b (N, n, b), tau (N, n), mask (N, n)) of prepared in-memory data (mask: rows to fit)."""
    if data.tau is None:
        raise DataError(f"{data.source}: no torques (tau1..taun) or currents (i1..in) to identify from")
    y = identification_regressor(robot, data.q, data.dq, data.ddq, options)
    if data.own is not None:  # exactly filtered before decimation
        place_motor_columns(robot, options, data.own, y)
    tau, dq = data.tau, data.dq
    keep = edge_mask(len(data), edge_samples(prep, sample_rate(data.t)))
    return np.ascontiguousarray(y[..., base.independent]), tau, row_mask(dq, keep, prep)


def fit_data(robot, data: JointData, options: ModelOptions, base: BaseParameters,
             estimator: Estimator, prep: Preprocessing = Preprocessing(), prepared: bool = False) -> Estimator:
    """Prepare (unless ``prepared``) in-memory data and fit ``estimator`` to it."""
    ready = data if prepared else prepare(data, prep, joint_columns=lambda dq, ddq: motor_columns(robot, dq, ddq, options))
    y, tau, mask = regressor_arrays(robot, ready, options, base, prep)
    return estimator.fit(y, tau, mask)


def per_cycle(robot, data: JointData, options: ModelOptions, base: BaseParameters, make, by: str = "cycle",
              prep: Preprocessing = Preprocessing(), prepared: bool = False) -> dict:
    """Identify each cycle (or stage) separately; cross-cycle mean, std and %spread (thesis 5.1.5).

    make(): a fresh estimator; prepared: ``data`` is already preprocessed (e.g. a selection of
    cycles of a prepared log). Returns {"labels", "values" (cycles, b), "mean", "std",
    "relative_spread" (100 std / |mean|), "failed": {label: reason}}.
    """
    ready = data if prepared else prepare(data, prep, joint_columns=lambda dq, ddq: motor_columns(robot, dq, ddq, options))
    values, labels, failed = [], [], {}
    for label, idx in segments(ready, by):
        try:
            est = fit_data(robot, ready.select(idx), options, base, make(), prep, prepared=True)
        except (DynidError, np.linalg.LinAlgError) as exc:  # a short or static cycle: reported, not fatal
            failed[label] = str(exc)
            continue
        values.append(est.coef_)
        labels.append(label)
    if not values:
        raise DataError(f"{data.source}: no {by} could be identified: {failed}")
    v = np.array(values)
    mean, std = v.mean(axis=0), v.std(axis=0, ddof=1) if len(v) > 1 else np.zeros(v.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = 100.0 * std / np.abs(mean)
    return {"by": by, "labels": labels, "values": v, "mean": mean, "std": std,
            "relative_spread": spread, "failed": failed}
