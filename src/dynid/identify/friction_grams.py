"""The Gram matrices of the friction model choice (``identify.stribeck`` steps 2-4).

Per fold of contiguous time k and joint j, the Gram S_kj of

    [Y_b,j | g_j(v_1) .. g_j(v_M) | dq_j^2 s_j, dq_j^3 | tau_j]

(Y_b the base regressor of the Coulomb-viscous model; g the Stribeck columns (S2) of the
velocity grid; the polynomial model's columns, thesis eq. 3.10): the normal equations of every
candidate friction model but the load-dependent one are sub-blocks of it. ``RegressorBlocks``
gives the rows block by block (the base regressor kept in memory when it fits in
``CACHE_BYTES``, so the passes of the load torque's fixed points, ``identify.load_friction``,
do not recompute it: the load-dependent model's column depends on the fit, which is refitted per
fold from these rows).
"""

from __future__ import annotations

import math

import numpy as np

from dynid.data.preprocess import Preprocessing, prepared_rate
from dynid.errors import DataError
from dynid.identify.crossval import fold_labels
from dynid.identify.model import ModelOptions, log_regressor
from dynid.identify.pipeline import friction_fit_rows

BLOCK = 8192  # samples per regressor evaluation
CACHE_BYTES = 256 * 2**20  # base regressor blocks kept in memory for the passes of the load fit, at most


class FrictionGrams:
    """Per fold and joint the Gram (folds, n, Q, Q) of [Y_b | g(v_1..v_M) | poly | tau] (step 2)."""

    def __init__(self, n: int, b: int, grid: np.ndarray, folds: int):
        self.n, self.b, self.grid, self.folds = n, b, grid, folds
        self.m = grid.size
        self.q = b + self.m + 3
        self.S = np.zeros((folds, n, self.q, self.q))
        self.rows = np.zeros((folds, n), dtype=np.int64)

    @property
    def stribeck(self) -> np.ndarray:
        return self.b + np.arange(self.m)

    @property
    def polynomial(self) -> np.ndarray:
        return self.b + self.m + np.arange(2)

    def add(self, yb: np.ndarray, dq: np.ndarray, sign: np.ndarray, tau: np.ndarray, keep: np.ndarray,
            fold: np.ndarray) -> None:
        """Rows of one block: yb (N, n, b) base regressor, dq, sign, tau (N, n), keep (N, n), fold (N,)."""
        z = self._rows(yb, dq, sign, tau)
        for k in range(self.folds):  # loop over folds; each is one batched product over joints
            rows = keep & (fold == k)[:, None]
            zk = z * rows[..., None]
            self.S[k] += np.einsum("tja,tjb->jab", zk, zk, optimize=True)
            self.rows[k] += rows.sum(axis=0)

    def _rows(self, yb, dq, sign, tau) -> np.ndarray:
        z = np.empty(yb.shape[:2] + (self.q,))
        z[..., :self.b] = yb
        z[..., self.stribeck] = np.exp(-np.square(dq[..., None] / self.grid)) * sign[..., None]  # (S2)
        z[..., self.polynomial] = np.stack([dq * dq * sign, dq**3], axis=-1)  # thesis eq. 3.10
        z[..., -1] = tau
        return z


class RegressorBlocks:
    """The rows of step 2 over prepared logs ``readies`` (Coulomb-viscous ``options``), block by
    block: (yb (N, n, b) base regressor, dq, sign, tau, keep (N, n), fold (N,)); iterated once per
    pass, the regressor kept in memory when it fits in ``CACHE_BYTES`` (the load fit's passes)."""

    def __init__(self, robot, readies, options: ModelOptions, base, prep: Preprocessing, folds: int):
        self.robot, self.readies, self.options, self.base, self.prep = robot, readies, options, base, prep
        fs = prepared_rate(readies[0])
        cutoff = prep.lowpass_hz or fs / 10.0
        gap = min(math.ceil(fs / cutoff), max(sum(len(r) for r in readies) // (20 * folds), 1))
        self.labels = fold_labels([len(r) for r in readies], folds, gap)
        rows = sum(len(r) for r in readies)
        self.cache = [] if rows * robot.n * base.rank * 8 <= CACHE_BYTES else None
        self.complete = False

    def __iter__(self):
        if self.complete:
            yield from self.cache
            return
        for block in self._blocks():
            if self.cache is not None:
                self.cache.append(block)
            yield block
        self.complete = self.cache is not None

    def _blocks(self):
        robot, options, prep = self.robot, self.options, self.prep
        for ready, fold in zip(self.readies, self.labels):
            if ready.tau is None:
                raise DataError(f"{ready.source}: no torques (tau1..taun) or currents (i1..in) to identify from")
            mask = friction_fit_rows(robot, ready, prep)  # without the fit's rests: nothing to choose by there
            sign = np.tanh(ready.dq / options.smooth_sign) if options.smooth_sign > 0 else np.sign(ready.dq)
            for s in range(0, len(ready), BLOCK):
                sl = slice(s, s + BLOCK)
                y = log_regressor(robot, ready, sl, options)
                yield (np.ascontiguousarray(y[..., self.base.independent]), ready.dq[sl], sign[sl], ready.tau[sl],
                       mask[sl], fold[sl])


def accumulate(blocks: RegressorBlocks, grid: np.ndarray, folds: int) -> FrictionGrams:
    """The Grams of step 2 over ``blocks``."""
    grams = FrictionGrams(blocks.robot.n, blocks.base.rank, grid, folds)
    for yb, dq, sign, tau, keep, fold in blocks:
        grams.add(yb, dq, sign, tau, keep, fold)
    return grams

