"""Base parameters: the identifiable linear combinations of the full parameters.

Numerical method (thesis 3.2 and appendix D; Gautier 1990): stack the identification
regressor of ``samples`` random states into W (N n, p), scale every column to unit norm
(thesis eq. 2.13-2.14, so the tolerance does not depend on units), and

1. rank: QR with column pivoting, W H P = Q R (thesis eq. 3.27); the rank r is the number of
   |R_kk| > tol |R_11|, with tol = 1e-8 by default (|R_kk| of a structurally dependent
   column is ~1e-15 on random states, of an independent one rarely below 1e-4);
2. which columns: the unpivoted QR of W H in the natural parameter order keeps column j when
   its distance |R_jj| to the span of the earlier columns exceeds tol. This keeps the first
   parameter of each dependent group (``Izz1`` before ``Iyy2`` before ``Ia1``), which gives
   the familiar names; the count must equal the pivoted rank or the tolerance is reported
   as unsuitable;
3. the dependent columns are combinations W_2 = W_1 K_d (least squares, exact up to
   rounding), so tau = W_1 (theta_1 + K_d theta_2) and beta = K theta with
   K = [I  K_d] in the original column order (entries below 1e-10 relative set to 0).

A base parameter merged with others gets the suffix ``R``:
``Izz1R = Izz1 + Ia1 + Iyy2 + ...``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from dynid.errors import DataError, IllConditionedError
from dynid.identify.threads import single_blas_thread
from dynid.identify.model import ModelOptions, identification_regressor, parameter_names

DEFAULT_TOL = 1e-8


@dataclass(frozen=True, eq=False)
class BaseParameters:
    """The base parameters of a robot and identification model.

    independent: (b,) indices of the full parameters kept as representatives
    K: (b, p) with beta = K theta (full -> base)
    names: (b,) names, with the linear combination in ``combinations``
    standard_names: (p,) names of the full parameters
    rank: b
    singular_values: (p,) of the column-normalized random-state regressor (SVD, thesis 3.2.2)
    condition_number: of the column-normalized base regressor on the random states
    """

    independent: np.ndarray
    K: np.ndarray
    names: list[str]
    combinations: list[str]
    standard_names: list[str]
    rank: int
    singular_values: np.ndarray
    condition_number: float
    options: ModelOptions = field(default_factory=ModelOptions)
    tol: float = DEFAULT_TOL

    def to_base(self, theta: np.ndarray) -> np.ndarray:
        """beta (b,) = K theta."""
        return self.K @ np.asarray(theta, dtype=float)

    def to_dict(self) -> dict:
        return {"independent": self.independent.tolist(), "K": self.K.tolist(),
                "names": self.names, "combinations": self.combinations,
                "standard_names": self.standard_names, "rank": self.rank, "tol": self.tol}

    @classmethod
    def from_dict(cls, d: dict, options: ModelOptions) -> "BaseParameters":
        return cls(np.asarray(d["independent"], dtype=np.int64), np.asarray(d["K"], dtype=float),
                   list(d["names"]), list(d["combinations"]), list(d["standard_names"]),
                   int(d["rank"]), np.array([]), float("nan"), options, float(d.get("tol", DEFAULT_TOL)))


def random_states(robot, samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random (q, dq, ddq) (samples, n): q uniform in the limits (or +-pi, +-1 m), dq, ddq ~ N(0, 1)."""
    rng = np.random.default_rng(seed)
    default = np.where(robot.is_revolute, np.pi, 1.0)
    lo = np.where(np.isfinite(robot.limit_array("q_min")), robot.limit_array("q_min"), -default)
    hi = np.where(np.isfinite(robot.limit_array("q_max")), robot.limit_array("q_max"), default)
    q = rng.uniform(lo, hi, (samples, robot.n))
    dq = rng.normal(size=(samples, robot.n))
    ddq = rng.normal(size=(samples, robot.n))
    return q, dq, ddq


def column_normalize(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale the columns of W (rows, p) to unit 2-norm (thesis eq. 2.13-2.14).

    Returns (W H, h) with H = diag(h), h_k = 1/||w_k|| (1 for a zero column), so that
    W theta = (W H)(H^-1 theta) (eq. 2.15) and theta = H theta_bar (eq. 2.16).
    """
    norms = np.linalg.norm(w, axis=0)
    h = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 1.0)
    return w * h, h


def condition_number(w: np.ndarray, normalize: bool = True) -> float:
    """2-norm condition number of W (rows, b), of its column-normalized form by default."""
    if normalize:
        w, _ = column_normalize(w)
    s = np.linalg.svd(w, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def _format_term(coef: float, name: str, first: bool) -> str:
    sign = "-" if coef < 0 else ("" if first else "+")
    mag = abs(coef)
    body = name if abs(mag - 1.0) < 1e-9 else f"{mag:.6g}*{name}"
    return f"{sign} {body}".strip() if first else f"{sign} {body}"


def base_parameters(robot, options: ModelOptions = ModelOptions(), seed: int = 0,
                    tol: float | None = None, samples: int | None = None) -> BaseParameters:
    """Base parameters of ``robot`` with model ``options`` (see the module docstring).

    seed: random states; tol: relative pivot tolerance (default 1e-8); samples: number of
    random states (default max(200, 4 p / n)).
    """
    tol = DEFAULT_TOL if tol is None else float(tol)
    if not 0.0 < tol < 1.0:
        raise DataError(f"--tol {tol:g}: the relative pivot tolerance must be between 0 and 1 (default {DEFAULT_TOL:g})")
    names = parameter_names(robot, options)
    p = len(names)
    samples = samples or max(200, 4 * p // robot.n)
    q, dq, ddq = random_states(robot, samples, seed)
    w = identification_regressor(robot, q, dq, ddq, options).reshape(-1, p)
    with single_blas_thread():  # small factorizations: threads only contend with Numba's
        return _base_from_regressor(robot, w, names, tol, options)


def _base_from_regressor(robot, w: np.ndarray, names: list[str], tol: float, options) -> BaseParameters:
    p = len(names)
    norms = np.linalg.norm(w, axis=0)
    zero = norms <= 1e-10 * norms.max()  # columns that are rounding noise (parameter never acts)
    w = np.where(zero, 0.0, w)
    wn, _ = column_normalize(w)
    r_piv = scipy.linalg.qr(wn, mode="r", pivoting=True)[0]
    diag = np.abs(np.diag(r_piv))
    rank = int(np.sum(diag > tol * diag[0]))
    r_nat = scipy.linalg.qr(wn, mode="r")[0]
    keep = (np.abs(np.diag(r_nat)) > tol * diag[0]) & ~zero
    independent = np.flatnonzero(keep)
    if independent.size != rank:
        raise IllConditionedError(
            f"base parameters of '{robot.name}': pivoted QR gives rank {rank} but the ordered "
            f"selection finds {independent.size} columns at tol={tol:g}; choose another --tol"
        )
    dependent = np.flatnonzero(~keep)
    w1, w2 = w[:, independent], w[:, dependent]
    kd = np.linalg.lstsq(w1, w2, rcond=None)[0] if dependent.size else np.zeros((rank, 0))
    kd[np.abs(kd) < 1e-10 * max(1.0, float(np.max(np.abs(kd), initial=0.0)))] = 0.0
    K = np.zeros((rank, p))
    K[np.arange(rank), independent] = 1.0
    K[:, dependent] = kd
    base_names, combos = [], []
    for b, j in enumerate(independent):
        terms = [(1.0, names[j])] + [(kd[b, c], names[d]) for c, d in enumerate(dependent) if kd[b, c] != 0]
        name = names[j] + ("R" if len(terms) > 1 else "")
        base_names.append(name)
        combos.append(f"{name} = " + " ".join(_format_term(c, nm, i == 0) for i, (c, nm) in enumerate(terms)))
    svals = np.linalg.svd(wn, compute_uv=False)
    return BaseParameters(independent, K, base_names, combos, names, rank, svals,
                          condition_number(w1), options, tol)


def base_regressor(robot, q, dq, ddq, options: ModelOptions, base: BaseParameters) -> np.ndarray:
    """Base regressor Y_b (N, n, b) with Y theta == Y_b beta for every theta, beta = K theta."""
    y = identification_regressor(robot, q, dq, ddq, options)
    return np.ascontiguousarray(y[..., base.independent])


def identifiability_table(robot, options: ModelOptions = ModelOptions(), seed: int = 0,
                          samples: int = 200) -> np.ndarray:
    """(n, p) booleans: full parameter k enters the torque of joint i (thesis table D.1 style)."""
    q, dq, ddq = random_states(robot, samples, seed)
    y = identification_regressor(robot, q, dq, ddq, options)
    return np.max(np.abs(y), axis=0) > 1e-12
