"""Per-body identification of mass and principal central moments (seed 000, eqs. 40-64;
seed 001, eqs. 17-28).

For body B_i and sample t_j:
  Newton (eq. 42):  (r_ddot_i - g) m_i = F^R_i = -sum_k S^e_ik F^e_k, one scalar equation per
                    world direction, so m_i is identified separately from e1, e2, e3 of frame 0.
  Euler (eq. 46):   ^idS_i^(i) (J11, J22, J33)^T = M_i^(i), with ^idS built from the Cardan
                    rates (eq. 32 with J = E_kk) or the quaternion rates (seed 001 eqs. 18-19).
Stacking samples gives ^idK_i ^idX_i = ^idL_i (eq. 54), solved by least squares (eq. 56); the
bodies together form the block-diagonal system eq. 61-64.

A parameter the data cannot determine (no acceleration along a direction; no rotation about
an axis; only a combination of moments excited) is reported as None with the reason; so is a
mass or principal moment identified negative (physically impossible), with a warning.

Body data of another robot cannot be identified with this robot's body-joint vectors: before
anything else, every joint point of the data must lie where the robot's geometry puts it
(O_k = r_i + S^e_ik C^e_ik for each body i incident to joint k, eqs. 11 and 18), within
``GEOMETRY_TOL`` (2 cm plus 10 % of the vector); otherwise the data are refused.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from dynid.errors import DataError, DynidWarning
from dynid.multibody.bodies import body_model
from dynid.multibody.bodydata import BodyData
from dynid.multibody.graph import graph, resultant_forces, resultant_moments, weighted_vectors_body
from dynid.multibody.quaternion import Quaternion, r_star

# a regressor column below this fraction of its reference carries no information
EXCITATION_TOL = 1e-4
# singular values of the column-scaled Euler regressor below this fraction are null directions
RANK_TOL = 1e-5
AXES = ("x", "y", "z")
GEOMETRY_TOL = (0.02, 0.1)  # joint point mismatch refused beyond 2 cm + 10 % of |C^e_ik|


@dataclass
class BodyResult:
    body: int
    name: str
    mass: list  # [m from e1^(0), e2^(0), e3^(0)] or None
    moments: list  # [J11, J22, J33] or None
    notes: list = field(default_factory=list)

    def as_json(self) -> dict:
        out = {"body": self.body, "name": self.name}
        out.update({f"mass_{a}": self.mass[d] for d, a in enumerate(AXES)})
        out.update({f"J{k}{k}": self.moments[k - 1] for k in (1, 2, 3)})
        out["notes"] = list(self.notes)
        return out


def euler_regressor(form, quat, w, dw) -> tuple[np.ndarray, np.ndarray]:
    """^idS^(i) (N, n, 3, 3) and A^(0i) (N, n, 3, 3) from sampled quaternion, omega, omega_dot.

    Cardan (seed 000 eq. 32 with J = E_kk): column k = E_kk (D theta_ddot + D_dot theta_dot)
    + (D theta_dot)~ E_kk D theta_dot.  Quaternion (seed 001 eqs. 7, 18): column k =
    2 E_kk R* Lambda_ddot + 4 R* R*_dot^T E_kk R* Lambda_dot.
    """
    rotation = Quaternion.rotation(quat)
    theta = form.from_rotation(rotation)
    form.check(theta, "body data")
    rotation = form.rotation(theta)  # eq. 29 (Cardan) or E R*^T (quaternion)
    w_body = np.einsum("...ji,...j->...i", rotation, w)
    dw_body = np.einsum("...ji,...j->...i", rotation, dw)
    dtheta = form.rates(theta, w_body)
    ddtheta = form.second_rates(theta, dtheta, dw_body)
    eye = np.eye(3)
    if form.size == 3:
        D = form.angular_map(theta)
        omega = np.einsum("...ij,...j->...i", D, dtheta)  # eq. 33
        domega = np.einsum("...ij,...j->...i", D, ddtheta) + form.map_rate_times_rate(theta, dtheta)
        cols = [eye[k] * domega[..., k, None] + np.cross(omega, eye[k] * omega[..., k, None]) for k in range(3)]
    else:
        R, Rd = r_star(theta), r_star(dtheta)
        r_l = np.einsum("...ij,...j->...i", R, dtheta)
        r_ll = np.einsum("...ij,...j->...i", R, ddtheta)
        gyro = 4.0 * R @ np.swapaxes(Rd, -1, -2)
        cols = [2.0 * eye[k] * r_ll[..., k, None] + np.einsum("...ij,...j->...i", gyro, eye[k] * r_l[..., k, None])
                for k in range(3)]
    return np.stack(cols, -1), rotation


def _rms(x, axis=0):
    return np.sqrt(np.mean(np.square(x), axis=axis))


def last_digit_unit(values: np.ndarray, digits: int) -> np.ndarray:
    """Unit of the last kept digit of each value rounded to ``digits`` significant digits."""
    a = np.abs(np.asarray(values, dtype=float))
    with np.errstate(divide="ignore"):
        exponent = np.floor(np.log10(np.where(a > 0, a, 1.0)))
    return np.where(a > 0, 10.0 ** (exponent - (digits - 1)), 0.0)


def rounding_std(graph_, rotation, c_world, data: BodyData, digits: int):
    """Standard deviations of the right-hand sides of eq. 42 (N, n, 3) and eq. 46 (N, n, 3)
    caused by rounding the joint forces and moments to ``digits`` significant digits
    (uniform error of one last-digit unit: variance u^2 / 12), propagated linearly."""
    uf2 = last_digit_unit(data.force, digits) ** 2 / 12.0  # (N, n_e, 3)
    um2 = last_digit_unit(data.moment, digits) ** 2 / 12.0
    s2 = graph_.S_e ** 2
    var_f = np.einsum("ik,nkc->nic", s2, uf2)  # eq. 44 is a signed sum of forces
    # eq. 46 right-hand side, axis a of body i: -e_a^T A^T sum_k (C_ik x F_k + S_ik M_k)
    b = np.swapaxes(rotation, -1, -2)  # rows: body axes e_a in frame 0, (N, n, a, c)
    var_m = np.einsum("ik,nkc,niac->nia", s2, um2, b ** 2)
    lever = np.cross(b[:, :, :, None, :], c_world[:, :, None, :, :])  # (N, n, a, k, c)
    var_m = var_m + np.einsum("niakc,nkc->nia", lever ** 2, uf2)
    floor_f = 1e-12 * max(float(np.max(var_f)), 1e-300)
    floor_m = 1e-12 * max(float(np.max(var_m)), 1e-300)
    return np.sqrt(np.maximum(var_f, floor_f)), np.sqrt(np.maximum(var_m, floor_m))


def identify(robot, data: BodyData, form, gravity=None, rounding_digits: int | None = None) -> list[BodyResult]:
    """Identify every body's mass (per world direction) and principal central moments.

    rounding_digits=None is the seeds' ordinary least squares (eq. 56). With a number (7 for
    ADAMS exports) every equation is divided by the standard deviation that rounding the
    joint forces and moments to that many significant digits gives it (weighted least
    squares: large forces and moments carry larger absolute rounding errors).
    """
    model = body_model(robot)
    if data.n != model.n:
        raise DataError(f"body data has {data.n} bodies but robot '{robot.name}' has {model.n}")
    g = robot.gravity if gravity is None else np.asarray(gravity, dtype=float)
    gr = graph(model)
    f_r = resultant_forces(gr, data.force)  # eq. 44: F^R_i = -sum S^e_ik F^e_k
    S, rotation = euler_regressor(form, data.quat, data.w, data.dw)
    c_world = weighted_vectors_body(gr, model, rotation, data.r, data.joint_point)  # eq. 18
    check_geometry(robot, gr, c_world, data)
    m_w = resultant_moments(gr, c_world, data.force, data.moment)  # eq. 25
    m_body = np.einsum("...ji,...j->...i", rotation, m_w)  # M^(i)
    lin = data.a - g  # eq. 43: diag(x_ddot, y_ddot, z_ddot + g)
    lin_ref = max(float(np.linalg.norm(g)), float(np.max(_rms(lin))))
    excitation = _rms(lin)  # unweighted, for the determinability test
    col_norm = np.sqrt(np.sum(S ** 2, axis=(0, 2)))  # (n, 3), unweighted: excitation test
    ang_ref = float(np.max(col_norm)) if col_norm.size else 0.0
    w_body = np.einsum("...ji,...j->...i", rotation, data.w)
    dw_body = np.einsum("...ji,...j->...i", rotation, data.dw)
    axis_motion = _rms(np.concatenate([w_body, dw_body], 0))  # (n, 3)
    if rounding_digits is not None:
        std_f, std_m = rounding_std(gr, rotation, c_world, data, rounding_digits)
        f_r, lin = f_r / std_f, lin / std_f
        S, m_body = S / std_m[..., None], m_body / std_m
    results, blocks_K, blocks_L, columns = [], [], [], []
    N = len(data.t)
    for i in range(model.n):
        res = BodyResult(i + 1, model.names[i], [None] * 3, [None] * 3)
        # eq. 49-55 for B_i: rows 3N Newton (eq. 42) + 3N Euler (eq. 46); columns m_x, m_y, m_z,
        # J11, J22, J33, keeping only those the data determine, scaled to unit norm
        K = np.zeros((6 * N, 6))
        K[:3 * N, :3] = (lin[:, i, :, None] * np.eye(3)).reshape(3 * N, 3)
        K[3 * N:, 3:] = S[:, i].reshape(3 * N, 3)
        L = np.concatenate([f_r[:, i].reshape(-1), m_body[:, i].reshape(-1)])
        keep = [d for d in range(3) if _mass_determined(res, d, excitation[i, d], lin_ref)]
        keep += [3 + k for k in _moments_determined(res, K[3 * N:, 3:], col_norm[i] > EXCITATION_TOL * ang_ref,
                                                     axis_motion[i])]
        norms = np.linalg.norm(K[:, keep], axis=0)
        blocks_K.append(K[:, keep] / norms)
        blocks_L.append(L)
        columns.append((res, keep, norms))
        results.append(res)
    x = system_least_squares(blocks_K, blocks_L)  # eq. 64
    start = 0
    for res, keep, norms in columns:
        for c, col in enumerate(keep):
            value = float(x[start + c] / norms[c])
            name = f"mass_{AXES[col]}" if col < 3 else f"J{col - 2}{col - 2}"
            if value < 0:  # a negative mass or principal moment cannot be right: not determined
                res.notes.append(f"{name}: identified {value:.6g} < 0, physically impossible (a negative mass or "
                                 "principal moment): not determined; noisy data, or body data of another robot?")
                warnings.warn(DynidWarning(f"{res.name}: {name} identified {value:.6g} < 0 (physically impossible): "
                                           "written as null"), stacklevel=2)
                value = None
            if col < 3:
                res.mass[col] = value
            else:
                res.moments[col - 3] = value
        start += len(keep)
    return results


def check_geometry(robot, gr, c_world: np.ndarray, data: BodyData) -> None:
    """Refuse body data whose joint points are not where the robot's geometry puts them (module
    docstring): O_k = r_i + S^e_ik C^e_ik (world frame) for every body i incident to joint k."""
    for i, k in zip(*np.nonzero(gr.S)):
        predicted = data.r[:, i] + gr.S_e[i, k] * c_world[:, i, k]
        miss = np.linalg.norm(predicted - data.joint_point[:, k], axis=1)
        worst = int(np.argmax(miss))
        limit = GEOMETRY_TOL[0] + GEOMETRY_TOL[1] * float(np.linalg.norm(c_world[worst, i, k]))
        if not miss[worst] <= limit:
            raise DataError(f"body data: joint point O{k + 1} lies {miss[worst]:.3g} m from where robot "
                            f"'{robot.name}' puts it on body {i + 1} (t = {data.t[worst]:.6g} s; at most {limit:.3g} m "
                            "expected): body data of another robot, or bodies numbered differently?")


def _mass_determined(res: BodyResult, d: int, excitation: float, ref: float) -> bool:
    if excitation > EXCITATION_TOL * ref:
        return True
    res.notes.append(
        f"mass_{AXES[d]}: the centre of mass of {res.name} has no acceleration along "
        f"e{d + 1}^(0) (gravity included, rms {excitation:.1e} m/s^2), so eq. 42 "
        "carries no information on the mass in that direction")
    return False


def _moments_determined(res: BodyResult, K, excited, axis_motion) -> list[int]:
    """Indices k of J_kk that the Euler regressor K (3N, 3) determines; notes for the others."""
    moving = axis_motion > EXCITATION_TOL * max(float(np.max(axis_motion)), 1e-300)
    if not np.any(moving):
        how = "does not rotate"
    else:
        how = "rotates about " + " and ".join(f"e{k + 1}" for k in np.flatnonzero(moving)) + " only"
    for k in np.flatnonzero(~excited):
        res.notes.append(
            f"J{k + 1}{k + 1}: {res.name} {how} in the selected samples, so the Euler equations "
            f"(eq. 46) have a zero column for J{k + 1}{k + 1}")
    cols = np.flatnonzero(excited)
    if cols.size == 0:
        return []
    Ks = K[:, cols] / np.linalg.norm(K[:, cols], axis=0)
    _, s, vt = np.linalg.svd(Ks, full_matrices=False)
    null = vt[s < RANK_TOL * s[0]]
    keep = []
    for c, k in enumerate(cols):
        if null.size and np.max(np.abs(null[:, c])) > 1e-3:
            res.notes.append(
                f"J{k + 1}{k + 1}: only a combination with other moments is excited "
                "(rank-deficient Euler regressor), so it is not determined separately")
        else:
            keep.append(int(k))
    return keep


def system_least_squares(blocks_K: list[np.ndarray], blocks_L: list[np.ndarray]) -> np.ndarray:
    """The system problem of eqs. 57-64: block-diagonal ^idK X = ^idL solved at once by least
    squares (eq. 64); blocks (rows_i, cols_i) with full column rank."""
    rows = sum(k.shape[0] for k in blocks_K)
    cols = sum(k.shape[1] for k in blocks_K)
    K = np.zeros((rows, cols))
    r = c = 0
    for k in blocks_K:
        K[r:r + k.shape[0], c:c + k.shape[1]] = k
        r, c = r + k.shape[0], c + k.shape[1]
    if cols == 0:
        return np.zeros(0)
    return np.linalg.lstsq(K, np.concatenate(blocks_L), rcond=None)[0]


def true_values(robot) -> list[dict]:
    """The model's mass and principal central moments per body, for comparison tables."""
    model = body_model(robot)
    return [{"body": i + 1, "name": model.names[i], "mass": float(model.mass[i]),
             "moments": [float(v) for v in model.moments[i]]} for i in range(model.n)]
