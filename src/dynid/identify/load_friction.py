"""Load-dependent Coulomb friction (``--friction load-dependent``): the fixed-point fit of (L1).

In a loaded gear (harmonic drives, cycloidal and planetary reducers) the dry friction of the
teeth and bearings grows with the torque they transmit. Hamon, Gautier & Garrec ("Dynamic
identification of robots with a dry friction model depending on load and velocity", IEEE/RSJ
IROS 2010) model the Coulomb level of joint j as affine in the load torque; Bittencourt et al.
(IROS 2010; the thesis' ref. [5]) measured the same on an industrial joint. With the
viscous term (``identify.model``, friction ``load-dependent``):

    f_j = (Fc_j + Fl_j |tau_load,j|) sign(dq_j) + Fv_j dq_j                                  (L1)

tau_load (``model.load_torque``) is the torque of the links' and rotors' inertia, Coriolis and
gravity: the model's own torque without friction and offset, linear in the inertial base
parameters, tau_load = Y_I beta_I. So (L1) is nonlinear in the parameters only through
|Y_I beta_I|, and the usual identification (Hamon et al.) is a fixed point of linear fits:

1. beta^0: the Coulomb-viscous fit (``identify.stribeck`` step 3: weighted least squares, each
   joint's rows over its noise sigma_j);
2. with tau_load^k = Y_I beta_I^k the column c_j = |tau_load,j^k| sign(dq_j) is a known
   function of the samples: the weighted least squares of [Y_b | c] gives beta^(k+1) and Fl;  (L2)
3. stop when the load torque moves by less than ``TOLERANCE`` of each joint's RMS torque
   (RMS over the rows of Y_I (beta_I^(k+1) - beta_I^k), from the Gram alone), at most
   ``ITERATIONS`` times. The map contracts by about max_j Fl_j (a tenth for a harmonic drive):
   three to five iterations.

The last iterate's inertial parameters (as standard parameters: beta at the independent ones,
zero elsewhere, which gives the same torque) are the model's ``load_parameters``: result.json
keeps them, and predict, validate and export compute the load torque from them, so the stored
model is exactly the linear model the final fit solved. Rows where a joint stands still
(``data.rest``: dq = 0) carry no Coulomb term (sign 0).

The standard deviations are those of the fixed point, not of the last linear fit, which treats
the load column as known. At the fixed point x = (beta, Fl, ...) the normal equations
A(beta)^T W (tau - A(beta) x) = 0 hold; noise d tau moves x and, through beta_I, the column: to
first order (the term of dA^T times the residual is of second order)

    A^T W (A + D) dx = A^T W d tau,   D = d(A(beta) x)/d beta_I = g A_I,
    g_j = Fl_j sign(dq_j) sign(tau_load,j)                                                  (L3)

so dx = (I + G)^-1 dx_fit with G = (A^T W A)^-1 A^T W D, and the covariance is T C T^T with
T = (I + G)^-1 and C the last fit's (``fixed_point_std``, ``Estimator.through_fixed_point``; ols
and wls, whose weights are per joint; irls and pc keep C). G is of the order of Fl times the
correlation of g A_I with the fit's columns, and g changes sign with the motion: at Fl = 0.1 the
two agree with the spread over 400 noise draws alike (within its 3.5 % sampling error, spread /
std 0.90-1.08 both), at Fl = 0.3 the last fit's std is up to 14 % off (er3a my4R, spread / std
1.143; planar2 0.866-1.117) and the fixed point's 0.90-1.08 (er3a) and 0.95-1.06 (planar2)
(``bench/load_friction.py --std --draws 400``; ``tests/test_load_friction_std.py``: 600 draws on
the planar2, every parameter within 10 %).
With a friction drift (``identify.drift_fit``) A holds the drift's columns too and Fl_j is its
drifting value at each sample.

Only an uncoupled transmission (a coupled motor's load is a combination of joint torques).
"""

from __future__ import annotations

import numpy as np

from dynid.identify.model import ModelOptions, load_parameters, parameter_slices
from dynid.identify.physical import pseudo_solve

ITERATIONS = 20  # fixed-point iterations at most (L2)
TOLERANCE = 1e-6  # of each joint's RMS torque: the load torque has stopped moving (step 3)


def inertial_base_columns(robot, options: ModelOptions, base) -> np.ndarray:
    """(b,) True for the base parameters whose representative is a link's inertial parameter or
    a rotor inertia: their columns make tau_load = Y_I beta_I."""
    sl = parameter_slices(robot, options)
    k = np.asarray(base.independent)
    return (k < sl["rigid"].stop) | ((k >= sl["rotor_inertia"].start) & (k < sl["rotor_inertia"].stop))


def load_options(robot, options: ModelOptions, base, beta: np.ndarray) -> ModelOptions:
    """``options`` (the model of ``base``: Coulomb-viscous, or load-dependent) turned
    load-dependent with the load torque of the base parameters beta (b,): their inertial part as
    standard parameters."""
    theta = np.zeros(base.K.shape[1])
    theta[base.independent] = np.where(inertial_base_columns(robot, options, base), beta, 0.0)
    return ModelOptions(friction="load-dependent", rotor_inertia=options.rotor_inertia, offset=options.offset,
                        smooth_sign=options.smooth_sign, load_parameters=load_parameters(robot, options, theta))


class LoadGram:
    """Per joint the Gram (n, b + 2, b + 2) of [Y_b | c | tau] over the fitted rows (L2)."""

    def __init__(self, n: int, b: int):
        self.S = np.zeros((n, b + 2, b + 2))
        self.b = b

    def add(self, yb: np.ndarray, column: np.ndarray, tau: np.ndarray, keep: np.ndarray) -> None:
        """yb (N, n, b), column c (N, n), tau (N, n), keep (N, n) rows to use."""
        z = np.concatenate([yb, column[..., None], tau[..., None]], axis=2) * keep[..., None]
        self.S += np.einsum("tja,tjb->jab", z, z, optimize=True)

    def fit(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(beta (b,), Fl (n,)): weighted least squares, joint j's rows over ``weights[j]`` =
        1 / sigma_j^2; c_j acts on joint j's rows alone."""
        n, b = self.S.shape[0], self.b
        S = self.S * weights[:, None, None]
        a, rhs = np.zeros((b + n, b + n)), np.zeros(b + n)
        a[:b, :b], rhs[:b] = S[:, :b, :b].sum(axis=0), S[:, :b, -1].sum(axis=0)
        for j in range(n):  # loop over joints: one column each
            a[:b, b + j] = a[b + j, :b] = S[j, :b, b]
            a[b + j, b + j], rhs[b + j] = S[j, b, b], S[j, b, -1]
        x = pseudo_solve(a, rhs)
        return x[:b], x[b:]


def fit_load_torque(blocks, n: int, inertial: np.ndarray, beta0: np.ndarray,
                    weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """(beta (b,), Fl (n,), {"iterations", "change"}) of the fixed point (L2) from beta0 (the
    Coulomb-viscous fit). ``blocks()``: an iterable, made anew for every pass, of (yb (N, n, b),
    sign (N, n), tau (N, n), keep (N, n)); ``inertial`` (b,): ``inertial_base_columns``."""
    beta, fl, change = np.asarray(beta0, dtype=float), np.zeros(n), np.inf
    for iteration in range(1, ITERATIONS + 1):
        gram = LoadGram(n, beta.size)
        for yb, sign, tau, keep in blocks():
            load = yb[..., inertial] @ beta[inertial]
            gram.add(yb, np.abs(load) * sign, tau, keep)
        new, fl = gram.fit(weights)
        step = np.where(inertial, new - beta, 0.0)
        b = beta.size
        moved = np.einsum("a,jab,b->j", step, gram.S[:, :b, :b], step)  # sum over rows of (Y_I step)^2 per joint
        change = float(np.max(np.sqrt(moved / np.maximum(gram.S[:, -1, -1], 1e-300))))
        beta = new
        if change < TOLERANCE:
            break
    return beta, fl, {"iterations": iteration, "change": change}


def refit_to_fixed_point(robot, options: ModelOptions, base, fit) -> tuple[object, ModelOptions, dict]:
    """(L2) around any fit that is linear at a given load torque (the drifting friction of
    ``identify.drift_fit``): ``fit(options)`` -> an object with ``estimator.coef_`` (the b base
    parameters of ``base`` first) and ``ne`` (its ``NormalEquations``, the base parameters
    first), for the load-dependent ``options`` given. From ``options``' load torque (the static
    fixed point), refit at the load torque of the last fit's inertial base parameters until it
    moves by less than ``TOLERANCE`` of each joint's RMS torque (step 3). Returns (the last fit,
    the options it was fitted with: their load parameters are the model's, {"iterations",
    "change"})."""
    inertial, b = inertial_base_columns(robot, options, base), base.rank
    previous, change = None, np.inf
    for iteration in range(1, ITERATIONS + 1):
        fitted, used = fit(options), options
        beta = np.asarray(fitted.estimator.coef_[:b], dtype=float)
        if previous is not None:
            step = np.where(inertial, beta - previous, 0.0)
            moved = np.einsum("a,jab,b->j", step, fitted.ne.A[:, :b, :b], step)
            change = float(np.max(np.sqrt(moved / np.maximum(fitted.ne.C, 1e-300))))
            if change < TOLERANCE:
                break
        previous, options = beta, load_options(robot, options, base, beta)
    return fitted, used, {"iterations": iteration, "change": change}


def load_slope(options: ModelOptions, fl: np.ndarray, dq: np.ndarray, load: np.ndarray) -> np.ndarray:
    """(N, n) d f_j / d tau_load,j of (L1) at the samples: Fl_j sign(dq_j) sign(tau_load,j) (the
    tanh sign of ``smooth_sign`` alike); fl (n,) or (N, n) (a drifting Fl: its value at each sample)."""
    return fl * (np.tanh(dq / options.smooth_sign) if options.smooth_sign > 0 else np.sign(dq)) * np.sign(load)


def slope_gram(parts, n: int, p: int) -> np.ndarray:
    """(n, p, p) per joint sum_t g_j(t) a_j(t) a_j(t)^T over ``parts``: an iterable of (a (N, n, p)
    the fit's regressor rows, g (N, n) ``load_slope``, keep (N, n) the fitted rows or None: all)."""
    out = np.zeros((n, p, p))
    for a, g, keep in parts:
        ga = a * (g if keep is None else np.where(keep, g, 0.0))[..., None]
        out += np.einsum("tja,tjb->jab", ga, a, optimize=True)
    return out


def fixed_point_std(est, ne, gram: np.ndarray, inertial: np.ndarray) -> bool:
    """Give ``est`` (fitted to ``ne`` at the fixed point) the covariance of the fixed point (L3):
    the model's torque A(beta) x changes with the inertial base parameters beta_I through its
    load column too, d(A x)/d beta_I = g A_I (g = ``load_slope``), so with the fit's weights W
    (ols: 1, wls: 1 / sigma_j^2) N = sum_j w_j A_j and X = sum_j w_j gram_j[:, inertial] (placed at
    the inertial columns) in ``Estimator.through_fixed_point``. ``gram``: ``slope_gram`` (n, p, p);
    inertial: (p,) the inertial base parameters (``inertial_base_columns``, False for the rest).
    Returns False (std left at the last iterate's) for an estimator whose weights are not per
    joint (irls, pc)."""
    if est.name not in ("ols", "wls"):
        return False
    w = np.ones(ne.n) if est.name == "ols" else np.asarray(est.weights_, dtype=float)
    cross = np.zeros(ne.A.shape[1:])
    cross[:, inertial] = np.einsum("j,jab->ab", w, gram[:, :, inertial])
    est.through_fixed_point(np.einsum("j,jab->ab", w, ne.A), cross)
    return True


def fitted_fl(base, beta: np.ndarray, n: int) -> np.ndarray:
    """(n,) Fl_j of the base parameters beta (``Fl1``..; 0 where a joint has none)."""
    index = {name: i for i, name in enumerate(base.names)}
    return np.array([beta[index[f"Fl{j + 1}"]] if f"Fl{j + 1}" in index else 0.0 for j in range(n)])


def fitted_rows(robot, options: ModelOptions, base, readies, masks, block: int = 8192, rows=None):
    """The rows of a fit of prepared logs ``readies`` on their fitted rows ``masks``
    (``drift_fit.fit_rows``), block by block: (log index, slice, q, dq, ddq, Y_b (N, n, b) as the
    fit formed it, mask (N, n)); ``rows``: these [(log index, slice)] instead of every log's blocks
    (``residual_correlation.log_windows``)."""
    from dynid.identify.model import log_regressor

    if rows is None:
        rows = [(i, slice(s, s + block)) for i, ready in enumerate(readies) for s in range(0, len(ready), block)]
    for i, sl in rows:
        ready = readies[i]
        y = log_regressor(robot, ready, sl, options)  # as the fit formed it
        yield i, sl, ready.q[sl], ready.dq[sl], ready.ddq[sl], y[..., base.independent], masks[i][sl]


def static_parts(robot, options: ModelOptions, base, readies, masks, fl: np.ndarray):
    """``slope_gram``'s parts of a static load-dependent fit (``fitted_rows``), Fl (n,) its values."""
    from dynid.identify.model import load_torque

    for _, _, q, dq, ddq, yb, mask in fitted_rows(robot, options, base, readies, masks):
        yield yb, load_slope(options, fl, dq, load_torque(robot, q, dq, ddq, options)), mask


def held_out_fixed_points(blocks, n: int, folds: int, inertial: np.ndarray, beta: np.ndarray,
                          weights: np.ndarray) -> np.ndarray:
    """(folds, n) held-out weighted RSS of the load-dependent model (``identify.stribeck`` step 4):
    fold k predicted by the fixed point (L2) of the other folds' rows alone, its load torque
    included, so no fold's noise is in the column that predicts it. ``blocks``: the rows
    (``friction_grams.RegressorBlocks``: yb, dq, sign, tau, keep, fold; fold -1 in a gap between
    folds, in neither); beta (b,): the whole log's fixed point, where each fold's starts (the same
    fixed point, the map contracts: two to four passes); weights (n,): 1 / sigma_j^2."""
    rss = np.zeros((folds, n))
    for k in range(folds):  # loop over folds: one fixed point each
        others = lambda k=k: ((yb, sign, tau, keep & ((fold >= 0) & (fold != k))[:, None])  # noqa: E731
                              for yb, _, sign, tau, keep, fold in blocks)
        beta_k, fl_k, _ = fit_load_torque(others, n, inertial, beta, weights)
        for yb, _, sign, tau, keep, fold in blocks:
            r = tau - yb @ beta_k - fl_k * np.abs(yb[..., inertial] @ beta_k[inertial]) * sign  # (L1)
            rss[k] += weights * np.sum(np.where(keep & (fold == k)[:, None], r, 0.0) ** 2, axis=0)
    return rss
