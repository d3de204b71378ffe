"""Drive gains from a known load: the current-to-torque gains and the robot's parameters together.

A drive logs its motor current i_j, not the joint torque: tau_j = K_j i_j with K_j the gear
ratio times the motor's torque constant times whatever the amplifier scales, rarely known to
better than 10 %. A gain error is a scale error of every parameter the joint's torque shows;
a common error of all gains is invisible in any one log (the model fits the scaled torques
as well) and moves a payload's mass by as much. A log without a load and one with a load of
known mass (optionally centre of mass and inertia) fix the scale: Gautier & Briot, "Global
identification of joint drive gains and dynamic parameters of robots", ASME J. Dyn. Syst.,
Meas., Control 136(5), 2014 (the method used for the drive calibration of 6-axis cobots, e.g.
the UR10e of Mamedov et al., "Practical aspects of model-based collision detection",
Frontiers in Robotics and AI, 2020).

Rows of joint j, with the model's base regressor Y_b (``identify.model``) and the flange body's
ten standard columns split into the load's known parameters phi_k and unknown ones phi_u
(thesis eq. 3.14 order, the payload's frame as ``identify.payload``):

    without the load:  Y_b,j beta                 - i_j K_j = 0                        (G1)
    with the load:     Y_b,j beta + Y_u,j phi_u   - i_j K_j = - Y_k,j phi_k = y_j      (G2)

so W x = y with x = [beta; phi_u; K], linear in x; beta, phi_u are in torque units. The
measured currents sit in the regressor W, which is what the estimators differ in:

- ``ols``: least squares on (G1-G2), weighted per joint (Gautier's two steps, as
  ``estimators.WLS``). The part of i_j that the model's columns do not explain is mostly its
  noise, so the noise in the regressor biases the gains toward zero (errors in variables):
  0.1-0.2 % at 0.5 % current noise on the simulated er3a, 2-4 % at 5 %.
- ``tls`` (default): Gautier & Briot's total least squares first: the right singular vector of
  the smallest singular value of the weighted total matrix [W | y] (rows of joint j over
  sigma_j), scaled so that the known load's coefficient is -1                             (G3)
  (a null vector of [W | y] is [x; -1]). Plain TLS lets every entry of W err alike, but only
  the currents do: its solution starts the structured total least squares in which only the
  currents are perturbed. With the current error e_j = i_j - (W_j,x x - y_j) / K_j (W_j,x the
  columns of beta and phi_u), it is

      min_{x, K}  sum_j w_j ||K_j i_j - W_j,x x + y_j||^2 / K_j^2                      (G4)

  (w_j = 1 / sigma_j^2 in torque units; sigma_j / K_j is the current's), the maximum-likelihood
  estimate for white current noise. For fixed K, (G4) is weighted least squares in x, so it
  is a problem in the n gains alone (variable projection, as the drift's time constants in
  ``identify.drift_constants``), solved by BFGS over log K from the TLS start, all from the
  per-joint normal equations. On the er3a with 5 % current noise: plain TLS 0.3-0.6 % off,
  (G4) 0.0-0.2 % (docs/identification.md). Covariance: Gauss-Newton, s^2 (sum_j w_j/K_j^2 A_j)^-1.
- ``pc``: (G4) with the robot's links and the load physically consistent (``gains_pc``).

A gain is *determined* when the normal matrix of (G1-G2) fixes it (``payload.determined_parameters``):
the known load must act on the joint's equation, directly or through parameters it shares
with joints the load does act on. An undetermined gain is an error naming the joint and what
would determine it, never a guessed number.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

from dynid.data.preprocess import edge_samples, prepared_rate
from dynid.data.segments import piece_starts, segment_edge_mask
from dynid.errors import DataError, IllConditionedError
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.identify.model import identification_regressor
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.payload import determined_parameters, flange_body
from dynid.identify.physical import pseudo_solve
from dynid.identify.pipeline import fitted_rest, row_mask
from dynid.identify.rest_levels import rest_runs
from dynid.identify.threads import single_blas_thread
from dynid.robot.inertia import PARAMETER_NAMES, from_mass_com_inertia

METHODS = ("tls", "ols", "pc")
BLOCK = 8192  # samples per regressor evaluation


@dataclass(frozen=True)
class KnownLoad:
    """What is known of the load on the flange: mass [kg]; optionally its centre of mass (3,)
    [m] in the flange body's link frame and, with it, its inertia about the centre of mass
    [Ixx, Ixy, Ixz, Iyy, Iyz, Izz] [kg m^2] (link-frame axes)."""

    mass: float
    com: tuple | None = None
    inertia: tuple | None = None

    def __post_init__(self):
        if not (np.isfinite(self.mass) and self.mass > 0):
            raise DataError(f"the known load's mass must be a positive number of kg, got {self.mass}")
        if self.com is not None and np.size(self.com) != 3:
            raise DataError(f"the known load's centre of mass: expected 3 numbers (x, y, z in m), got {self.com}")
        if self.inertia is not None:
            if self.com is None:
                raise DataError("the known load's inertia is about its centre of mass: give the centre of mass too")
            if np.size(self.inertia) != 6:
                raise DataError("the known load's inertia: expected 6 numbers Ixx, Ixy, Ixz, Iyy, Iyz, Izz "
                                f"(kg m^2, about the centre of mass), got {self.inertia}")

    def split(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(known indices, their values, unknown indices) of the load's ten standard parameters."""
        count = 1 if self.com is None else 4 if self.inertia is None else 10
        com = np.zeros(3) if self.com is None else np.asarray(self.com, dtype=float)
        inertia = np.zeros((3, 3))
        if self.inertia is not None:
            xx, xy, xz, yy, yz, zz = np.asarray(self.inertia, dtype=float)
            inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        phi = from_mass_com_inertia(self.mass, com, inertia)
        return np.arange(count), phi[:count], np.arange(count, 10)

    def to_dict(self) -> dict:
        return {"mass": self.mass, "com": None if self.com is None else [float(c) for c in self.com],
                "inertia_about_com": None if self.inertia is None else [float(c) for c in self.inertia]}


@dataclass
class GainEquations:
    """The per-joint normal equations of (G1-G2): ``ne`` over x = [beta (b); phi_u (u); K (n)],
    its right-hand side y the known load's torque; ``samples`` per log kind."""

    ne: NormalEquations
    b: int
    u: int
    samples: dict = field(default_factory=lambda: {"unloaded": 0, "loaded": 0})

    @property
    def n(self) -> int:
        return self.ne.n

    def add_log(self, robot, ready, options, base, prep, load: KnownLoad | None) -> int:
        """Add a prepared log (``JointData`` whose ``tau`` holds the currents, read with unit
        gains) without (load None) or with the known load; returns its samples. With rest
        detection (``prep.rest_band``) each rest's held current is a level of its own, eliminated
        as ``identify`` eliminates it (``identify.rest_levels``, H1)."""
        if ready.tau is None:
            raise DataError(f"{ready.source}: no currents i1..in to calibrate the drives from")
        keep = segment_edge_mask(ready, edge_samples(prep, prepared_rate(ready)))
        mask = row_mask(ready.dq, keep, prep)
        count = 0
        for s in range(0, len(ready), BLOCK):
            sl = slice(s, s + BLOCK)
            w, rhs = self.rows(robot, ready, sl, options, base, load)
            m = None if mask is None else mask[sl]
            self.ne.add(w, rhs, m)
            count += int(w.shape[0] if m is None else m.any(axis=1).sum())
        rest = fitted_rest(robot, ready.dq, keep, prep)
        if rest is not None and rest.any():
            self.ne -= self.rest_levels(robot, ready, rest, options, base, load)
        self.samples["loaded" if load is not None else "unloaded"] += count
        return count

    def rows(self, robot, ready, pick, options, base, load: KnownLoad | None) -> tuple[np.ndarray, np.ndarray]:
        """(W (N, n, b + u + 1), y (N, n)) of (G1-G2) at the samples ``pick`` of a prepared log."""
        y = identification_regressor(robot, ready.q[pick], ready.dq[pick], ready.ddq[pick], options)
        w = np.zeros(y.shape[:2] + (self.b + self.u + 1,))
        w[..., :self.b] = y[..., base.independent]
        rhs = np.zeros(w.shape[:2])
        if load is not None:
            known, values, unknown = load.split()
            body = flange_body(robot)
            flange = y[..., 10 * body:10 * body + 10]
            w[..., self.b:self.b + self.u] = flange[..., unknown]
            rhs = -(flange[..., known] @ values)
        w[..., -1] = -ready.tau[pick]
        return w, rhs

    def rest_levels(self, robot, ready, rest: np.ndarray, options, base, load: KnownLoad | None) -> NormalEquations:
        """The (H1) terms of the rests of a prepared log (rest (N, n): its fitted rows at rest):
        per rest of joint j with sums S (of W's rows) and s (of y) over its m rows, one row
        S / sqrt(m), s / sqrt(m), whose normal equations are the terms to subtract."""
        rows = np.flatnonzero(rest.any(axis=1))
        where = np.full(len(ready), -1)
        where[rows] = np.arange(rows.size)
        parts = [self.rows(robot, ready, rows[s:s + BLOCK], options, base, load) for s in range(0, rows.size, BLOCK)]
        w, rhs = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        found = [(j, a, b) for j in range(robot.n) for a, b in rest_runs(rest[:, j], piece_starts(ready))]
        level_w, level_y = np.zeros((len(found),) + w.shape[1:]), np.zeros((len(found), robot.n))
        own, held = np.zeros((len(found), robot.n), dtype=bool), np.zeros(robot.n)
        for r, (j, a, b) in enumerate(found):  # loop over rests, not samples
            k, root = where[a:b], np.sqrt(b - a)
            level_w[r, j], level_y[r, j], own[r, j] = w[k, j].sum(axis=0) / root, rhs[k, j].sum() / root, True
            held[j] += rhs[k, j].sum()
        terms = NormalEquations(self.ne.n, self.ne.b, self.ne.columns, self.ne.positions)
        terms.add(level_w, level_y, own)
        terms.tau_sum = held  # (H1) takes s itself off the sum of y, not s / sqrt(m)
        return terms

    @classmethod
    def empty(cls, n: int, b: int, u: int) -> "GainEquations":
        """Joint j's rows: the b + u shared columns, then its own gain at b + u + j."""
        positions = [np.concatenate([np.arange(b + u), [b + u + j]]) for j in range(n)]
        return cls(NormalEquations(n, b + u + n, columns=[np.arange(b + u + 1)] * n, positions=positions), b, u)


@dataclass
class GainFit:
    """x (b + u + n,) = [beta; phi_u; K], cov (same), method, the per-joint noise variance
    sigma2 (n,) [N^2 m^2], the residual of each joint in current units (n,) [A], the plain
    TLS gains that started the structured one (tls), notes."""

    x: np.ndarray
    cov: np.ndarray
    method: str
    sigma2: np.ndarray
    rms_current: np.ndarray
    svd_gains: np.ndarray | None = None
    cond: float = float("nan")
    notes: list = field(default_factory=list)

    def gains(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(K (n,), std (n,)) [N m / A]."""
        return self.x[-n:], np.sqrt(np.maximum(np.diag(self.cov)[-n:], 0.0))


def augmented_gram(ne: NormalEquations, weights: np.ndarray) -> np.ndarray:
    """(P + 1, P + 1) Z = sum_j w_j [W_j | y_j]^T [W_j | y_j], the weighted total matrix's Gram."""
    p = ne.b
    a, rhs = ne.totals(weights)
    z = np.empty((p + 1, p + 1))
    z[:p, :p], z[:p, p], z[p, :p], z[p, p] = a, rhs, rhs, float(weights @ ne.C)
    return z


def total_least_squares(ne: NormalEquations, weights: np.ndarray) -> np.ndarray:
    """(G3): x of the right singular vector of the smallest singular value of the weighted
    [W | y], taken as the eigenvector of the smallest eigenvalue of its Gram (as published:
    rows weighted per joint, columns in their own units)."""
    _, vec = np.linalg.eigh(augmented_gram(ne, weights))
    v = vec[:, 0]
    return -v[:-1] / v[-1]


def structured_tls(ne: NormalEquations, weights: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(x, covariance, s^2) of (G4) from gains ``start`` (n,) > 0 (module docstring)."""
    m, a, rhs, c = ne.b - ne.n, ne.A, ne.B, ne.C

    def solve_x(gains):
        omega = weights / gains**2
        h = np.einsum("j,jab->ab", omega, a[:, :m, :m])
        r = np.einsum("j,ja->a", omega, rhs[:, :m]) - np.einsum("j,jab,b->a", omega, a[:, :m, m:], gains)
        return pseudo_solve(h, r)

    def objective(log_gains):
        gains = np.exp(log_gains)
        v = np.concatenate([solve_x(gains), gains])
        rss = c - 2.0 * rhs @ v + np.einsum("jab,a,b->j", a, v, v)
        return float(np.sum(weights * np.maximum(rss, 0.0) / gains**2))

    scale = objective(np.log(start)) or 1.0
    res = scipy.optimize.minimize(lambda z: objective(z) / scale, np.log(start), method="BFGS",
                                  options={"gtol": 1e-10, "maxiter": 500})
    gains = np.exp(res.x)
    x = np.concatenate([solve_x(gains), gains])
    omega = weights / gains**2
    rss = np.maximum(ne.residual_ss(x), 0.0)
    dof = max(int(ne.rows.sum()) - ne.b, 1)
    s2 = float(np.sum(omega * rss)) / dof
    h = np.tensordot(omega, a, axes=1)
    return x, s2 * np.linalg.pinv(h, rcond=1e-12, hermitian=True), s2


def determined_unknowns(ne: NormalEquations, n: int) -> np.ndarray:
    """(b + u + n,) which unknowns the equations fix (``payload.determined_parameters``); an
    undetermined gain is one error naming the joints and what would determine it."""
    a, _ = ne.totals()
    ok = determined_parameters(a, tail=ne.b)
    if not ok[-n:].all():
        joints = [str(j + 1) for j in np.flatnonzero(~ok[-n:])]
        raise IllConditionedError(
            f"the logs do not determine the drive gain of joint(s) {', '.join(joints)}: the known load acts on no "
            "equation that fixes their scale (a current column that is zero or constant, a joint that does not "
            "move, or a load whose known part exerts no torque on them): log the joint's current, move it in both "
            "logs, or give the load's centre of mass (--com) so that its weight acts on the wrist")
    return ok


def noise_variances(ne: NormalEquations, x: np.ndarray) -> np.ndarray:
    """sigma_j^2 (n,) of each joint's rows (Gautier's RSS_j / (r_j - b_j)), at least 1e-12 of the
    mean square of the joint's torque K_j i_j (noise-free logs: weights by the torque's scale;
    the right-hand side, the known load's torque, is zero on many rows and cannot set it).
    The gains are the last n unknowns."""
    n = ne.n
    dof = np.maximum(ne.rows - ne.active_counts(), 1)
    g = ne.b - n + np.arange(n)
    torque = x[g] ** 2 * ne.A[np.arange(n), g, g] / np.maximum(ne.rows, 1)
    return np.maximum(ne.residual_ss(x) / dof, 1e-12 * torque + 1e-300)


def fit_gains(eqs: GainEquations, names: list[str], method: str = "tls", pc=None, max_condition: float = 1e7) -> GainFit:
    """The gains and parameters of (G1-G2) by ``method`` (module docstring); ``pc``: a callable
    (x_start, weights, ne, keep) -> (x, status) for the physically consistent variant
    (``gains_pc``). Unknowns the logs do not determine (a planar motion leaves a load's mz and
    most of its inertia free; a joint held still, some base parameters) are held at 0 and
    reported NaN, with a note."""
    if method not in METHODS:
        raise DataError(f"--method {method}: expected one of {list(METHODS)}")
    n = eqs.n
    ok = determined_unknowns(eqs.ne, n)
    keep = np.flatnonzero(ok)
    ne = eqs.ne.reduce(np.flatnonzero(~ok), np.zeros(int(np.sum(~ok))))  # the undetermined held at 0
    notes = []
    if not ok.all():
        notes.append("not determined by the logs, held at 0 and not reported: "
                     + ", ".join(names[k] for k in np.flatnonzero(~ok)))
    labels = [names[k] for k in keep]
    with single_blas_thread():  # Gautier's two steps: least squares, then rows over sigma_j
        first = OrdinaryLeastSquares(names=labels, max_condition=max_condition).fit_normal_equations(ne)
        weights = 1.0 / noise_variances(ne, first.coef_)
        wls = OrdinaryLeastSquares(names=labels, max_condition=max_condition).fit_normal_equations(
            ne.scaled(np.sqrt(weights)))
        notes += list(wls.warnings_)
        svd = None
        if method == "ols":
            x, cov = wls.coef_, wls.cov_
        else:
            svd = total_least_squares(ne, weights)[-n:]
            start = svd if np.all(svd > 0) else wls.coef_[-n:]
            if not np.all(start > 0):
                raise IllConditionedError("drive gains: neither total nor ordinary least squares gives positive gains "
                                          f"(TLS {np.round(svd, 4).tolist()}, OLS {np.round(wls.coef_[-n:], 4).tolist()}):"
                                          " check the current signs (--negate i) and that the load was on in the "
                                          "loaded log")
            if start is not svd:
                notes.append(f"plain total least squares gave gains {np.round(svd, 4).tolist()} (not all positive); "
                             "the structured fit started from ordinary least squares")
            x, cov, _ = structured_tls(ne, weights, start)
            if method == "pc":
                x, status = pc(x, weights, ne, keep[:-n])
                if status != "optimal":
                    notes.append(f"physically consistent fit: solver status {status}")
                omega = weights / x[-n:] ** 2
                dof = max(int(ne.rows.sum()) - ne.b, 1)
                s2 = float(np.sum(omega * ne.residual_ss(x))) / dof
                cov = s2 * np.linalg.pinv(np.tensordot(omega, ne.A, axes=1), rcond=1e-12, hermitian=True)
        sigma2 = noise_variances(ne, x)
    rms_current = np.sqrt(ne.residual_ss(x) / np.maximum(ne.rows, 1)) / np.abs(x[-n:])
    full_x, full_cov = np.full(ok.size, np.nan), np.full((ok.size, ok.size), np.nan)
    full_x[keep], full_cov[np.ix_(keep, keep)] = x, cov
    return GainFit(full_x, full_cov, method, sigma2, rms_current, svd, float(wls.cond_), notes)


def gain_names(base_names: list[str], unknown: np.ndarray, n: int) -> list[str]:
    """Names of x: the base parameters, the load's unknown ones (``load_mx``...), ``K1``..``Kn``."""
    return list(base_names) + [f"load_{PARAMETER_NAMES[k]}" for k in unknown] + [f"K{j + 1}" for j in range(n)]
