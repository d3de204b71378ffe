"""Excitation criteria on the base regressor (rigid body + friction + rotor inertia).

For samples (q, dq, ddq) of a trajectory, W = Y_b (N n, b) is the stacked base regressor of
``dynid.identify.base`` (thesis eq. 3.17 restricted to the base parameters). Criteria, all
to be minimized:

- ``cond``: 2-norm condition number of W with unit-norm columns (thesis eq. 2.13-2.14 and
  section 4.2.3; docs/formats.md section 4);
- ``logdet``: -log det F of the information matrix F = W^T W / N (time-averaged, so it does
  not depend on the sampling rate). D-optimal design: for least squares with white noise
  the covariance of the estimate is sigma^2 (W^T W)^-1, so this shrinks the volume of its
  confidence ellipsoid;
- ``weighted``: the mix of both that the thesis cites (section 4.2, refs. [1, 9, 60]) without
  writing out; here  w log(cond) + (1 - w)(-log det F)/b  with w = ``weight`` (0.5 by
  default): both terms are logarithms per parameter, so neither dominates by its units.

``batch_values`` evaluates many trajectories at once: (S, M, n) arrays -> (S,) criteria,
one regressor call for all S M samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import DataError
from dynid.identify.base import BaseParameters, base_parameters, base_regressor, condition_number
from dynid.identify.model import ModelOptions

CRITERIA = ("cond", "logdet", "weighted")
# value given to a rank-deficient candidate so that global search can still rank it
RANK_DEFICIENT = 1e12


@dataclass(frozen=True, eq=False)
class ExcitationModel:
    """A robot, its identification model options and the base parameters they define."""

    robot: object
    options: ModelOptions
    base: BaseParameters

    @classmethod
    def of(cls, robot, options: ModelOptions | None = None, seed: int = 0) -> "ExcitationModel":
        """Default model of the contract: Coulomb + viscous friction, rotor inertia, no offset."""
        options = ModelOptions() if options is None else options
        return cls(robot, options, base_parameters(robot, options, seed=seed))

    @property
    def b(self) -> int:
        return self.base.rank

    def observation_matrix(self, q, dq, ddq) -> np.ndarray:
        """W (N n, b): stacked base regressor of samples (N, n)."""
        return base_regressor(self.robot, q, dq, ddq, self.options, self.base).reshape(-1, self.b)


def cond(model: ExcitationModel, q, dq, ddq) -> float:
    """Condition number of the column-normalized base regressor (SVD, exact)."""
    return condition_number(model.observation_matrix(q, dq, ddq), normalize=True)


def neg_logdet(model: ExcitationModel, q, dq, ddq) -> float:
    """-log det(W^T W / N) of the unnormalized base regressor."""
    w = model.observation_matrix(q, dq, ddq)
    sign, logdet = np.linalg.slogdet(w.T @ w / np.asarray(q).shape[0])
    return float(-logdet) if sign > 0 else float("inf")


def criterion_value(name: str, model: ExcitationModel, q, dq, ddq, weight: float = 0.5) -> float:
    """One criterion of one sampled trajectory (exact SVD for cond)."""
    if name == "cond":
        return cond(model, q, dq, ddq)
    if name == "logdet":
        return neg_logdet(model, q, dq, ddq)
    if name == "weighted":
        return weight * np.log(cond(model, q, dq, ddq)) + (1 - weight) * neg_logdet(model, q, dq, ddq) / model.b
    raise DataError(f"unknown criterion '{name}', expected one of {CRITERIA}")


def batch_normalized_spectrum(model: ExcitationModel, q, dq, ddq, chunk: int = 32) -> np.ndarray:
    """(S, b) ascending eigenvalues of the Gram matrix of the column-normalized W of S
    trajectories (q, dq, ddq: (S, M, n)); singular values are their square roots."""
    q, dq, ddq = (np.asarray(a, dtype=float) for a in (q, dq, ddq))
    out = []
    for s in range(0, q.shape[0], chunk):
        qs, dqs, ddqs = q[s:s + chunk], dq[s:s + chunk], ddq[s:s + chunk]
        s_count, m, n = qs.shape
        yb = base_regressor(model.robot, qs.reshape(-1, n), dqs.reshape(-1, n), ddqs.reshape(-1, n),
                            model.options, model.base)
        w = yb.reshape(s_count, m * n, model.b)
        gram = np.matmul(w.transpose(0, 2, 1), w)
        d = np.sqrt(np.einsum("sii->si", gram))
        d = np.where(d > 0, d, 1.0)
        out.append(np.linalg.eigvalsh(gram / d[:, :, None] / d[:, None, :]))
    return np.concatenate(out)


def batch_values(name: str, model: ExcitationModel, q, dq, ddq, weight: float = 0.5,
                 chunk: int = 32) -> np.ndarray:
    """(S,) objective values of S trajectories, q, dq, ddq: (S, M, n).

    For search speed, ``cond`` is returned as log(cond) computed from the eigenvalues of the
    b x b Gram matrix of the normalized regressor (cond^2 = lambda_max / lambda_min); the
    exact SVD value is ``criterion_value``. Rank-deficient candidates get ``RANK_DEFICIENT``.
    """
    q, dq, ddq = (np.asarray(a, dtype=float) for a in (q, dq, ddq))
    if name not in CRITERIA:
        raise DataError(f"unknown criterion '{name}', expected one of {CRITERIA}")
    if q.shape[0] > chunk:  # bounded memory: the full regressor is (S M, n, p)
        return np.concatenate([batch_values(name, model, q[s:s + chunk], dq[s:s + chunk],
                                            ddq[s:s + chunk], weight, chunk)
                               for s in range(0, q.shape[0], chunk)])
    s_count, m, n = q.shape
    yb = base_regressor(model.robot, q.reshape(-1, n), dq.reshape(-1, n), ddq.reshape(-1, n),
                        model.options, model.base)
    w = yb.reshape(s_count, m * n, model.b)
    gram = np.matmul(w.transpose(0, 2, 1), w)  # (S, b, b)
    out = np.zeros(s_count)
    if name in ("cond", "weighted"):
        d = np.sqrt(np.einsum("sii->si", gram))
        ok = np.all(d > 0, axis=1)
        dsafe = np.where(d > 0, d, 1.0)
        lam = np.linalg.eigvalsh(gram / dsafe[:, :, None] / dsafe[:, None, :])
        good = ok & (lam[:, 0] > lam[:, -1] * 1e-24)
        log_cond = np.full(s_count, np.log(RANK_DEFICIENT))
        log_cond[good] = 0.5 * np.log(lam[good, -1] / lam[good, 0])
        out += log_cond if name == "cond" else weight * log_cond
    if name in ("logdet", "weighted"):
        sign, logdet = np.linalg.slogdet(gram / m)
        nld = np.where(sign > 0, -logdet, RANK_DEFICIENT)
        out += nld if name == "logdet" else (1 - weight) * nld / model.b
    return out
