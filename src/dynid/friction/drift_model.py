"""A friction model that drifts from cold to warm, identified with the rigid body (thesis 6.2).

The thesis identifies a static model (eq. 3.17) and observes afterwards that friction decays
over the operating time (eq. 5.4). Here the drift is in the model. Each friction coefficient
of joint j is f_jk(t) = f_jk + sum_m d_jkm phi_jm(t), so the friction torque is

    tau_f,j = sum_k F_jk(dq) f_jk + sum_k sum_m F_jk(dq) phi_jm(t) d_jkm

with F_jk the friction columns (``identify.model.friction_columns``) and drift bases

    time:         phi_j = [e^(-t/t1_j), e^(-t/t2_j)]       (eq. 5.4 applied to every coefficient)
    temperature:  phi_j = [temp_j - temp_j(0)]             (affine in the measured temperature)

t is the operating time since the log's first sample (a cold start). For fixed time
constants this is linear in all parameters: the base regressor of the static model
(rigid body, friction, rotor inertia, offset) gets n k m more columns, each acting on one
joint only, and one least-squares fit (the project's estimators) gives everything. The time
constants, common to all joints unless given per joint, minimize the residual: a log grid of
t1 > t2 pairs, then Nelder-Mead over (log t1, log t2) from the best, on an evenly spaced
row subset (``search_rows``) with the static columns projected out once.
The warm model is the static part; f + d at t = 0 is the cold one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

from dynid.data.columns import JointData
from dynid.errors import DataError
from dynid.identify.threads import single_blas_thread
from dynid.identify.base import BaseParameters, base_parameters
from dynid.identify.drift import drift_basis as identify_drift_basis
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.identify.model import FRICTION_MODELS, ModelOptions, friction_columns, identification_regressor
from dynid.identify.validation import rmsd

MODES = ("none", "time", "temperature")


def drift_basis(mode: str, elapsed: np.ndarray, n: int, time_constants=None,
                temp: np.ndarray | None = None, temp_ref: np.ndarray | None = None) -> np.ndarray:
    """(N, n, m) drift bases phi (module docstring); elapsed (N,) [s]; time_constants (2,) or (n, 2) [s];
    temp (N, n) [deg C] and temp_ref (n,)."""
    if mode == "time":  # eq. 5.4 shapes (identify.drift, eq. D1)
        return identify_drift_basis(mode, elapsed, np.broadcast_to(np.asarray(time_constants, dtype=float), (n, 2)))
    if mode == "temperature":
        if temp is None:
            raise DataError("temperature drift needs columns temp1..tempn in the data")
        return identify_drift_basis(mode, temp, temperature_reference=temp_ref)
    return np.zeros((np.asarray(elapsed).size, n, 0))


def drift_columns(friction: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """(N, n, n k m) drift regressor: joint j's row holds F_jk phi_jm in its own block j k m .. (j+1) k m."""
    count, n, k = friction.shape
    m = basis.shape[2]
    own = (friction[:, :, :, None] * basis[:, :, None, :]).reshape(count, n, k * m)
    out = np.zeros((count, n, n * k * m))
    cols = np.arange(n)[:, None] * (k * m) + np.arange(k * m)[None, :]  # (n, k m)
    out[:, np.arange(n)[:, None], cols] = own
    return out


@dataclass
class DriftModel:
    """Static base model + friction drift; results after ``fit``: coef_, std_, names_,
    time_constants_ ((n, 2) s, time mode), temp_ref_ (n,), rss_."""

    robot: object
    options: ModelOptions = ModelOptions()
    mode: str = "time"
    time_constants: object = None
    search_rows: int = 2000
    seed: int = 0
    base: BaseParameters | None = None
    coef_: np.ndarray = field(default=None, init=False)

    def __post_init__(self):
        if self.mode not in MODES:
            raise DataError(f"drift mode '{self.mode}' unknown, expected one of {list(MODES)}")
        if self.mode != "none" and not FRICTION_MODELS[self.options.friction]:
            raise DataError("a friction drift needs a friction model (--friction coulomb-viscous or polynomial)")
        if self.base is None:
            self.base = base_parameters(self.robot, self.options)

    # -- regressors ------------------------------------------------------------------------
    def _static(self, data: JointData) -> np.ndarray:
        y = identification_regressor(self.robot, data.q, data.dq, data.ddq, self.options)
        return np.ascontiguousarray(y[..., self.base.independent])

    def _drift(self, data: JointData, elapsed, temp, time_constants) -> np.ndarray:
        basis = drift_basis(self.mode, elapsed, self.robot.n, time_constants, temp, self.temp_ref_)
        return drift_columns(friction_columns(data.dq, self.options), basis)

    def names(self) -> list[str]:
        labels = {"time": ("e1", "e2"), "temperature": ("dT",), "none": ()}[self.mode]
        return list(self.base.names) + [f"{f}{j + 1}_{lab}" for j in range(self.robot.n)
                                        for f in FRICTION_MODELS[self.options.friction] for lab in labels]

    # -- fitting ---------------------------------------------------------------------------
    def fit(self, data: JointData, elapsed: np.ndarray | None = None, temp: np.ndarray | None = None) -> "DriftModel":
        """Fit on prepared data (t, q, dq, ddq, tau); elapsed (N,) operating time [s] (default
        t - t[0]); temp (N, n) joint temperatures (temperature mode)."""
        if data.tau is None or data.dq is None or data.ddq is None:
            raise DataError(f"{data.source}: drift identification needs tau, dq and ddq")
        elapsed = data.t - data.t[0] if elapsed is None else np.asarray(elapsed, dtype=float)
        self.temp_ref_ = None if temp is None else np.asarray(temp, dtype=float)[0].copy()
        if self.mode == "temperature" and temp is None:
            raise DataError(f"{data.source}: temperature drift needs columns temp1..tempn")
        static = self._static(data)
        tc = None
        if self.mode == "time":
            tc = self.time_constants if self.time_constants is not None else self._search(static, data, elapsed)
            self.time_constants_ = np.broadcast_to(np.asarray(tc, dtype=float), (self.robot.n, 2)).copy()
        y = np.concatenate([static, self._drift(data, elapsed, temp, tc)], axis=2)
        with single_blas_thread():
            est = OrdinaryLeastSquares(names=self.names(), max_condition=1e10).fit(y, data.tau)
        self.coef_, self.std_, self.rss_ = est.coef_, est.std_, float(np.sum(est.rss_))
        self.names_ = self.names()
        return self

    def _search(self, static: np.ndarray, data: JointData, elapsed: np.ndarray) -> np.ndarray:
        """Common (t1, t2) [s] minimizing the residual on an evenly spaced row subset."""
        stride = max(1, len(data) // self.search_rows)
        rows = np.arange(0, len(data), stride)
        sub = data.select(rows)
        w0 = static[rows].reshape(-1, static.shape[2])
        tau = sub.tau.reshape(-1)
        q_, _ = np.linalg.qr(w0)  # project the static part out once
        r0 = tau - q_ @ (q_.T @ tau)
        fric = friction_columns(sub.dq, self.options)
        span = float(elapsed.max() - elapsed.min()) or 1.0
        lo, hi = span / 200.0, span * 5.0

        def cost(z):  # residual sum of squares for time constants exp(z), static part projected out
            tc = np.exp(np.clip(z, *bounds))
            d = drift_columns(fric, drift_basis("time", elapsed[rows], self.robot.n, tc)).reshape(r0.size, -1)
            d = d - q_ @ (q_.T @ d)
            gram, rhs = d.T @ d, d.T @ r0
            coef = np.linalg.solve(gram + 1e-12 * np.trace(gram) * np.eye(gram.shape[0]), rhs)
            return float(r0 @ r0 - rhs @ coef)

        bounds = (np.log(lo) - 1.0, np.log(hi) + 1.0)
        grid = np.geomspace(lo, hi, 10)
        i, j = np.triu_indices(grid.size, 1)
        with single_blas_thread():  # OpenBLAS threads beside Numba's cost more than they give here
            values = np.array([cost(np.log([grid[b], grid[a]])) for a, b in zip(i, j)])  # loop over 45 pairs
            k = int(np.argmin(values))
            res = scipy.optimize.minimize(cost, np.log([grid[j[k]], grid[i[k]]]), method="Nelder-Mead",
                                          options={"xatol": 5e-3, "fatol": 1e-12, "maxfev": 80})
        return np.sort(np.exp(np.clip(res.x, *bounds)))[::-1]

    def predict(self, data: JointData, elapsed: np.ndarray | None = None, temp: np.ndarray | None = None) -> np.ndarray:
        """Torques (N, n) of the fitted model."""
        elapsed = data.t - data.t[0] if elapsed is None else np.asarray(elapsed, dtype=float)
        y = np.concatenate([self._static(data), self._drift(data, elapsed, temp, getattr(self, "time_constants_", None))],
                           axis=2)
        return y @ self.coef_

    def to_dict(self) -> dict:
        out = {"drift": self.mode, "model_options": self.options.to_dict(),
               "parameters": [{"name": k, "value": float(v), "std": float(s)}
                              for k, v, s in zip(self.names_, self.coef_, self.std_)]}
        if self.mode == "time":
            out["time_constants"] = self.time_constants_.tolist()
        if self.temp_ref_ is not None:
            out["temperature_reference"] = self.temp_ref_.tolist()
        return out


def cross_validate(robot, data: JointData, valid_cycles, options: ModelOptions = ModelOptions(),
                   mode: str = "time", temp: np.ndarray | None = None, time_constants=None, seed: int = 0) -> dict:
    """Train the static and the drift-aware model on the cycles not in ``valid_cycles`` and score
    both on ``valid_cycles`` (RMSD per joint, thesis eq. 5.1). Operating time counts from the
    log's first sample for both parts."""
    if data.cycle is None:
        raise DataError(f"{data.source}: cross-validation over cycles needs a 'cycle' column")
    valid = np.isin(data.cycle, np.asarray(list(valid_cycles)))
    if valid.all() or not valid.any():
        raise DataError(f"{data.source}: validation cycles {list(valid_cycles)} must be a proper subset of "
                        f"the cycles {np.unique(data.cycle).tolist()}")
    elapsed = data.t - data.t[0]
    pick = lambda a, m: None if a is None else a[m]  # noqa: E731
    train_d, valid_d = data.select(~valid), data.select(valid)
    static = DriftModel(robot, options, "none").fit(train_d, elapsed[~valid])
    drift = DriftModel(robot, options, mode, time_constants, seed=seed, base=static.base).fit(
        train_d, elapsed[~valid], pick(temp, ~valid))
    tau = valid_d.tau
    r_static = rmsd(tau, static.predict(valid_d, elapsed[valid]))
    r_drift = rmsd(tau, drift.predict(valid_d, elapsed[valid], pick(temp, valid)))
    return {"train_cycles": np.unique(train_d.cycle).tolist(), "valid_cycles": np.unique(valid_d.cycle).tolist(),
            "rmsd_static": r_static.tolist(), "rmsd_drift": r_drift.tolist(),
            "ratio": (r_drift / r_static).tolist(), "model": drift}
