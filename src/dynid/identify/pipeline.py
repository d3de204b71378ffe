"""The identification pipeline: data -> preprocessing -> base regressor -> estimator.

Two paths give the same numbers:

- ``accumulate_file`` streams a file in chunks (``data.stream``), evaluates the full
  regressor ``block`` samples at a time and adds them to per-joint normal equations, so any
  log length runs in bounded memory (OLS, WLS and PC need nothing else);
- ``regressor_arrays`` builds the base regressor of an in-memory ``JointData`` (IRLS and
  per-cycle identification need the samples).

Samples of a joint moving slower than ``Preprocessing.min_velocity`` are left out of the fit
(thesis 5.1.3: friction is least accurate at low velocity), and so are ``edge_samples`` at
both ends of a log, where filtered derivatives are distorted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.data.columns import ColumnMapping, JointData
from dynid.data.preprocess import (
    Preprocessing, edge_mask, edge_samples, prepare, sample_rate, segments, velocity_mask,
)
from dynid.data.stream import prepared_chunks
from dynid.dynamics import regressor as rigid_body_regressor
from dynid.errors import DataError, DynidError
from dynid.excite.threads import single_blas_thread
from dynid.identify.base import BaseParameters, identifiability_table
from dynid.identify.estimators import ESTIMATORS, Estimator
from dynid.identify.gram import RegressorGram
from dynid.identify.model import ModelOptions, identification_regressor, joint_column_indices, joint_columns
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
                gram: RegressorGram, scratch: dict, keep: np.ndarray | None = None) -> int:
    """Add prepared samples (those with ``keep``, (N,), when given) to ``gram`` block by block;
    returns the number of samples added. The rigid-body regressor is written into a reused
    buffer (its zero blocks stay zero)."""
    if data.tau is None:
        raise DataError(f"{data.source}: no torques (tau1..taun) or currents (i1..in) to identify from")
    count = 0
    for s in range(0, len(data), BLOCK):
        sl = slice(s, s + BLOCK)
        m = len(data.t[sl])
        if "rigid" not in scratch:
            scratch["rigid"] = np.zeros((BLOCK, robot.n, 10 * robot.n))
        rigid = scratch["rigid"][:m]  # one reused buffer (a leading slice stays C-contiguous)
        rigid_body_regressor(robot, data.q[sl], data.dq[sl], data.ddq[sl], out=rigid)
        own = data.own[sl] if data.own is not None else joint_columns(data.dq[sl], data.ddq[sl], options)
        tau, dq, kb = data.tau[sl], data.dq[sl], None if keep is None else keep[sl]
        gram.add(rigid, own, tau, row_mask(dq, kb, prep))
        count += tau.shape[0] if kb is None else int(kb.sum())
    return count


def accumulate_file(robot, path, options: ModelOptions, base: BaseParameters,
                    mapping: ColumnMapping = ColumnMapping(), prep: Preprocessing = Preprocessing(),
                    chunk_rows: int = 50_000, nan: str = "drop") -> Accumulated:
    """Stream ``path`` through preprocessing into per-joint normal equations."""
    gram = RegressorGram(robot, options, base, identifiability_table(robot, options))
    scratch: dict = {}
    samples, notes, fs, trim, first = 0, [], float("nan"), 0, True
    pending = None  # one chunk of look-ahead, to know which chunk is the last

    def flush(chunk, last):
        keep = edge_mask(len(chunk), trim, head=first, tail=last)
        return add_samples(robot, chunk, options, prep, gram, scratch, keep)

    # OpenBLAS threads spinning beside the regressor's Numba threads cost 30x on few cores
    with single_blas_thread():
        columns = lambda dq, ddq: joint_columns(dq, ddq, options)  # noqa: E731
        for chunk in prepared_chunks(path, robot, mapping, prep, chunk_rows, nan=nan, joint_columns=columns):
            notes.extend(chunk.notes)
            if len(chunk) == 0:
                continue
            if not np.isfinite(fs) and len(chunk) > 2:
                fs = sample_rate(chunk.t)
                trim = edge_samples(prep, fs)
            if pending is not None:
                samples += flush(pending, last=False)
                first = False
            pending = chunk
        if pending is not None:
            samples += flush(pending, last=True)
    if samples == 0:
        raise DataError(f"{path}: no samples left after preprocessing")
    return Accumulated(gram.to_normal_equations(base), samples, fs, notes)


def regressor_arrays(robot, data: JointData, options: ModelOptions, base: BaseParameters,
                     prep: Preprocessing) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(Y_b (N, n, b), tau (N, n), mask (N, n)) of prepared in-memory data (mask: rows to fit)."""
    if data.tau is None:
        raise DataError(f"{data.source}: no torques (tau1..taun) or currents (i1..in) to identify from")
    y = identification_regressor(robot, data.q, data.dq, data.ddq, options)
    if data.own is not None:  # exactly filtered before decimation
        y[:, np.arange(robot.n)[:, None], joint_column_indices(robot, options)] = data.own
    tau, dq = data.tau, data.dq
    keep = edge_mask(len(data), edge_samples(prep, sample_rate(data.t)))
    return np.ascontiguousarray(y[..., base.independent]), tau, row_mask(dq, keep, prep)


def fit_data(robot, data: JointData, options: ModelOptions, base: BaseParameters,
             estimator: Estimator, prep: Preprocessing = Preprocessing(), prepared: bool = False) -> Estimator:
    """Prepare (unless ``prepared``) in-memory data and fit ``estimator`` to it."""
    ready = data if prepared else prepare(data, prep, joint_columns=lambda dq, ddq: joint_columns(dq, ddq, options))
    y, tau, mask = regressor_arrays(robot, ready, options, base, prep)
    return estimator.fit(y, tau, mask)


def per_cycle(robot, data: JointData, options: ModelOptions, base: BaseParameters, make, by: str = "cycle",
              prep: Preprocessing = Preprocessing()) -> dict:
    """Identify each cycle (or stage) separately; cross-cycle mean, std and %spread (thesis 5.1.5).

    make(): a fresh estimator. Returns {"labels", "values" (cycles, b), "mean", "std",
    "relative_spread" (100 std / |mean|), "failed": {label: reason}}.
    """
    ready = prepare(data, prep, joint_columns=lambda dq, ddq: joint_columns(dq, ddq, options))
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
