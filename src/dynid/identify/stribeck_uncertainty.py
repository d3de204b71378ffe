"""Standard deviation of the Stribeck velocities v_s (``identify.stribeck``, (S1)).

The friction model (S1) is nonlinear in v_s only. Linearized at the fit (Gauss-Newton: the
covariance of a nonlinear least-squares estimate is that of the linear problem in its
Jacobian, Seber & Wild, "Nonlinear Regression", 1989, ch. 2), the Jacobian of joint j's torque
with respect to the parameters x = [beta (b); a (n); v_s (n)] (a_j = Fs_j - Fc_j) is

    J_j = [Y_b,j  |  g_j  |  a_j dg_j/dv_j],   g_j = exp(-(dq_j / v_j)^2) sign(dq_j),
    dg_j/dv_j = g_j 2 dq_j^2 / v_j^3                                                      (S4)

and cov(x) = s^2 (sum_j w_j J_j^T J_j)^-1, with w_j = 1 / sigma_j^2 (the selection's weights)
and s^2 = sum_j w_j RSS_j / (rows - parameters). So v_s carries the correlation with its own
static excess a_j and with the rigid-body parameters, which a profile of v_s alone would not.
That is the white-noise figure; ``identify`` reports the sandwich (R1) of the same Jacobian with
the residuals' correlation in time (``identify.residual_correlation``, ``joint_covariance``).

A joint whose v_s lies on the searched grid's edge, or whose Stribeck column the log does not
determine (a_j d g_j / dv_j in the span of the other columns), gets no standard deviation
(None): there the data say nothing of v_s.

The final fit's std (``joint_covariance``, S6) come from the same Jacobian with the final fit's
weights: the beta block of s^2 (J^T W J)^-1, so Fc, Fs, Fv and the rigid-body parameters carry
the uncertainty of v_s, which the linear fit at the chosen v_s leaves out.
"""

from __future__ import annotations

import numpy as np

from dynid.identify.normal_equations import spectrum
from dynid.identify.physical import pseudo_solve


def stribeck_columns(dq: np.ndarray, sign: np.ndarray, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(g, dg/dv) (N, n) of (S4) at velocities v (n,)."""
    g = np.exp(-np.square(dq / velocity)) * sign
    return g, g * 2.0 * np.square(dq) / velocity**3


def velocity_std(blocks, b: int, velocity: np.ndarray, weights: np.ndarray, determined: np.ndarray) -> list:
    """(n,) standard deviation of each v_s (None where not determined) by (S4), from one pass over
    ``blocks`` (``stribeck.RegressorBlocks``: yb (N, n, b), dq, sign, tau, keep, fold);
    ``determined`` (n,): False for the joints whose v_s is on the grid's edge."""
    n = velocity.size
    gram = np.zeros((n, b + 3, b + 3))  # per joint [Y_b | g | dg/dv | tau]
    rows = 0
    for yb, dq, sign, tau, keep, _ in blocks:
        g, dg = stribeck_columns(dq, sign, velocity)
        z = np.concatenate([yb, g[..., None], dg[..., None], tau[..., None]], axis=2) * keep[..., None]
        gram += np.einsum("tja,tjb->jab", z, z, optimize=True)
        rows += int(keep.sum())
    S = gram * weights[:, None, None]
    # the linear fit at v: x = [beta; a]
    p = b + n
    a, rhs = np.zeros((p, p)), np.zeros(p)
    a[:b, :b], rhs[:b] = S[:, :b, :b].sum(axis=0), S[:, :b, -1].sum(axis=0)
    for j in range(n):  # loop over joints: its g column acts on its rows alone
        a[:b, b + j] = a[b + j, :b] = S[j, :b, b]
        a[b + j, b + j], rhs[b + j] = S[j, b, b], S[j, b, -1]
    x = pseudo_solve(a, rhs)
    beta, excess = x[:b], x[b:]
    rss = 0.0
    for j in range(n):
        v = np.concatenate([beta, [excess[j]]])
        idx = np.r_[np.arange(b), b]
        rss += S[j, -1, -1] - 2.0 * v @ S[j, idx, -1] + v @ S[j][np.ix_(idx, idx)] @ v
    s2 = max(rss, 0.0) / max(rows - (b + 2 * n), 1)
    # J^T W J of (S4) over x = [beta; a; v]
    q = b + 2 * n
    m = np.zeros((q, q))
    m[:b, :b] = S[:, :b, :b].sum(axis=0)
    for j in range(n):
        cols = np.array([b + j, b + n + j])
        scale = np.array([1.0, excess[j]])
        cross = S[j, :b, b:b + 2] * scale  # (b, 2)
        m[:b, cols], m[cols, :b] = cross, cross.T
        m[np.ix_(cols, cols)] = S[j, b:b + 2, b:b + 2] * np.outer(scale, scale)
    diag = np.diag(m)
    d = np.where(diag > 0, 1.0 / np.sqrt(np.where(diag > 0, diag, 1.0)), 0.0)
    lam, vec = np.linalg.eigh(m * d[:, None] * d[None, :])
    keep = lam > 1e-12 * lam[-1]
    out = []
    for j in range(n):
        k = b + n + j
        hidden = np.sum(vec[k, ~keep] ** 2)  # share of v_j in directions the data leave free
        if not determined[j] or diag[k] <= 0 or hidden > 1e-6:
            out.append(None)
            continue
        var = s2 * d[k] ** 2 * np.sum(vec[k, keep] ** 2 / lam[keep])
        out.append(float(np.sqrt(var)))
    return out


def used_joints(excess: np.ndarray, determined: np.ndarray) -> np.ndarray:
    """The joints whose v_s joins the joint estimate (S6): determined, with a non-zero excess Fs - Fc."""
    return np.flatnonzero(np.asarray(determined, dtype=bool) & np.isfinite(excess) & (np.asarray(excess) != 0))


def velocity_column(dq: np.ndarray, velocity: np.ndarray, excess: np.ndarray) -> np.ndarray:
    """(N, n) h_j = a_j dg_j/dv_j (S4): the change of joint j's torque with its Stribeck velocity."""
    _, dg = stribeck_columns(dq, np.sign(dq), velocity)
    return dg * excess


def velocity_columns(dq: np.ndarray, velocity: np.ndarray, excess: np.ndarray, used: np.ndarray) -> np.ndarray:
    """(N, n, k) the Jacobian columns h_j (``velocity_column``) of the k ``used`` velocities, each in
    its own joint's rows (zero elsewhere): what the joint estimate adds to the rows Y_b."""
    out = np.zeros(dq.shape + (used.size,))
    out[:, used, np.arange(used.size)] = velocity_column(dq, velocity, np.asarray(excess))[:, used]
    return out


def joint_covariance(est, ne, parts, velocity: np.ndarray, excess: np.ndarray, determined: np.ndarray,
                     measured=None) -> np.ndarray | None:
    """Give ``est`` (ols or wls, fitted to ``ne`` with the Stribeck columns at ``velocity``) the
    covariance of the joint estimate of its parameters and the Stribeck velocities (S6): the
    Gauss-Newton covariance s^2 (J^T W J)^-1 with J = [Y_b | h_j], h_j = a_j dg_j/dv_j (S4) the
    change of joint j's torque with its v_s (a_j = Fs_j - Fc_j, ``excess``), the fit's weights W
    (ols: 1, wls: 1 / sigma_j^2) and s^2 = sum_j w_j RSS_j / (rows - parameters - velocities).
    By the block inverse its beta block is s^2 N^-1 + K cov(v) K^T, K = N^-1 X (X = Y_b^T W h):
    the linear fit's covariance plus the share of the uncertainty of v_s, which the estimate at
    a fixed v_s leaves out (Fs2 of the MuJoCo Stribeck log of tests/test_friction_mujoco.py: 0.013,
    0.009 at the fixed v_s).
    ``parts``: the fit's rows, an iterable of (Y_b (N, n, b), dq (N, n), keep (N, n) or None);
    ``determined`` (n,): False for the joints whose v_s the log does not determine (grid's edge),
    whose velocity is left at its value (their Fs, Fc keep the std at that v_s). ``measured``
    (``residual_correlation.ResidualCorrelation`` of the rows [Y_b of the free parameters |
    ``velocity_columns``]): the covariance is the sandwich (R1) of J with the residuals'
    correlation in time, M^-1 (sum_j w_j^2 L_j) M^-1, M = J^T W J, instead of s^2 M^-1. Returns
    the (b,) std of s^2 M^-1 (the white-noise figure), or None (std left as fitted) for an
    estimator whose weights are not per joint (irls, pc) or with no joint to add."""
    from dynid.identify.estimators import joint_noise_variances, sandwich

    if est.name not in ("ols", "wls"):
        return None
    used = used_joints(excess, determined)
    if used.size == 0:
        return None
    n, b = ne.n, ne.A.shape[1]
    cross, dd = np.zeros((n, b)), np.zeros(n)
    for yb, dq, keep in parts:
        h = velocity_column(dq, velocity, excess)
        if keep is not None:
            h = np.where(keep, h, 0.0)
        cross += np.einsum("tja,tj->ja", yb, h, optimize=True)
        dd += np.sum(h * h, axis=0)
    w = np.ones(n) if est.name == "ols" else np.asarray(est.weights_, dtype=float)
    free = np.flatnonzero(np.isfinite(est.std_))
    f, k = free.size, used.size
    m = np.zeros((f + k, f + k))
    m[:f, :f] = np.einsum("j,jab->ab", w, ne.A)[np.ix_(free, free)]
    m[:f, f:] = (w[used, None] * cross[used][:, free]).T
    m[f:, :f] = m[:f, f:].T
    m[f:, f:] = np.diag(w[used] * dd[used])
    s2 = float(np.sum(w * ne.residual_ss(est.coef_))) / max(int(ne.rows.sum()) - f - k, 1)
    inverse = spectrum(m).pseudo_inverse()
    white = est.with_free_covariance((s2 * inverse)[:f, :f]).std_.copy()
    if measured is not None:  # the extended rows' normal matrices, joint by joint: M = sum_j w_j A_j
        normal = np.zeros((n, f + k, f + k))
        normal[:, :f, :f] = ne.A[:, free][:, :, free]
        normal[used, :f, f + np.arange(k)] = cross[used][:, free]
        normal[used, f + np.arange(k), :f] = cross[used][:, free]
        normal[used, f + np.arange(k), f + np.arange(k)] = dd[used]
        scores = measured.carried(joint_noise_variances(ne, est.coef_), normal)
        est.with_free_covariance(sandwich(inverse, w, scores)[:f, :f])
    return white
