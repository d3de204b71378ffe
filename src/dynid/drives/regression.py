"""Acceleration-free identification from positions, velocities and motor voltages (or currents).

Per joint j, filtering eq. V3 and the drive equation V4 with the same F (filters.py) gives
(docs/voltage_identification.md, eq. V8):

    [ (sF)[Y_p] + F[Y_q] ]_j beta  -  g_j F[x_j]  =  0          x = u (voltage) or i (current)

with beta the base parameters (the base of the acceleration regressor: the filtered columns obey
the same linear dependencies) and g_j the input gain: a_j = N K_t / R (voltage; the back-EMF
damping c_j = N^2 K_t K_b / R is absorbed in the viscous coefficient) or k_j = N K_t (current).
No measured signal is differentiated. The system A [beta; g] = 0 is homogeneous: its solutions
scale together. Joints whose equations cannot be scaled apart form one "scale group"
(a common scale, found structurally by ``scale_groups``); each group needs one known quantity
(a base parameter such as a payload mass, or a gain ``gain{j}``). Known entries move to the
right side, A_U x_U = -A_K v, solved by ordinary least squares (estimators.OrdinaryLeastSquares,
with Khalil-Gautier standard deviations). A group without a known quantity is reported
unresolved: its first gain is set to 1 (one member of the family of exact solutions; parameters
shared with other groups, e.g. a tool mass seen by both, make it more than a plain rescaling)
and ``scale_resolved`` is False.

With both u and i measured (dc-motor), the armature equation V2 is identified per joint as well:
F[u] = R F[i] + L (sF)[i] + k_e F[dq], k_e = N K_b (eq. V9).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.drives.filters import check_uniform, filtered, filtered_derivative
from dynid.drives.momentum import momentum_regressor, remainder_regressor
from dynid.errors import DataError, ModelError
from dynid.identify.base import BaseParameters
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.identify.model import FRICTION_MODELS, ModelOptions

CHUNK = 4000  # samples per regressor block (bounded memory; filters run on the whole log)


@dataclass
class FilteredSystem:
    """Filtered regression of one log, on samples 1..N-2 minus ``skip`` transient samples.

    W (M, n, b): filtered base columns; x (M, n): filtered input F[u] or F[i];
    dq (M, n): F[dq]; t (M,); raw: {"u", "i"} filtered extra signals when present.
    """

    t: np.ndarray
    W: np.ndarray
    x: np.ndarray
    dq: np.ndarray
    extra: dict = field(default_factory=dict)


def filtered_system(robot, t, q, dq, x, options: ModelOptions, base: BaseParameters, lam: float,
                    skip: int = 0, extra: dict | None = None, prefilter_hz: float = 0.0) -> FilteredSystem:
    """Build eq. V8's columns. t (N,), q, dq, x (N, n); extra: more (N, n) signals to filter
    (e.g. {"i": currents, "u": voltages}) returned as F[.] and (sF)[.] in ``extra``.

    prefilter_hz > 0: q and dq pass a zero-phase Butterworth low-pass (order 4, data.preprocess)
    before the regressor is built (no derivative is taken). Measurement noise in dq enters the
    regressor nonlinearly (dq^2 terms, the sign of Coulomb friction) and biases the estimate
    (errors in variables); the pre-filter lowers that noise. Its edges (3 fs / cutoff samples at
    each end) are left out of the fit; on motion far below the cutoff it changes q, dq by less
    than 1e-9 relative."""
    h = check_uniform(np.asarray(t, dtype=float))
    if prefilter_hz > 0.0:
        from dynid.data.preprocess import lowpass

        q, dq = lowpass(q, 1.0 / h, prefilter_hz), lowpass(dq, 1.0 / h, prefilter_hz)
        edge = int(np.ceil(3.0 / (h * prefilter_hz)))
        skip = max(skip, edge)
        t, q, dq, x = t[: len(t) - edge], q[: len(t) - edge], dq[: len(t) - edge], x[: len(t) - edge]
        extra = {k: v[: len(v) - edge] for k, v in (extra or {}).items()}
    cols = base.independent
    yp = np.concatenate([momentum_regressor(robot, q[s:s + CHUNK], dq[s:s + CHUNK], options)[..., cols]
                         for s in range(0, len(t), CHUNK)])
    yq = np.concatenate([remainder_regressor(robot, q[s:s + CHUNK], dq[s:s + CHUNK], options)[..., cols]
                         for s in range(0, len(t), CHUNK)])
    w = filtered_derivative(yp, lam, h) + filtered(yq, lam, h)
    keep = slice(skip, None)
    out_extra = {}
    for name, sig in (extra or {}).items():
        out_extra[name] = filtered(sig, lam, h)[keep]
        out_extra["s" + name] = filtered_derivative(sig, lam, h)[keep]
    return FilteredSystem(np.asarray(t)[1:-1][keep], w[keep], filtered(x, lam, h)[keep],
                          filtered(dq, lam, h)[keep], out_extra)


def scale_groups(robot, options: ModelOptions, base: BaseParameters, seed: int = 0,
                 samples: int = 200) -> tuple[list[np.ndarray], np.ndarray]:
    """Scale groups of the homogeneous system and the null direction of each (structural).

    On ``samples`` random states (base.random_states) with random generic base parameters
    beta_r, the unknowns [d_beta; s] of Y_b d_beta = diag(s) Y_b beta_r per joint form the
    null space of eq. V8 (s_j: relative change of joint j's gain). Its s-parts are the
    indicator vectors of the groups of joints that share one scale. Returns (groups: list of
    0-based joint index arrays, null (b + n, groups) with the direction of each group, the
    gain part equal to the group's indicator; relative to beta_r)."""
    from dynid.identify.base import random_states
    from dynid.identify.model import identification_regressor

    rng = np.random.default_rng(seed)
    q, dq, ddq = random_states(robot, samples, seed)
    y = identification_regressor(robot, q, dq, ddq, options)[..., base.independent]
    n, b = robot.n, y.shape[2]
    r = y @ rng.normal(size=b)
    a = np.zeros((samples, n, b + n))
    a[..., :b] = y
    a[:, np.arange(n), b + np.arange(n)] = -r
    a = a.reshape(-1, b + n)
    norms = np.linalg.norm(a, axis=0)
    _, sv, vt = np.linalg.svd(a / norms, full_matrices=False)
    null = (vt[sv < 1e-8 * sv[0]].T) / norms[:, None]  # (b + n, d), unnormalized coordinates
    s_part = null[b:]
    label = -np.ones(n, dtype=int)
    for j in range(n):
        if label[j] < 0:
            same = np.linalg.norm(s_part - s_part[j], axis=1) <= 1e-6 * np.linalg.norm(s_part)
            label[same & (label < 0)] = j
    groups = [np.flatnonzero(label == g) for g in np.unique(label)]
    directions = np.column_stack([null @ np.linalg.lstsq(s_part, (label == g[0]).astype(float), rcond=None)[0]
                                  for g in groups])
    return groups, directions


@dataclass
class DriveFit:
    """Result of ``identify_drive_model``."""

    signal: str
    names: list[str]            # base parameter names then gain1..gainn
    values: np.ndarray          # (b + n,)
    std: np.ndarray             # (b + n,), 0 for known entries
    known: dict
    groups: list[list[int]]     # joints (1-based) of each scale group
    resolved: list[bool]        # per group
    warnings: list[str]
    rmsd: np.ndarray            # (n,) fit residual in input units (V or A), filtered domain
    rms_input: np.ndarray       # (n,)
    condition_number: float
    samples: int
    electrical: dict | None = None
    diagnostics: dict | None = None  # Estimator.diagnostics() of the least-squares solve

    @property
    def beta(self) -> np.ndarray:
        """(b,) base parameters."""
        return self.values[: self.values.size - len(self.groups_joints)]

    @property
    def gains(self) -> np.ndarray:
        """(n,) input gains a_j (voltage) or k_j (current)."""
        return self.values[self.values.size - len(self.groups_joints):]

    @property
    def groups_joints(self) -> list[int]:
        return [j for g in self.groups for j in g]

    @property
    def scale_resolved(self) -> bool:
        return all(self.resolved)


def gain_names(n: int) -> list[str]:
    return [f"gain{j + 1}" for j in range(n)]


def identify_drive_model(system: FilteredSystem, base: BaseParameters, known: dict[str, float],
                         groups: tuple[list[np.ndarray], np.ndarray], signal: str = "voltage",
                         max_condition: float = 1e9) -> DriveFit:
    """Solve eq. V8 for [beta; gains] with the known entries ``known`` {name: value} (module doc)."""
    w, x = system.W, system.x
    m, n, b = w.shape
    names = list(base.names) + gain_names(n)
    a = np.zeros((m, n, b + n))
    a[..., :b] = w
    a[:, np.arange(n), b + np.arange(n)] = -x
    for name in known:
        if name not in names:
            hint = [c for c in base.combinations if c.split(" = ")[1].split(" ")[0] == name
                    or f" {name} " in f" {c.split(' = ')[1]} "]
            raise ModelError(f"--known {name}: not a base parameter nor a gain ({names[:6]}..., "
                             f"gain1..gain{n})" + (f"; it enters {hint[0]}" if hint else ""))
    groups, directions = groups
    resolved, warnings, fixed = [], [], dict(known)
    for g, d in zip(groups, directions.T):
        moves = np.abs(d) > 1e-6 * np.max(np.abs(d))  # the entries this group's scale changes
        has = any(moves[names.index(k)] for k in known)
        resolved.append(has)
        if not has:
            fixed[f"gain{g[0] + 1}"] = 1.0
            warnings.append(f"scale of joints {(g + 1).tolist()} cannot be resolved: no known quantity among "
                            f"their parameters or gains; the values of this group are one member of a "
                            f"one-parameter family of exact fits, the one with gain{g[0] + 1} = 1. "
                            f"Give --known NAME=VALUE (a payload mass, a base parameter or gain{g[0] + 1}).")
    k_idx = np.array([names.index(k) for k in fixed])
    v = np.array([fixed[k] for k in fixed], dtype=float)
    u_idx = np.setdiff1d(np.arange(b + n), k_idx)
    rhs = -(a[..., k_idx] @ v)
    est = OrdinaryLeastSquares([names[k] for k in u_idx], max_condition=max_condition).fit(a[..., u_idx], rhs)
    values = np.empty(b + n)
    std = np.zeros(b + n)
    values[u_idx], std[u_idx] = est.coef_, est.std_
    values[k_idx] = v
    resid = a @ values  # (m, n) in input-gain-scaled torque units; to input units below
    gains = values[b:]
    rmsd = np.sqrt(np.mean((resid / np.where(gains != 0, gains, 1.0)) ** 2, axis=0))
    return DriveFit(signal, names, values, std, dict(known), [(g + 1).tolist() for g in groups], resolved,
                    warnings + list(est.warnings_), rmsd, np.sqrt(np.mean(x**2, axis=0)), float(est.cond_), m,
                    diagnostics=est.diagnostics())


def identify_armature(system: FilteredSystem, gear_ratio: np.ndarray) -> dict:
    """Eq. V9 per joint from F[u], F[i], (sF)[i], F[dq]: R [Ohm], L [H], K_b [V s/rad]."""
    if "u" not in system.extra or "i" not in system.extra:
        raise DataError("the armature equation needs both voltages u1..un and currents i1..in")
    n = system.x.shape[1]
    r, ind, kb, rmsd = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    for j in range(n):  # n tiny 3-column problems
        cols = np.column_stack([system.extra["i"][:, j], system.extra["si"][:, j], system.dq[:, j]])
        sol, *_ = np.linalg.lstsq(cols, system.extra["u"][:, j], rcond=None)
        r[j], ind[j], kb[j] = sol[0], sol[1], sol[2] / gear_ratio[j]
        rmsd[j] = np.sqrt(np.mean((cols @ sol - system.extra["u"][:, j]) ** 2))
    return {"resistance": r.tolist(), "inductance": ind.tolist(), "back_emf": kb.tolist(), "rmsd": rmsd.tolist()}


def predict_filtered(system: FilteredSystem, beta: np.ndarray, gains: np.ndarray,
                     damping: np.ndarray | None = None) -> dict:
    """Model outputs in the filtered domain: {"x_hat": F[u] or F[i] (M, n), "tau_hat": F[tau_m] (M, n)
    or None}. tau_hat = W beta - c F[dq] needs the electrical damping c (voltage input; zeros for
    current input)."""
    wb = system.W @ beta
    tau = None if damping is None else wb - np.asarray(damping) * system.dq
    return {"x_hat": wb / gains, "tau_hat": tau}


def check_options(options: ModelOptions, signal: str, kind: str) -> None:
    """A known drive kind and input signal; voltage input of a dc-motor or velocity servo needs a
    viscous column for the damping c."""
    from dynid.drives.motor import DRIVE_KINDS

    if kind not in DRIVE_KINDS:
        raise ModelError(f"--drive {kind}: unknown drive model, expected one of {list(DRIVE_KINDS)}")
    if signal not in ("voltage", "current"):
        raise ModelError(f"--input {signal}: expected voltage (u1..un) or current (i1..in)")
    if signal == "voltage" and kind != "servo-current" and not any(
            f.startswith("Fv") for f in FRICTION_MODELS[options.friction]):
        raise ModelError(f"voltage input of a {kind}: the back-EMF damping c dq needs a viscous friction "
                         "column; use --friction coulomb-viscous (or polynomial, asymmetric)")
