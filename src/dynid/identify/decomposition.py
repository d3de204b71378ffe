"""The thesis' Appendix D: which parameters each joint's torque can identify (Tables D.1, D.2).

Table D.1 (QR, thesis 3.2.1, eqs. 3.31-3.33, D.1): for joint j, the rows of joint j's torque in
the regressor K (eq. 3.30), here on random states, with the 10 n rigid-body columns in the
standard order (eq. 3.14) each scaled to unit norm (a column that never acts on joint j stays
zero); QR without pivoting, K_j = Q R. |r_ii| is then the distance of column i from the span
of the columns before it, relative to its own length: ~0 means parameter i adds nothing to
joint j's torque that the earlier ones do not (the thesis: "the small value is considered as
a zero value", below 1/10000; it prints the unscaled r_ii of its measured data, so its
magnitudes are not comparable, its zeros are).

Table D.2 (SVD, thesis 3.2.2, eqs. 3.34-3.36, D.2-D.4): for link j, joint j's rows restricted to
link j's parameters that D.1 keeps for joint j, plus joint j's friction columns and its rotor
inertia ("the friction elements should be introduced"), unit-length columns; K = U [S; 0] V^T,
cond(S) = s_1 / s_n. A (near) zero singular value and its column of V name the parameters that
act alike: on the er3a's link 2, Izz2 and Ia2 (both multiply ddq2 in joint 2's torque; V
entries -+0.7071, the thesis' example).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from dynid.identify.base import random_states
from dynid.identify.model import ModelOptions, identification_regressor, joint_column_indices, parameter_names

ZERO = 1e-4  # the thesis' threshold of a zero r_ii (Appendix D.1: "less than 1/10000")


def _unit_columns(w: np.ndarray) -> np.ndarray:
    """w (N, c) with every column scaled to unit length; columns of rounding noise set to zero."""
    norms = np.linalg.norm(w, axis=0)
    live = norms > 1e-10 * max(float(norms.max(initial=0.0)), 1e-300)
    return np.where(live, w / np.where(live, norms, 1.0), 0.0)


def _joint_rows(robot, options: ModelOptions, seed: int, samples: int | None) -> np.ndarray:
    """(N, n, p) identification regressor on random states."""
    samples = samples or max(400, 40 * robot.n)
    q, dq, ddq = random_states(robot, samples, seed)
    return identification_regressor(robot, q, dq, ddq, options)


def qr_diagonal(robot, options: ModelOptions = ModelOptions(), seed: int = 0, samples: int | None = None) -> dict:
    """Table D.1: {"names" (10 n_bodies,), "r" (10 n_bodies, n) r_ii of each joint's unit-column
    rows (module docstring), "zero" (same shape) |r_ii| <= ZERO}."""
    y = _joint_rows(robot, options, seed, samples)
    rigid = 10 * robot.n_bodies
    r = np.zeros((rigid, robot.n))
    for j in range(robot.n):  # loop over joints: one QR of each joint's rows
        r[:, j] = np.diag(scipy.linalg.qr(_unit_columns(y[:, j, :rigid]), mode="r")[0])
    return {"names": parameter_names(robot, options)[:rigid], "r": r, "zero": np.abs(r) <= ZERO}


def link_svd(robot, link: int, options: ModelOptions = ModelOptions(), seed: int = 0,
             samples: int | None = None) -> dict:
    """Table D.2 of ``link`` (1-based; its joint's rows): {"names" (c,), "s" (c,) singular values
    in decreasing order, "V" (c, c) right singular vectors (column i belongs to s_i),
    "condition_number" s_1 / s_c (eq. D.4)}."""
    j = link - 1
    if not 0 <= j < robot.n:
        from dynid.errors import DataError
        raise DataError(f"--svd-link {link}: expected a link (joint) number 1..{robot.n}")
    y = _joint_rows(robot, options, seed, samples)
    names = parameter_names(robot, options)
    table = qr_diagonal(robot, options, seed, samples)
    kept = [10 * j + k for k in range(10) if not table["zero"][10 * j + k, j]]
    own = [int(c) for c in joint_column_indices(robot, options)[j]
           if not names[c].startswith("off")]  # friction, rotor inertia
    cols = kept + own
    _, s, vt = np.linalg.svd(_unit_columns(y[:, j, cols]), full_matrices=False)
    return {"link": link, "names": [names[c] for c in cols], "s": s, "V": vt.T,
            "condition_number": float(s[0] / s[-1]) if s[-1] > 0 else float("inf")}
