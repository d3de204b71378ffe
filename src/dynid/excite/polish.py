"""Local polish of an excitation trajectory (second step of ``excite.optimize``).

SLSQP on the coefficients (C, q0) with the position, velocity and acceleration limits at
dense instants as explicit linear constraints (exact Jacobians, the trajectory is linear in
(C, q0)), optional zero end conditions as linear equalities and optional prior-model torque
limits as a nonlinear constraint; objective gradients by batched forward differences.
``make_feasible`` is the final check with guaranteed bounds.

SLSQP stops after ``settings.polish_iterations`` iterations (or earlier on its own tolerance),
which makes the polish deterministic; the wall-clock ``deadline`` is only the caller's safety
net, and the returned ``info["time_limited"]`` tells when it cut the polish short.
"""

from __future__ import annotations

import math
import time

import numpy as np
import scipy.optimize

from dynid.errors import DataError
from dynid.excite.criteria import batch_normalized_spectrum
from dynid.excite.limits import KinematicLimits, periodic_ratio_bounds
from dynid.excite.periodic import PeriodicTrajectory


class _Timeout(Exception):
    pass


def polish(problem, q0: np.ndarray, c: np.ndarray, deadline: float = math.inf,
           progress=None) -> tuple[np.ndarray, np.ndarray, float, dict]:
    """SLSQP from (q0, C) with the explicit linear constraints; returns the best feasible point
    (q0, C, criterion value) and info {"iterations": int, "time_limited": bool}.

    At most ``problem.settings.polish_iterations`` SLSQP iterations (none when 0); deadline:
    wall-clock safety net (``time.perf_counter`` value); progress: optional
    callable(iteration, best_value) after each iteration.

    For ``cond`` the polish works on the epigraph form (the minimum of a max/min ratio is
    where several extreme singular values coalesce, a kink that stalls plain gradient steps):

        minimize U - L  over (x, L, U)
        subject to  L <= log sigma_k(x) for the ``EXTREME`` smallest, log sigma_k(x) <= U for
                    the ``EXTREME`` largest singular values of the column-normalized W,

    which has smooth constraints and a linear objective.
    """
    a, ub = problem.linear_constraints()
    eq = problem.equality_constraints()
    x0 = problem.pack(q0, c)
    info = {"iterations": 0, "time_limited": False}
    if problem.settings.polish_iterations == 0:
        return q0, c, float(problem.values(q0[None, :], c[None, :])[0]), info
    geo = None
    if getattr(problem, "geometry", None) is not None:
        from dynid.excite.geometry.polish_constraint import TrajectoryGeometry

        geo = TrajectoryGeometry(problem, problem.geometry, x0)
    if problem.settings.criterion == "cond" and not problem.settings.torque_limits:
        return _polish_cond_epigraph(problem, x0, a, ub, eq, deadline, info, progress, geo)
    scale = np.maximum(np.abs(x0), 1e-3)  # relative steps for the finite differences
    tol = 1e-9

    def torque_margin(x):  # prior-model torques at the polish instants
        return 1.0 - problem.torque_ratios(*problem.samples(*problem.unpack(x), polish=True))[0]

    def feasible(x):
        ok = np.all(a @ x <= ub + tol) and (eq is None or np.all(np.abs(eq @ x) <= 1e-9))
        ok = ok and (not problem.settings.torque_limits or np.all(torque_margin(x) >= 0.0))
        return ok and (geo is None or geo.feasible(x))

    f0 = float(problem.values(*problem.unpack(x0))[0])
    best = {"x": x0, "f": f0 if feasible(x0) else math.inf}

    def fun(x):
        if time.perf_counter() > deadline:
            raise _Timeout
        f = float(problem.values(*problem.unpack(x))[0])
        if f < best["f"] and feasible(x):
            best["x"], best["f"] = x.copy(), f
        return f

    def jac(x):  # forward differences, all perturbed trajectories in one batch
        if time.perf_counter() > deadline:
            raise _Timeout
        h = 1e-6 * scale
        f = problem.values(*problem.unpack(np.vstack([x, x + np.diag(h)])))
        return (f[1:] - f[0]) / h

    constraints = [{"type": "ineq", "fun": lambda x: ub - a @ x, "jac": lambda x: -a}]
    if eq is not None:
        constraints.append({"type": "eq", "fun": lambda x: eq @ x, "jac": lambda x: eq})
    if problem.settings.torque_limits:
        constraints.append({"type": "ineq", "fun": torque_margin})
    if geo is not None and geo.size:
        constraints.append({"type": "ineq", "fun": geo.values, "jac": geo.jacobian})

    def callback(x):
        info["iterations"] += 1
        if progress is not None:
            progress(info["iterations"], best["f"])

    try:
        res = scipy.optimize.minimize(fun, x0, jac=jac, method="SLSQP", constraints=constraints,
                                      callback=callback,
                                      options={"maxiter": problem.settings.polish_iterations, "ftol": 1e-7})
        x = res.x
        fx = float(problem.values(*problem.unpack(x))[0])
        if fx < best["f"] and feasible(x):
            best["x"], best["f"] = x, fx
    except _Timeout:
        info["time_limited"] = True
    q0b, cb = problem.unpack(best["x"])
    # a start that never met the torque limits keeps its penalized value (ranked last)
    return q0b[0], cb[0], best["f"] if math.isfinite(best["f"]) else f0 + 1e6, info


EXTREME = 10  # singular values on each end of the spectrum held by the epigraph constraints


def _polish_cond_epigraph(problem, x0, a, ub, eq, deadline, info, progress, geo=None):
    nx = x0.size
    scale = np.maximum(np.abs(x0), 1e-3)
    b = problem.model.b
    k = min(EXTREME, b // 2)
    ends = np.r_[np.arange(k), np.arange(b - k, b)]
    # one-entry caches: SLSQP asks for the constraint values at every line-search point but
    # for their Jacobian only at the accepted ones, so the finite-difference batch (nx + 1
    # spectra) runs only when a Jacobian is asked for
    value_cache: dict = {}
    jac_cache: dict = {}

    def spectrum_log(xs):
        lam = batch_normalized_spectrum(problem.model, *problem.samples(*problem.unpack(xs), polish=True))
        return 0.5 * np.log(np.maximum(lam, 1e-300))  # log singular values, ascending

    def spectrum_values(x):  # the k smallest and k largest log singular values
        key = x.tobytes()
        if key not in value_cache:
            if time.perf_counter() > deadline:
                raise _Timeout
            value_cache.clear()
            value_cache[key] = spectrum_log(x[None, :])[0, ends]
        return value_cache[key]

    def spectrum_jac(x):  # forward differences, all perturbed trajectories in one batch
        key = x.tobytes()
        if key not in jac_cache:
            base = spectrum_values(x)
            if time.perf_counter() > deadline:
                raise _Timeout
            h = 1e-6 * scale
            ls = spectrum_log(x[None, :] + np.diag(h))[:, ends]
            jac_cache.clear()
            jac_cache[key] = ((ls - base) / h[:, None]).T
        return jac_cache[key]

    def feasible(x):
        ok = np.all(a @ x <= ub + 1e-9) and (eq is None or np.all(np.abs(eq @ x) <= 1e-9))
        return ok and (geo is None or geo.feasible(x))

    f0 = float(np.ptp(spectrum_log(x0[None, :])[0]))
    best = {"x": x0, "f": f0 if feasible(x0) else math.inf}

    def spectral_margin(y):  # >= 0: [log s_small - L, U - log s_large]
        x, low, high = y[:nx], y[nx], y[nx + 1]
        values = spectrum_values(x)
        margin = np.r_[values[:k] - low, high - values[k:]]
        f = float(values[-1] - values[0])
        if f < best["f"] and feasible(x):
            best["x"], best["f"] = x.copy(), f
        return margin

    def spectral_margin_jac(y):
        jac = spectrum_jac(y[:nx])
        out = np.zeros((2 * k, nx + 2))
        out[:k, :nx], out[:k, nx] = jac[:k], -1.0
        out[k:, :nx], out[k:, nx + 1] = -jac[k:], 1.0
        return out

    ls0 = spectrum_log(x0[None, :])[0]
    y0 = np.r_[x0, ls0[0], ls0[-1]]
    a_y = np.hstack([a, np.zeros((a.shape[0], 2))])
    constraints = [{"type": "ineq", "fun": lambda y: ub - a_y @ y, "jac": lambda y: -a_y},
                   {"type": "ineq", "fun": spectral_margin, "jac": spectral_margin_jac}]
    if eq is not None:
        eq_y = np.hstack([eq, np.zeros((eq.shape[0], 2))])
        constraints.append({"type": "eq", "fun": lambda y: eq_y @ y, "jac": lambda y: eq_y})
    if geo is not None and geo.size:
        constraints.append({"type": "ineq", "fun": lambda y: geo.values(y[:nx]),
                            "jac": lambda y: np.hstack([geo.jacobian(y[:nx]), np.zeros((geo.size, 2))])})
    gradient = np.zeros(nx + 2)
    gradient[nx], gradient[nx + 1] = -1.0, 1.0

    def callback(y):
        info["iterations"] += 1
        if progress is not None:
            progress(info["iterations"], best["f"])

    try:
        res = scipy.optimize.minimize(lambda y: y[nx + 1] - y[nx], y0, jac=lambda y: gradient,
                                      method="SLSQP", constraints=constraints, callback=callback,
                                      options={"maxiter": problem.settings.polish_iterations, "ftol": 1e-9})
        spectral_margin(res.x)  # records res.x when it is the best feasible point
    except _Timeout:
        info["time_limited"] = True
    if not math.isfinite(best["f"]):  # never feasible: keep the start, ranked by its value
        best["x"] = x0
    q0b, cb = problem.unpack(best["x"])
    return q0b[0], cb[0], float(problem.values(q0b, cb)[0]), info


def make_feasible(trajectory: PeriodicTrajectory, limits: KinematicLimits, samples: int = 4000) -> PeriodicTrajectory:
    """Shrink joints whose guaranteed bounds exceed a limit about their mid position."""
    c, q0 = trajectory.coefficients.copy(), trajectory.q0.copy()
    for _ in range(20):
        traj = trajectory.with_coefficients(q0, c)
        ratios = periodic_ratio_bounds(traj, limits, samples)
        worst = np.maximum.reduce([ratios["q"], ratios["dq"], ratios["ddq"]])
        if np.all(worst <= 1.0):
            return traj
        bad = worst > 1.0
        shrink = np.where(bad, (1.0 - 1e-6) / worst, 1.0)
        middle = limits.center
        c *= shrink
        q0 = np.where(bad, middle + (q0 - middle) * shrink, q0)
    raise DataError("could not make the optimized trajectory respect the limits")
