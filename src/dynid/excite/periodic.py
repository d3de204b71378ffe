"""Periodic excitation trajectories that are linear in their coefficients.

Both families of the thesis are of the form

    q_i(t) = q0_i + sum_k B_k(t) C[k, i]

with fixed basis functions B_k of one base frequency w_f (the finite Fourier series of thesis
eq. 4.19 and the harmonic sine sum of eq. 4.1). Velocity and acceleration come from the
analytic derivatives of the basis, so a trajectory is described completely by
(family, w_f, harmonics, q0, C). Being linear in (q0, C) makes position, velocity and
acceleration constraints linear in the optimization variables (see ``excite.optimize``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dynid.errors import DataError
from dynid.excite import fourier, harmonic

FAMILIES = {"fourier": fourier, "harmonic": harmonic}


def _frozen(a, shape=None) -> np.ndarray:
    arr = np.array(a, dtype=float)
    if shape is not None:
        arr = arr.reshape(shape)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class PeriodicTrajectory:
    """q(t) = q0 + B(t) C, periodic with period 2 pi / w_f.

    family: "fourier" (thesis eq. 4.19-4.21) or "harmonic" (eq. 4.1, 4.13)
    w_f: base angular frequency [rad/s]
    harmonics: positive integer multipliers l of w_f, one per harmonic
    q0: (n,) offset [rad or m]
    coefficients: (p, n); fourier: rows a_1..a_N then b_1..b_N [rad/s]; harmonic: a_1..a_N [rad]
    """

    family: str
    w_f: float
    harmonics: tuple[int, ...]
    q0: np.ndarray
    coefficients: np.ndarray
    metadata: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise DataError(f"trajectory family '{self.family}': expected one of {sorted(FAMILIES)}")
        if not (math.isfinite(self.w_f) and self.w_f > 0):
            raise DataError(f"trajectory w_f must be a positive number, got {self.w_f}")
        harmonics = tuple(int(h) for h in self.harmonics)
        if not harmonics or any(h < 1 for h in harmonics) or any(
                h != float(g) for h, g in zip(harmonics, self.harmonics)):
            raise DataError(f"trajectory harmonics must be positive integers, got {list(self.harmonics)}")
        object.__setattr__(self, "harmonics", harmonics)
        q0 = np.atleast_1d(np.asarray(self.q0, dtype=float))
        if q0.ndim != 1 or not np.all(np.isfinite(q0)):
            raise DataError("trajectory q0 must be n finite numbers")
        p = FAMILIES[self.family].n_coefficients(len(harmonics))
        c = np.asarray(self.coefficients, dtype=float)
        if c.shape != (p, q0.size) or not np.all(np.isfinite(c)):
            raise DataError(
                f"trajectory coefficients: expected shape ({p}, {q0.size}) for family '{self.family}' "
                f"with {len(harmonics)} harmonics, got {c.shape}")
        object.__setattr__(self, "q0", _frozen(q0))
        object.__setattr__(self, "coefficients", _frozen(c))

    @property
    def n(self) -> int:
        return self.q0.size

    @property
    def period(self) -> float:
        """Common period of all harmonics [s] (multipliers are integers)."""
        return 2.0 * math.pi / self.w_f

    def basis(self, t: np.ndarray, order: int) -> np.ndarray:
        """d^order B / dt^order at times t (M,) -> (M, p)."""
        return FAMILIES[self.family].basis(np.asarray(t, dtype=float), self.w_f, self.harmonics, order)

    def derivative(self, t: np.ndarray, order: int) -> np.ndarray:
        """(M, n) d^order q / dt^order; order 0 includes q0."""
        out = self.basis(t, order) @ self.coefficients
        return out + self.q0 if order == 0 else out

    def evaluate(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, dq, ddq (M, n) at times t (M,) [s]."""
        t = np.asarray(t, dtype=float)
        return self.derivative(t, 0), self.derivative(t, 1), self.derivative(t, 2)

    def sample_times(self, rate: float, periods: float = 1.0) -> np.ndarray:
        """Times [0, periods * period) at ``rate`` Hz (the sample at the end equals the first)."""
        count = int(round(periods * self.period * rate))
        return np.arange(count) / rate

    def derivative_bound(self, order: int) -> np.ndarray:
        """(n,) analytic bound on |d^order (q - q0) / dt^order| (triangle inequality, eq. 4.5-4.10)."""
        return FAMILIES[self.family].amplitude_bound(self.coefficients, self.w_f, self.harmonics, order)

    def with_coefficients(self, q0, coefficients, **metadata) -> "PeriodicTrajectory":
        return PeriodicTrajectory(self.family, self.w_f, self.harmonics, q0, coefficients,
                                  {**self.metadata, **metadata})


def periodic_from_family(family: str, w_f: float, n_harmonics: int, n: int,
                         multipliers: tuple[int, ...] | None = None) -> PeriodicTrajectory:
    """A zero trajectory of ``family`` (used as a template) with harmonics 1..n_harmonics, or
    the given integer ``multipliers`` (e.g. (1, 2, 4) for thesis eq. 4.13)."""
    module = FAMILIES[family]
    harmonics = tuple(multipliers) if multipliers else tuple(range(1, n_harmonics + 1))
    return PeriodicTrajectory(family, w_f, harmonics, np.zeros(n),
                              np.zeros((module.n_coefficients(len(harmonics)), n)))


def from_table(a: np.ndarray, b: np.ndarray, q0: np.ndarray, w_f: float):
    """A Fourier PeriodicTrajectory (eq. 4.19) from the thesis' table layout: a, b (N, n), q0 (n,)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    harmonics = tuple(range(1, a.shape[0] + 1))
    return PeriodicTrajectory("fourier", w_f, harmonics, q0, np.vstack([a, b]))
