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
model is exactly the linear model the final fit solved. The standard deviations of Fc, Fl, Fv
(and of the base parameters) are those of that linear fit at the last iterate's load torque.
Rows where a joint stands still (``data.rest``: dq = 0) carry no Coulomb term (sign 0).

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
