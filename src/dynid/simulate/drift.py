"""Friction that drifts from cold to warm, and a first-order warm-up temperature.

Thesis 5.2.4 observes that the friction torque at a constant velocity decays over the
operating time like eq. 5.4, tau_f(t) = a + b e^(-t/t1) + c e^(-t/t2). The simulator makes
every friction coefficient of joint j follow the same two time constants:

    f_jk(t) = f_jk^warm (1 + r1_jk e^(-t/t1_j) + r2_jk e^(-t/t2_j))

with t the operating time since the log's first sample (the robot starts cold). At a
constant velocity v the friction torque sum_k F_k(v) f_jk(t) is then exactly eq. 5.4 with

    a = sum_k F_k(v) f_jk^warm,  b = sum_k F_k(v) f_jk^warm r1_jk,  c = sum_k F_k(v) f_jk^warm r2_jk

(F_k the friction columns of ``identify.model.friction_columns``), which is the known truth
of the tests. ``Warmup`` writes a joint temperature that rises to its hot value with one
time constant (first order): temp_j(t) = ambient + rise_j (1 - e^(-t/t_th_j)). With r2 = 0 and
t_th = t1 the friction is an affine function of that temperature.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import DataError
from dynid.identify.model import ModelOptions, friction_columns


def _per_joint(value, n: int, what: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    try:
        return np.broadcast_to(arr, (n,)).astype(float)
    except ValueError as exc:
        raise DataError(f"{what}: expected a number or {n} values, got shape {arr.shape}") from exc


@dataclass(frozen=True)
class FrictionDrift:
    """Cold excess of the friction coefficients (module docstring).

    ratio1, ratio2: r1, r2, scalars, (n,) or (n, k) [-]; t1, t2: time constants [s], scalars or (n,).
    """

    ratio1: object = 0.6
    t1: object = 600.0
    ratio2: object = 0.3
    t2: object = 60.0

    def time_constants(self, n: int) -> np.ndarray:
        """(n, 2) [t1_j, t2_j] in s."""
        t = np.column_stack([_per_joint(self.t1, n, "t1"), _per_joint(self.t2, n, "t2")])
        if not np.all(t > 0):
            raise DataError(f"friction drift time constants must be > 0 s, got {t.tolist()}")
        return t

    def ratios(self, n: int, k: int) -> np.ndarray:
        """(n, k, 2) [r1_jk, r2_jk]."""
        out = []
        for r in (self.ratio1, self.ratio2):
            r = np.asarray(r, dtype=float)
            r = r[:, None] if r.ndim == 1 else r
            out.append(np.broadcast_to(r, (n, k)))
        return np.stack(out, axis=-1)

    def factor(self, t: np.ndarray, n: int, k: int) -> np.ndarray:
        """(N, n, k) f(t) / f_warm at operating times t (N,) [s]."""
        tc = self.time_constants(n)
        decay = np.exp(-np.asarray(t, dtype=float)[:, None, None] / tc[None, :, :])  # (N, n, 2)
        return 1.0 + np.einsum("jkm,tjm->tjk", self.ratios(n, k), decay)

    def to_dict(self) -> dict:
        as_list = lambda v: np.asarray(v, dtype=float).tolist()  # noqa: E731
        return {"ratio1": as_list(self.ratio1), "t1": as_list(self.t1),
                "ratio2": as_list(self.ratio2), "t2": as_list(self.t2)}


@dataclass(frozen=True)
class Warmup:
    """temp_j(t) = ambient + rise_j (1 - e^(-t / time_constant_j)) [deg C], t in s."""

    ambient: float = 20.0
    rise: object = 25.0
    time_constant: object = 600.0

    def temperatures(self, t: np.ndarray, n: int) -> np.ndarray:
        """(N, n) joint temperatures at operating times t (N,) [s]."""
        tau = _per_joint(self.time_constant, n, "warm-up time constant")
        if not np.all(tau > 0):
            raise DataError(f"warm-up time constant must be > 0 s, got {tau.tolist()}")
        rise = _per_joint(self.rise, n, "warm-up rise")
        return self.ambient + rise * (1.0 - np.exp(-np.asarray(t, dtype=float)[:, None] / tau))


def friction_torque(t: np.ndarray, dq: np.ndarray, warm: np.ndarray, options: ModelOptions,
                    drift: FrictionDrift | None = None, load: np.ndarray | None = None) -> np.ndarray:
    """(N, n) friction torque of coefficients ``warm`` (n, k) that drift with operating time t (N,) [s].

    dq: (N, n) joint velocities; load (N, n): the load torque of friction ``load-dependent``
    (``identify.model.load_torque``). Without ``drift`` the coefficients are constant (warm).
    """
    columns = friction_columns(np.asarray(dq, dtype=float), options, load)  # (N, n, k)
    n, k = columns.shape[1], columns.shape[2]
    coefficients = np.asarray(warm, dtype=float).reshape(n, k)[None]
    if drift is not None:
        coefficients = coefficients * drift.factor(t, n, k)
    return np.einsum("tjk,tjk->tj", columns, np.broadcast_to(coefficients, columns.shape))


def friction_excess(t: np.ndarray, dq: np.ndarray, warm: np.ndarray, options: ModelOptions,
                    drift: FrictionDrift, load: np.ndarray | None = None) -> np.ndarray:
    """(N, n) cold excess of the friction torque: ``friction_torque`` with ``drift`` minus the
    warm one, sum_k F_k(dq) f_jk^warm (f_jk(t) / f_jk^warm - 1), in one pass over the columns;
    load (N, n): as ``friction_torque``."""
    columns = friction_columns(np.asarray(dq, dtype=float), options, load)  # (N, n, k)
    n, k = columns.shape[1], columns.shape[2]
    excess = np.asarray(warm, dtype=float).reshape(n, k)[None] * (drift.factor(t, n, k) - 1.0)
    return np.einsum("tjk,tjk->tj", columns, excess)


def drift_options(friction_drift: str | None, temperature: str | None):
    """(FrictionDrift | None, Warmup | None) from the CLI texts 'R1,T1,R2,T2' and 'AMBIENT,RISE,TAU'."""

    def numbers(text: str, count: int, option: str) -> list[float]:
        try:
            values = [float(v) for v in text.split(",") if v.strip()]
        except ValueError as exc:
            raise DataError(f"{option}: expected {count} comma-separated numbers, got '{text}'") from exc
        if len(values) != count:
            raise DataError(f"{option}: expected {count} comma-separated numbers, got '{text}'")
        return values

    drift = warmup = None
    if friction_drift is not None:
        r1, t1, r2, t2 = numbers(friction_drift, 4, "--friction-drift R1,T1,R2,T2")
        drift = FrictionDrift(r1, t1, r2, t2)
        drift.time_constants(1)
    if temperature is not None:
        ambient, rise, tau = numbers(temperature, 3, "--temperature AMBIENT,RISE,TAU")
        warmup = Warmup(ambient, rise, tau)
        warmup.temperatures(np.zeros(1), 1)
    return drift, warmup
