"""Stribeck friction and the friction model chosen by held-out error (``--friction stribeck|auto``).

Friction at low speed is not Coulomb's constant: breaking away from rest takes a static torque
Fs above the sliding Coulomb level Fc, and the friction falls from Fs to Fc as the speed rises
past the Stribeck velocity v_s (Armstrong-Helouvry, Dupont & Canudas de Wit, Automatica 30(7),
1994; the Gaussian shape of Olsson et al., Eur. J. Control 4(3), 1998):

    f_j = (Fc_j + (Fs_j - Fc_j) e_j) sign(dq_j) + Fv_j dq_j,   e_j = exp(-(dq_j / v_s,j)^2)   (S1)

For fixed v_s the model is linear in [Fc, Fs, Fv] (``identify.model``, friction ``stribeck``).
Its columns span those of the Coulomb-viscous model plus one column per joint,

    g_j(v) = exp(-(dq_j / v)^2) sign(dq_j),   coefficient Fs_j - Fc_j,                      (S2)

so the choice of v_s is a separable least-squares problem: for every v_s the linear parameters
follow by least squares, and only the n velocities are searched (variable projection, Golub &
Pereyra, SIAM J. Numer. Anal. 10(2), 1973). The polynomial model of the thesis (eq. 3.10) adds
the columns dq^2 sign(dq) and dq^3 to the same span. So one pass over the log gives everything:

1. the log is prepared as ``identify`` prepares it (the chosen cutoff) and cut into K folds of
   contiguous time (``crossval.fold_labels``: blocked cross-validation, h samples of gap);
2. per fold k and joint j the Gram S_kj of [Y_b,j | g_j(v_1) .. g_j(v_M) | dq^2 s, dq^3 | tau_j]
   (Y_b the base regressor of the Coulomb-viscous model, v_m a logarithmic grid of
   ``GRID_STEPS`` per octave from ``V_LOW`` to ``V_HIGH``; ``identify.friction_grams``): the
   normal equations of every candidate model are sub-blocks of it. A joint's rows at rest are left out: the rows the fit
   itself treats as rests (``pipeline.fitted_rest``: with rest detection, where ``data.rest``
   set dq = 0), not any row whose velocity happens to be 0. Standing still, a joint holds any
   torque up to Fs, which says nothing about the curve (every model's friction columns are 0
   there; the fit gives each rest a level of its own, ``identify.rest_levels``). So are a
   joint's rows at velocity reversals when the log shows the friction flip smeared there
   (``data.reversals``, V1-V2; the test ``identify.reversal_smear``, V3): where the drive torque
   is continuous the acceleration jumps by 2 F / M at a reversal, and the acceleration estimated
   from the sampled positions puts friction about half as high on the samples next to it,
   whatever friction model is fitted. Left in, they made a Stribeck fit with Fs < Fc win on a
   MuJoCo Coulomb-viscous log and moved v_s from 0.08 to 0.15 rad/s on a MuJoCo Stribeck log.
   The rows are left out of every model's fit and score alike, and of the final fit
   (``Preprocessing.reversal_span``, result.json "preprocessing");
3. a fit on a set of folds: weighted least squares (rows of joint j over sigma_j, the residual
   of the Coulomb-viscous fit on the whole log, reweighted three times as Gautier's two steps) of the base parameters and each joint's extra
   columns; for Stribeck, v_s,j is chosen by coordinate descent over the joints on the grid
   (each joint's v_s with the others fixed; sweeps until none changes), then refined by a
   parabola through the profile RSS at the best grid velocity and its neighbours (in log v);   (S3)
4. held-out error: each fold predicted by the fit on the others (v_s chosen without it), the
   residual sum of squares RSS_kj from the fold's Gram alone (``crossval`` CV1); the score of a
   model is sum_kj RSS_kj / sigma_j^2 over the rows (sigma_j^2: joint j's residual variance in
   the weighted Coulomb-viscous fit of the whole log; about 1 when that model is right). Weighting each
   joint by its noise lets the wrist joints, where low-speed friction is most of the torque,
   count as much as the gravity-loaded ones;
5. choice (``auto``): the lowest score, then the simplest model (Coulomb-viscous, then
   load-dependent, then polynomial, then Stribeck) that the best does not beat by more than a tie (within one
   standard error of the fold-by-fold differences, ``crossval._tied``) or by less than
   ``MIN_GAIN`` = 1 % of its score. A Stribeck fit whose static level is not above the
   sliding one is not Stribeck friction and is not chosen (S5, ``stribeck_refusal``:
   Fs - Fc below -3 std on some joint, or above +3 std on none); nor is a load-dependent fit
   whose load torque's fixed point did not converge (``identify.load_friction``: the stored
   load torque is then not that of the fitted parameters); the reason is in
   "friction_selection" "refused" and printed. The second rule is about use, not chance: on logs of a
   Coulomb-viscous truth the polynomial model won by 0.1 % beyond a tie in two of three draws,
   and on the real iiwa the Stribeck
   model by 0.65 % with the same relative error on every joint to 0.2 %; a Stribeck curve in the
   log lowered the score by 6-11 % (bench/stribeck.py, docs/friction.md). A gain below 1 % of
   the held-out error buys a feed-forward model nothing and costs the simpler model's export
   (MuJoCo's damping and frictionloss are exactly Coulomb-viscous). ``stribeck`` asked for is
   kept whatever the scores, which are reported beside it (result.json "friction_selection").

The Stribeck velocities of the final model are chosen on the whole log (step 3); their standard
deviations come from the Jacobian of the nonlinear fit (``identify.stribeck_uncertainty``, S4;
result.json "friction_selection" "stribeck_velocity_std"); the reported std of every base parameter
(Fc, Fs, Fv, rigid body) are those of the same joint estimate with v_s (S6,
``stribeck_uncertainty.joint_covariance``; ols and wls).

The load-dependent model (``identify.load_friction``, model.py L1) adds one column per joint,
|tau_load| sign(dq), whose load torque is a fixed point (L2): each fold is predicted by the fixed
point of the other folds' rows (``load_friction.held_out_fixed_points``, a fixed point per fold
started from the whole log's), so no fold's noise is in the column that predicts it. With it,
step 5's order of simplicity is Coulomb-viscous, load-dependent (one linear column per joint),
polynomial (two), Stribeck (one and a searched velocity).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from dynid.data.preprocess import Preprocessing, prepared_rate
from dynid.data.reversals import with_reversals
from dynid.identify.reversal_smear import reversal_smear
from dynid.errors import DataError
from dynid.files.outputs import json_floats
from dynid.identify.base import base_parameters
from dynid.identify.crossval import FOLDS, _tied
from dynid.identify.friction_grams import FrictionGrams, RegressorBlocks, accumulate
from dynid.identify.model import ModelOptions
from dynid.identify.normal_equations import spectrum
from dynid.identify.physical import pseudo_solve
from dynid.identify.pipeline import prepared_sources
from dynid.identify.threads import single_blas_thread

V_LOW, V_HIGH, GRID_STEPS = 0.002, 1.0, 3  # Stribeck velocity grid [rad/s | m/s]: 3 points per octave
MODELS = ("coulomb-viscous", "load-dependent", "polynomial", "stribeck")  # simplest first (step 5)
MIN_GAIN = 0.01  # a richer friction model must lower the held-out score by more than this share (step 5)


def velocity_grid() -> np.ndarray:
    """(M,) candidate Stribeck velocities, logarithmic from V_LOW to V_HIGH."""
    steps = math.ceil(GRID_STEPS * math.log2(V_HIGH / V_LOW))
    return V_LOW * (V_HIGH / V_LOW) ** (np.arange(steps + 1) / steps)


def _normal(S: np.ndarray, b: int, extra: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, float]:
    """(A, rhs, C) of the least squares over x = [beta (b); joint 1's extra; ...] from a weighted
    Gram S (n, Q, Q): a joint's extra columns act on its own rows only."""
    n, sizes = S.shape[0], [e.size for e in extra]
    p = b + sum(sizes)
    a, rhs = np.zeros((p, p)), np.zeros(p)
    a[:b, :b], rhs[:b] = S[:, :b, :b].sum(axis=0), S[:, :b, -1].sum(axis=0)
    start = b
    for j in range(n):
        cols, own = extra[j], slice(start, start + sizes[j])
        a[:b, own], a[own, :b] = S[j][:b][:, cols], S[j][cols][:, :b]
        a[own, own], rhs[own] = S[j][np.ix_(cols, cols)], S[j][cols, -1]
        start += sizes[j]
    return a, rhs, float(S[:, -1, -1].sum())


def _fit(S: np.ndarray, b: int, extra: list[np.ndarray]) -> np.ndarray:
    """Least squares x (``_normal``'s layout) from a weighted Gram S (n, Q, Q)."""
    a, rhs, _ = _normal(S, b, extra)
    return pseudo_solve(a, rhs)


def _rss(S: np.ndarray, b: int, extra: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """(n,) residual sum of squares of each joint of Gram S (n, Q, Q) at x (``_fit``'s layout)."""
    out, start = np.empty(S.shape[0]), b
    for j in range(S.shape[0]):
        idx = np.concatenate([np.arange(b), extra[j]])
        v = np.concatenate([x[:b], x[start:start + extra[j].size]])
        start += extra[j].size
        s = S[j]
        out[j] = s[-1, -1] - 2.0 * v @ s[idx, -1] + v @ s[np.ix_(idx, idx)] @ v
    return np.maximum(out, 0.0)


def joint_profile(S: np.ndarray, grams: "FrictionGrams", choice: np.ndarray, j: int) -> np.ndarray:
    """(M,) total weighted RSS of Gram S with joint j's Stribeck column at each grid velocity and
    the other joints' at ``choice``: the fit without joint j's column, x0, and the reduction
    (r_m - a_m^T x0)^2 / (d_m - a_m^T A0^+ a_m) that adding column m brings (one factorization
    for all M candidates; a_m has entries in the base columns only, the column acting on joint
    j's rows alone)."""
    b, cols = grams.b, grams.stribeck
    extra = [np.zeros(0, dtype=np.int64) if i == j else np.array([cols[choice[i]]]) for i in range(grams.n)]
    a0, rhs0, c = _normal(S, b, extra)
    inverse = spectrum(a0).pseudo_inverse()
    x0 = inverse @ rhs0
    rss0 = c - 2.0 * x0 @ rhs0 + x0 @ a0 @ x0
    cross = S[j][:b][:, cols]  # (b, M)
    numerator = (S[j][cols, -1] - cross.T @ x0[:b]) ** 2
    denominator = np.diag(S[j])[cols] - np.einsum("am,ab,bm->m", cross, inverse[:b, :b], cross)
    useful = denominator > 1e-12 * np.maximum(np.diag(S[j])[cols], 1e-300)
    return rss0 - np.where(useful, numerator / np.where(useful, denominator, 1.0), 0.0)


def choose_velocities(S: np.ndarray, grams: "FrictionGrams", sweeps: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """(grid index per joint (n,), profile RSS (n, M)) of the Stribeck velocities minimizing the
    weighted RSS of Gram S (n, Q, Q): coordinate descent over the joints on the grid (step 3)."""
    choice = np.full(grams.n, grams.m // 2)
    profile = np.zeros((grams.n, grams.m))
    for _ in range(sweeps):
        changed = False
        for j in range(grams.n):  # loop over joints: one factorization each
            profile[j] = joint_profile(S, grams, choice, j)
            best = int(np.argmin(profile[j]))
            changed |= best != choice[j]
            choice[j] = best
        if not changed:
            break
    return choice, profile


def refined_velocity(grid: np.ndarray, choice: np.ndarray, profile: np.ndarray) -> np.ndarray:
    """(n,) v_s: the parabola through the profile RSS at the best grid point and its neighbours
    in log v (the grid point itself on the grid's edge or when the profile is flat)."""
    out = grid[choice].copy()
    z = np.log(grid)
    for j, m in enumerate(choice):
        if 0 < m < grid.size - 1:
            r0, r1, r2 = profile[j, m - 1:m + 2]
            curvature = r0 - 2.0 * r1 + r2
            if curvature > 0:
                h = z[m + 1] - z[m]
                out[j] = math.exp(z[m] + 0.5 * h * (r0 - r2) / curvature)
    return out


def _extra(grams: FrictionGrams, model: str, choice: np.ndarray | None = None) -> list[np.ndarray]:
    if model == "coulomb-viscous":
        return [np.zeros(0, dtype=np.int64)] * grams.n
    if model == "polynomial":
        return [grams.polynomial] * grams.n
    return [np.array([grams.stribeck[c]]) for c in choice]


def held_out(grams: FrictionGrams, weights: np.ndarray, models: tuple = MODELS) -> dict:
    """Per model the held-out weighted RSS (folds, n) (step 4), each fold by the fit on the others
    (the load-dependent model's: ``load_friction.held_out_fixed_points``)."""
    S = grams.S * weights[None, :, None, None]
    total = S.sum(axis=0)
    out = {}
    for model in models:
        rss = np.zeros((grams.folds, grams.n))
        for k in range(grams.folds):
            train = total - S[k]
            choice = choose_velocities(train, grams)[0] if model == "stribeck" else None
            extra = _extra(grams, model, choice)
            rss[k] = _rss(S[k], grams.b, extra, _fit(train, grams.b, extra))
        out[model] = rss
    return out


def chosen_model(held: dict, allowed: tuple) -> str:
    """The lowest held-out score among ``allowed``, then the simplest whose score the best does
    not beat by more than a tie or by less than ``MIN_GAIN`` (step 5)."""
    scores = {m: float(held[m].sum()) for m in allowed}
    best = min(scores, key=scores.get)
    for model in MODELS:
        if model in allowed and (model == best or _tied(held[model], held[best])
                                 or scores[best] > (1.0 - MIN_GAIN) * scores[model]):
            return model
    return best


def _weighted_grams(robot, readies, linear: ModelOptions, base, prep: Preprocessing, grid: np.ndarray, folds: int):
    """(blocks, Grams, rows per joint (n,), weights (n,), sigma^2 (n,), beta (b,)) of step 2 and
    step 3's weights: the Coulomb-viscous fit, weighted by each joint's residual variance and
    reweighted three times (Gautier's weights, iterated: a joint with small torques is fitted
    badly unweighted)."""
    blocks = RegressorBlocks(robot, readies, linear, base, prep, folds)
    grams = accumulate(blocks, grid, folds)
    total = grams.S.sum(axis=0)
    plain = _extra(grams, "coulomb-viscous")
    rows = np.maximum(grams.rows.sum(axis=0), 1)
    weights = np.ones(grams.n)
    for _ in range(3):
        beta = _fit(total * weights[:, None, None], grams.b, plain)
        sigma2 = np.maximum(_rss(total, grams.b, plain, beta) / rows, 1e-300)
        weights = 1.0 / sigma2
    return blocks, grams, rows, weights, sigma2, beta


REFUSAL_STD = 3.0  # Fs - Fc this many standard deviations from 0 (S5)


def static_excess(S: np.ndarray, grams: FrictionGrams, choice: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """((n,) Fs - Fc of each joint, (n,) its standard deviation) of the Stribeck fit on the
    weighted Gram S (n, Q, Q) at the grid velocities ``choice``: the coefficients of the columns
    (S2) and their white-noise std sqrt(s^2 (A^+)_kk) (s^2 the fit's RSS per degree of freedom);
    NaN for a joint whose velocity is on the grid's edge."""
    extra = _extra(grams, "stribeck", choice)
    a, rhs, c = _normal(S, grams.b, extra)
    inverse = spectrum(a).pseudo_inverse()
    x = inverse @ rhs
    s2 = max(c - 2.0 * x @ rhs + x @ a @ x, 0.0) / max(rows - x.size, 1)
    excess, std = x[grams.b:], np.sqrt(np.maximum(s2 * np.diag(inverse)[grams.b:], 0.0))
    inside = (choice > 0) & (choice < grams.m - 1)  # on the grid's edge: no curve, Fs - Fc undetermined
    return np.where(inside, excess, np.nan), np.where(inside, std, np.nan)


def stribeck_refusal(excess: np.ndarray, std: np.ndarray) -> str | None:
    """Why a Stribeck fit is not Stribeck friction (S5), or None. Stribeck friction breaks away
    at a static level above the sliding one, Fs >= Fc (Armstrong-Helouvry et al. 1994, sec. 2.1:
    the static friction exceeds the Coulomb level; Olsson et al. 1998, eq. 4). A fit whose
    Fs - Fc is negative beyond ``REFUSAL_STD`` standard deviations on some joint, or positive
    beyond them on none, describes friction that falls towards zero velocity: what a log shows
    where the joints stick at reversals or the velocity and acceleration estimates smear the
    friction flip (``data.reversals``), not a Stribeck curve."""
    low = np.flatnonzero(excess < -REFUSAL_STD * std)
    if low.size:
        joints = ", ".join(f"{j + 1} ({excess[j]:.3g} +- {std[j]:.2g})" for j in low)
        return (f"static friction below the Coulomb level (Fs - Fc < -{REFUSAL_STD:g} std) on joint(s) {joints}: "
                "friction falling towards zero velocity is not a Stribeck curve")
    if not np.any(excess > REFUSAL_STD * std):
        return f"Fs - Fc within {REFUSAL_STD:g} std of 0 on every joint: no static friction above the Coulomb level"
    return None


def select_friction(robot, paths, options: ModelOptions, prep: Preprocessing, mapping=None, nan: str = "drop",
                    folds: int = FOLDS, allowed: tuple = MODELS,
                    models: tuple = MODELS) -> tuple[ModelOptions, dict, list[str], Preprocessing]:
    """(options with the chosen friction model (and its Stribeck velocities or load parameters),
    result.json "friction_selection", notes) for the log file(s) ``paths`` prepared with ``prep``;
    ``options`` give the other terms (rotor inertia, offset, sign). ``allowed``: one model
    (("stribeck",), ("load-dependent",)) to fit it whatever the scores, ``MODELS`` for
    ``--friction auto`` (module docstring); ``models``: those scored."""
    from dynid.data.columns import ColumnMapping
    from dynid.identify.load_friction import TOLERANCE as LOAD_TOLERANCE
    from dynid.identify.load_friction import (
        fit_load_torque, held_out_fixed_points, inertial_base_columns, load_options,
    )
    from dynid.identify.stribeck_uncertainty import velocity_std as stribeck_velocity_std

    if robot.is_coupled:
        raise DataError(f"robot '{robot.name}' has a coupled transmission: Stribeck and load-dependent friction and "
                        "--friction auto are not yet available per coupled motor; give --friction coulomb-viscous "
                        "or polynomial")
    if folds < 2:
        raise DataError(f"--cv-folds {folds}: the friction model is chosen by cross-validation, at least 2 folds")
    linear = replace(options, friction="coulomb-viscous", stribeck_velocity=(), load_parameters=())
    base = base_parameters(robot, linear)
    readies = prepared_sources(robot, list(paths), linear, mapping or ColumnMapping(), prep, nan)
    grid = velocity_grid()
    with single_blas_thread():
        blocks, grams, rows, weights, sigma2, beta = _weighted_grams(robot, readies, linear, base, prep, grid, folds)
        # step 2: the rows where the log smears the friction flip at a reversal are left out (V3)
        fs = prepared_rate(readies[0]) * prep.decimate  # the log's rate before decimation
        spans = with_reversals(prep, fs, np.ones(robot.n, dtype=bool))
        smear = reversal_smear(robot, readies, linear, base, prep, spans, beta, np.sqrt(sigma2))
        if smear.joints.any():
            prep = with_reversals(prep, fs, smear.joints)
            blocks, grams, rows, weights, sigma2, beta = _weighted_grams(robot, readies, linear, base, prep, grid,
                                                                         folds)
        total = grams.S.sum(axis=0)
        plain = _extra(grams, "coulomb-viscous")
        load = None
        if "load-dependent" in models:  # identify.load_friction (L2)
            inertial = inertial_base_columns(robot, linear, base)
            passes = lambda: ((yb, sign, tau, keep) for yb, _, sign, tau, keep, _ in blocks)  # noqa: E731
            load_beta, fl, load = fit_load_torque(passes, robot.n, inertial, _fit(total * weights[:, None, None],
                                                                                 grams.b, plain), weights)
            load["Fl"] = fl.tolist()
        held = held_out(grams, weights, tuple(m for m in models if m != "load-dependent"))
        if load is not None:  # each fold by the fixed point of the others (identify.load_friction)
            held["load-dependent"] = held_out_fixed_points(blocks, robot.n, folds, inertial, load_beta, weights)
        choice, profile = choose_velocities(total * weights[:, None, None], grams)
        excess, excess_std = static_excess(total * weights[:, None, None], grams, choice, int(rows.sum()))
        refused = {}  # the fits that are not the model they name: auto does not choose them
        if "stribeck" in models and (reason := stribeck_refusal(excess, excess_std)):
            refused["stribeck"] = reason
        if load is not None and load["change"] >= LOAD_TOLERANCE:
            refused["load-dependent"] = (f"its load torque's fixed point did not converge (still moved by "
                                         f"{load['change']:.2g} of the RMS torque after {load['iterations']} "
                                         "iterations): the fit is not the model (L1) it would report")
        model = chosen_model(held, tuple(m for m in allowed if not (m in refused and len(allowed) > 1)))
        velocity = refined_velocity(grid, choice, profile)
        inside = (choice > 0) & (choice < grid.size - 1)
        velocity_std = stribeck_velocity_std(blocks, grams.b, velocity, weights, inside) if model == "stribeck" \
            else None
    notes = []
    edge = [str(j + 1) for j, c in enumerate(choice) if c in (0, grid.size - 1)]
    if model == "stribeck" and edge:
        notes.append(f"Stribeck velocity of joint(s) {', '.join(edge)} on the edge of the searched range "
                     f"[{V_LOW:g}, {V_HIGH:g}] rad/s: the log does not show a Stribeck curve there")
    if model == "stribeck":
        out = replace(linear, friction="stribeck", stribeck_velocity=tuple(float(v) for v in velocity))
    elif model == "load-dependent":
        out = load_options(robot, linear, base, load_beta)
        if load["change"] >= LOAD_TOLERANCE:
            notes.append(f"load-dependent friction: the load torque still moved by {load['change']:.2g} of the RMS "
                         f"torque after {load['iterations']} fixed-point iterations (not converged)")
    else:
        out = replace(linear, friction=model)
    scores = {m: float(held[m].sum() / rows.sum()) for m in models}
    other = chosen_model(held, tuple(m for m in models if m not in refused))
    first = chosen_model(held, tuple(allowed))
    if first in refused:
        notes.append(f"--friction {'auto' if len(allowed) > 1 else first}: the {first} fit is "
                     + ("refused" if len(allowed) > 1 else "kept as asked, but it is not the model it names")
                     + f": {refused[first]}")
    if len(allowed) == 1 and other != model:
        notes.append(f"--friction {model}: --friction auto would take the {other} model (held-out scores "
                     + ", ".join(f"{m} {v:.4g}" for m, v in scores.items()) + ", lower is better; a richer model "
                     f"is kept only when it is lower by more than a tie and {100 * MIN_GAIN:g} %)")
    measured = np.maximum(total[:, -1, -1], 1e-300)
    selection = {
        "method": "blocked cross-validation", "folds": folds, "chosen": out.friction,
        "criterion": "held-out residual sum of squares over each joint's residual variance in the Coulomb-viscous "
                     "fit of the whole log, per row",
        "allowed": list(allowed), "scores": scores,
        "relative_error": {m: np.sqrt(held[m].sum(axis=0) / weights / measured).tolist() for m in models},
        "stribeck_velocity": velocity.tolist(), "velocity_grid": [float(grid[0]), float(grid[-1]), grid.size],
        "noise_std": np.sqrt(sigma2).tolist(), "samples": int(rows.max())}
    if velocity_std is not None:
        selection["stribeck_velocity_std"] = velocity_std
    selection["static_excess"], selection["static_excess_std"] = json_floats(excess), json_floats(excess_std)
    if refused:
        selection["refused"] = refused
    selection["reversal_rows"] = {**smear.to_dict(), "span_samples": list(spans.reversal_span),
                                  "slow_velocity": list(spans.reversal_velocity)}
    if load is not None:
        selection["load_fit"] = load
    return out, selection, notes, prep
