"""Friction that drifts from cold to warm, as part of the identification model (thesis eq. 5.4).

The thesis identifies a static model (eq. 3.17) and finds afterwards that the friction at a
constant speed decays over the operating time as tau_f(t) = a + b e^(-t/t1) + c e^(-t/t2)
(eq. 5.4, Table 5.6). A static model fitted to a test from a cold start averages cold and warm
friction and misses both. Here every friction coefficient of joint j drifts:

    f_jk(s) = f_jk + sum_m d_jkm phi_jm(s)                                              (D1)

    time:         phi_j(s) = [e^(-s/t1_j), e^(-s/t2_j)],  s the operating time since the
                  robot's cold start [s] (eq. 5.4 per coefficient, the joint's own t1 > t2)
    temperature:  phi_j(s) = [T_j - T_ref,j],  T_j the joint's temperature [deg C]

so joint j's friction torque is sum_k F_jk(dq_j) f_jk(s) with F_jk the friction columns
(``model.friction_columns``): the identification regressor gains, per joint, k m columns
F_jk phi_jm acting on that joint only, and for fixed time constants the whole model stays
linear (``drift_fit``). The static friction f is the *warm* friction: s -> infinity in time
mode, the reference temperature T_ref (the training log's 95th percentile per joint, its warm
end) in temperature mode; result.json's ``base_parameters`` hold it, so a drift-aware result
used by a reader that ignores the drift predicts a warm robot. ``f + d1 + d2`` (s = 0) is the
cold friction. At a constant speed v, (D1) is eq. 5.4 with a = F(v) f, b = F(v) d1, c = F(v) d2.

The operating time of a log: ``data.covariates`` (``--since-cold``, a ``since_cold`` column, or
for a training log what the identification used); temperatures: columns ``temp1..tempn``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.data.covariates import SINCE_COLD, WARM, has_columns, interpolate, read_slow_columns
from dynid.errors import DataError
from dynid.identify.model import FRICTION_MODELS, ModelOptions, friction_columns, load_torque

MODES = ("time", "temperature")
LABELS = {"time": ("e1", "e2"), "temperature": ("dT",)}


def check_mode(mode: str, options: ModelOptions, robot=None) -> None:
    """A drift needs a known mode, a friction model and (for now) an uncoupled transmission."""
    if mode not in MODES:
        raise DataError(f"--friction-drift {mode}: expected one of {list(MODES)}")
    if not FRICTION_MODELS[options.friction]:
        raise DataError("--friction-drift needs a friction model that drifts (--friction coulomb-viscous, "
                        "polynomial, asymmetric, stribeck or load-dependent), not 'none'")
    if robot is not None and robot.is_coupled:
        raise DataError(f"--friction-drift: robot '{robot.name}' has a coupled transmission; a drifting friction "
                        "is modelled per joint and not yet per coupled motor")


def drift_basis(mode: str, covariate: np.ndarray, time_constants: np.ndarray | None = None,
                temperature_reference: np.ndarray | None = None) -> np.ndarray:
    """(N, n, m) phi of (D1). time: covariate (N,) operating time [s] (inf: warm, phi = 0),
    time_constants (n, 2) [s]; temperature: covariate (N, n) [deg C], temperature_reference (n,)."""
    if mode == "time":
        s = np.asarray(covariate, dtype=float)[:, None, None]
        with np.errstate(invalid="ignore"):
            phi = np.exp(-s / np.asarray(time_constants, dtype=float)[None])
        return np.where(np.isfinite(s), phi, 0.0)  # s = inf: fully warm
    return (np.asarray(covariate, dtype=float) - np.asarray(temperature_reference, dtype=float))[..., None]


@dataclass
class FrictionDrift:
    """The drifting part of a friction model (D1), fitted with the rest by ``drift_fit``.

    mode: "time" | "temperature"; options: the identification model (its friction columns);
    coefficients, std: (n, k, m) d_jkm and their standard deviations (NaN coefficients: a joint
    without drift, e.g. one held still); time_constants (n, 2) [s] (time mode; NaN for a joint
    without drift); temperature_reference (n,) [deg C] (temperature mode); notes."""

    mode: str
    options: ModelOptions
    coefficients: np.ndarray
    std: np.ndarray
    time_constants: np.ndarray | None = None
    temperature_reference: np.ndarray | None = None
    notes: list = field(default_factory=list)

    @property
    def per_joint(self) -> int:
        """k m: drift columns per joint."""
        return self.coefficients.shape[1] * self.coefficients.shape[2]

    def names(self) -> list[str]:
        """Parameter names, joint by joint: ``Fc1_e1`` is d of Fc1 on e^(-s/t1), ``Fv2_dT`` on T - T_ref."""
        n = self.coefficients.shape[0]
        return [f"{f}{j + 1}_{lab}" for j in range(n) for f in FRICTION_MODELS[self.options.friction]
                for lab in LABELS[self.mode]]

    def basis(self, covariate: np.ndarray) -> np.ndarray:
        """(N, n, m) phi at the operating times (N,) or temperatures (N, n) ``covariate``;
        zero for joints without drift."""
        tc = self.time_constants
        if tc is not None:
            tc = np.where(np.isfinite(tc), tc, 1.0)
        phi = drift_basis(self.mode, covariate, tc, self.temperature_reference)
        return np.where(self.active[None, :, None], phi, 0.0)

    @property
    def active(self) -> np.ndarray:
        """(n,) joints with drift coefficients (NaN coefficients: a joint without drift)."""
        return np.any(np.isfinite(self.coefficients.reshape(self.coefficients.shape[0], -1)), axis=1)

    def load(self, robot, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray | None:
        """(N, n) the load torque the friction columns of a ``load-dependent`` model need
        (``model.load_torque`` at the options' load parameters), else None."""
        return load_torque(robot, q, dq, ddq, self.options) if self.options.friction == "load-dependent" else None

    def columns(self, dq: np.ndarray, covariate: np.ndarray, load: np.ndarray | None = None) -> np.ndarray:
        """(N, n, k m) each joint's own drift columns F_jk(dq_j) phi_jm (D1), in ``names`` order;
        load (N, n): ``load`` of the same samples (friction ``load-dependent``)."""
        friction = friction_columns(np.asarray(dq, dtype=float), self.options, load)  # (N, n, k)
        phi = self.basis(covariate)  # (N, n, m)
        count, n, k = friction.shape
        return (friction[:, :, :, None] * phi[:, :, None, :]).reshape(count, n, k * phi.shape[2])

    def place(self, own: np.ndarray) -> np.ndarray:
        """(N, n, n k m) the rows of the whole drift regressor: joint j's own columns ``own``
        (N, n, k m) in its block j k m .. (j + 1) k m, zeros elsewhere."""
        count, n, c = own.shape
        out = np.zeros((count, n, n * c))
        for j in range(n):  # loop over joints: one block each
            out[:, j, j * c:(j + 1) * c] = own[:, j, :]
        return out

    def torque(self, dq: np.ndarray, covariate: np.ndarray, load: np.ndarray | None = None) -> np.ndarray:
        """(N, n) the drift's friction torque, added to the warm model's (load: as ``columns``)."""
        d = np.where(np.isfinite(self.coefficients), self.coefficients, 0.0).reshape(self.coefficients.shape[0], -1)
        return np.einsum("tjc,jc->tj", self.columns(dq, covariate, load), d)

    def warm_friction(self, base_names: list[str], beta: np.ndarray) -> np.ndarray:
        """(n, k) the warm friction f of (D1): the friction base parameters by name (Fc1, Fv1, ...)."""
        index = {name: i for i, name in enumerate(base_names)}
        n = self.coefficients.shape[0]
        try:
            return np.array([[beta[index[f"{f}{j + 1}"]] for f in FRICTION_MODELS[self.options.friction]]
                             for j in range(n)], dtype=float)
        except KeyError as exc:
            raise DataError(f"result.json: friction base parameter {exc} missing beside the friction drift") from None

    def cold_to_warm(self, warm: np.ndarray, speed: np.ndarray, covariate_cold: np.ndarray) -> np.ndarray:
        """(n,) friction torque at ``speed`` (n,) [rad/s | m/s], cold over warm: F(v) (f + d phi_cold) / F(v) f;
        covariate_cold: (1,) operating time 0 or (1, n) the cold temperatures. A ``load-dependent``
        model's friction is taken at zero load (its Coulomb level Fc)."""
        v = np.asarray(speed, dtype=float)[None, :]
        load = np.zeros_like(v) if self.options.friction == "load-dependent" else None
        columns = friction_columns(v, self.options, load)
        cold = np.einsum("tjk,jk->tj", columns, warm) + self.torque(v, covariate_cold, load)
        hot = np.einsum("tjk,jk->tj", columns, warm)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (cold / hot)[0]

    def to_dict(self) -> dict:
        num = lambda x: float(x) if np.isfinite(x) else None  # noqa: E731
        out = {"mode": self.mode,
               "model": "f_jk(s) = f_jk + sum_m d_jkm phi_jm(s); " + (
                   "phi_j = [exp(-s/t1_j), exp(-s/t2_j)], s the operating time since the cold start [s] "
                   "(thesis eq. 5.4 per friction coefficient); base_parameters hold the warm friction f"
                   if self.mode == "time" else
                   "phi_j = T_j - T_ref,j with T_j the temperature temp_j [deg C]; base_parameters hold the "
                   "friction f at T_ref"),
               "parameters": [{"name": nm, "value": num(v), "std": num(s)} for nm, v, s in
                              zip(self.names(), self.coefficients.ravel(), self.std.ravel())],
               "notes": list(self.notes)}
        if self.time_constants is not None:
            out["time_constants"] = [[num(v) for v in row] for row in self.time_constants]
        if self.temperature_reference is not None:
            out["temperature_reference"] = [float(v) for v in self.temperature_reference]
        return out

    @classmethod
    def from_dict(cls, d: dict, options: ModelOptions, n: int) -> "FrictionDrift":
        """The drift stored in result.json's "friction_drift" (DataError naming the field when malformed)."""
        try:
            mode = d["mode"]
            if mode not in MODES:
                raise ValueError(f"mode '{mode}'")
            k, m = len(FRICTION_MODELS[options.friction]), len(LABELS[mode])
            entries = d["parameters"]
            if len(entries) != n * k * m:
                raise ValueError(f"{len(entries)} parameters, expected {n * k * m}")
            value = np.array([np.nan if e["value"] is None else float(e["value"]) for e in entries]).reshape(n, k, m)
            std = np.array([np.nan if e.get("std") is None else float(e["std"]) for e in entries]).reshape(n, k, m)
            tc = tref = None
            if mode == "time":
                tc = np.array([[np.nan if v is None else float(v) for v in row] for row in d["time_constants"]])
                if tc.shape != (n, 2) or np.any(tc[np.isfinite(tc)] <= 0):
                    raise ValueError(f"time_constants of shape {tc.shape}, expected ({n}, 2) positive seconds")
            else:
                tref = np.array(d["temperature_reference"], dtype=float)
                if tref.shape != (n,) or not np.all(np.isfinite(tref)):
                    raise ValueError(f"temperature_reference of shape {tref.shape}, expected ({n},) finite")
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"result.json: malformed field 'friction_drift' ({type(exc).__name__}: {exc})") from None
        return cls(mode, options, value, std, tc, tref, list(d.get("notes", [])))


@dataclass
class LogCovariate:
    """How the drift's covariate of one log is known (``log_covariate``) and its values at the
    time stamps of the log's prepared samples (``at``, chunk by chunk).

    how: a line saying where it comes from; path: the log; since_cold: seconds since the cold start at the
    log's first sample (inf: warm) when the time is counted from it; table: (t (K,), values
    (K, m)) of a ``since_cold`` or ``temp1..tempn`` column."""

    mode: str
    how: str
    path: str
    since_cold: float | None = None
    table: tuple | None = None
    t_first: float | None = None

    def at(self, t: np.ndarray) -> np.ndarray:
        """Operating times (N,) [s] or temperatures (N, n) at prepared time stamps t (N,); the
        first call's first time stamp is the log's first sample."""
        t = np.asarray(t, dtype=float)
        if self.t_first is None and t.size:
            self.t_first = float(t[0])
        if self.table is not None:
            values = interpolate(self.table[0], self.table[1], t)
            return values[:, 0] if self.mode == "time" else values
        return t - self.t_first + self.since_cold

    def to_dict(self) -> dict:
        return {"path": self.path, "since_cold": None if self.since_cold is None else
                (float(self.since_cold) if np.isfinite(self.since_cold) else "warm"), "how": self.how}


def log_covariate(mode: str, path, mapping, n: int, since_cold: float | None = None,
                  trained: dict | None = None, default: float | None = None) -> LogCovariate:
    """The covariate of the log at ``path`` (``data.covariates``' order): temperature mode the
    columns temp1..tempn; time mode ``since_cold`` (``--since-cold``, seconds at the log's first
    sample or inf), else a ``since_cold`` column, else ``trained`` (the identification's entry
    for this log: result.json "friction_drift"."sources"), else ``default`` (identify: 0, the
    log starts cold); else a DataError saying how to give it."""
    if mode == "temperature":
        names = [f"temp{j + 1}" for j in range(n)]
        return LogCovariate(mode, "columns temp1..tempn", str(path), table=read_slow_columns(path, mapping, names))
    if since_cold is not None:
        return LogCovariate(mode, "--since-cold " + ("warm" if not np.isfinite(since_cold) else f"{since_cold:g} s"),
                            str(path), since_cold=since_cold)
    if has_columns(path, mapping, [SINCE_COLD]):
        return LogCovariate(mode, f"column {SINCE_COLD}", str(path), table=read_slow_columns(path, mapping, [SINCE_COLD]))
    if trained is not None and trained.get("since_cold") is not None:
        value = trained["since_cold"]
        value = WARM if value == "warm" else float(value)
        return LogCovariate(mode, f"as in identification ({trained.get('how', '')})", str(path), since_cold=value)
    if default is not None:
        return LogCovariate(mode, f"its first sample, {default:g} s after the cold start (identify's default)", str(path),
                            since_cold=default)
    raise DataError(f"{path}: the model's friction drifts with the time since the robot's cold start; say when "
                    f"this log was recorded: --since-cold SECONDS (the time since the cold start at its first "
                    f"sample; 0 = it starts cold) or --since-cold warm, or a '{SINCE_COLD}' column [s]")


def stored_drift(result: dict, options: ModelOptions) -> tuple[FrictionDrift, np.ndarray | None] | None:
    """(the drift of a result.json, the covariance (b + n k m)^2 of its base parameters and drift
    coefficients or None), or None for a static model."""
    entry = result.get("friction_drift")
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise DataError("result.json: field 'friction_drift' must be an object")
    drift = FrictionDrift.from_dict(entry, options, int(result["n"]))
    cov = entry.get("covariance")
    if cov is not None:
        cov = np.asarray(cov, dtype=float)
        size = len(result["base_parameters"]) + drift.coefficients.size
        if cov.shape != (size, size):
            raise DataError(f"result.json: friction_drift.covariance has shape {cov.shape}, expected ({size}, {size})")
    return drift, cov


def trained_entry(result: dict, path) -> dict | None:
    """The identification's record of how the log at ``path`` was timed (None for another log)."""
    from pathlib import Path, PurePath

    if not isinstance(path, (str, PurePath)):  # an in-memory log (data.arrays): not a training file
        return None
    target = Path(path).resolve()
    for entry in (result.get("friction_drift") or {}).get("sources", []):
        if isinstance(entry, dict) and Path(str(entry.get("path", ""))).resolve() == target:
            return entry
    return None
