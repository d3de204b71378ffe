"""Standard inertial parameters of one link and their physical meaning.

The ten standard parameters, in the thesis' eq. 3.14 order (docs/formats.md section 1):

    theta = [m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]

with ``(mx, my, mz) = m * c`` the first moment of mass and ``I`` the inertia tensor about
the link frame origin, in link frame axes.
"""

from __future__ import annotations

import math

import numpy as np

from dynid.errors import ModelError

PARAMETER_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")


def inertia_matrix(six: np.ndarray) -> np.ndarray:
    """``[Ixx, Ixy, Ixz, Iyy, Iyz, Izz]`` (..., 6) -> symmetric (..., 3, 3) tensor."""
    six = np.asarray(six, dtype=float)
    xx, xy, xz, yy, yz, zz = np.moveaxis(six, -1, 0)
    return np.stack(
        [np.stack([xx, xy, xz], -1), np.stack([xy, yy, yz], -1), np.stack([xz, yz, zz], -1)], -2
    )


def inertia_six(matrix: np.ndarray) -> np.ndarray:
    """Symmetric (..., 3, 3) tensor -> ``[Ixx, Ixy, Ixz, Iyy, Iyz, Izz]`` (..., 6)."""
    m = np.asarray(matrix, dtype=float)
    return np.stack(
        [m[..., 0, 0], m[..., 0, 1], m[..., 0, 2], m[..., 1, 1], m[..., 1, 2], m[..., 2, 2]], -1
    )


def _steiner(mass: float, com: np.ndarray) -> np.ndarray:
    """Parallel-axis term m (c.c 1 - c c^T) moving an inertia from the COM to the origin."""
    return mass * (float(com @ com) * np.eye(3) - np.outer(com, com))


def from_mass_com_inertia(mass: float, com, inertia_about_com) -> np.ndarray:
    """(m [kg], c (3,) [m], I_c (3,3) or 6-list [kg m^2] about the COM) -> theta (10,)."""
    com = np.asarray(com, dtype=float).reshape(3)
    ic = np.asarray(inertia_about_com, dtype=float)
    ic = inertia_matrix(ic) if ic.shape == (6,) else ic.reshape(3, 3)
    io = ic + _steiner(mass, com)
    return np.concatenate([[mass], mass * com, inertia_six(io)])


def to_mass_com_inertia(theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """theta (10,) -> (m, c (3,), I_c (3,3) about the COM). The COM is zero for m == 0."""
    theta = np.asarray(theta, dtype=float)
    mass = float(theta[0])
    com = theta[1:4] / mass if mass != 0.0 else np.zeros(3)
    io = inertia_matrix(theta[4:10])
    return mass, com, io - _steiner(mass, com)


def move_inertial(theta: np.ndarray, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """Express theta (10,) of a body given in frame B in frame A, with B = (rotation, translation) in A."""
    m = theta[0]
    h = theta[1:4]
    io = inertia_matrix(theta[4:10])
    h_a = rotation @ h
    # I_A = R I_B R^T + m(|t|^2 1 - t t^T) + (2 t.h_a 1 - t h_a^T - h_a t^T)  (shift of origin)
    t = translation
    i_a = rotation @ io @ rotation.T
    i_a += m * (t @ t * np.eye(3) - np.outer(t, t))
    i_a += 2 * (t @ h_a) * np.eye(3) - np.outer(t, h_a) - np.outer(h_a, t)
    return np.concatenate([[m], h_a + m * t, [i_a[0, 0], i_a[0, 1], i_a[0, 2], i_a[1, 1], i_a[1, 2], i_a[2, 2]]])


def pseudo_inertia(theta: np.ndarray) -> np.ndarray:
    """4x4 pseudo-inertia J = [[Sigma, h], [h^T, m]], Sigma = tr(I)/2 1 - I (Wensing et al. 2017).

    J is positive semidefinite exactly when theta is realizable by a non-negative mass density.
    """
    theta = np.asarray(theta, dtype=float)
    io = inertia_matrix(theta[4:10])
    sigma = 0.5 * np.trace(io) * np.eye(3) - io
    j = np.zeros((4, 4))
    j[:3, :3] = sigma
    j[:3, 3] = j[3, :3] = theta[1:4]
    j[3, 3] = theta[0]
    return j


def from_pseudo_inertia(j: np.ndarray) -> np.ndarray:
    """The standard parameters (10,) of a 4x4 pseudo-inertia (the inverse of ``pseudo_inertia``:
    m = J_44, h = J_{1:3,4}, I = tr(Sigma) 1 - Sigma)."""
    j = 0.5 * (np.asarray(j, dtype=float) + np.asarray(j, dtype=float).T)
    sigma = j[:3, :3]
    return np.concatenate([[j[3, 3]], j[:3, 3], inertia_six(np.trace(sigma) * np.eye(3) - sigma)])


MAX_VIOLATION = 0.20  # a link's triangle-inequality violation dynid loads (with a warning); beyond: refused


def triangle_violation(theta: np.ndarray) -> float:
    """How far a link is from a physical body: (J3 - J1 - J2) / J3 of its central principal moments
    J1 <= J2 <= J3, 0 when J1 + J2 >= J3 (the triangle inequality; with it J1 >= 0 too). It is
    -2 lambda_min(Sigma_c) / J3, Sigma_c = tr(I_c)/2 1 - I_c the central second moments of mass
    (the pseudo-inertia's Schur complement): 0.02 means the smallest second moment is short of
    zero by 1 % of the largest moment of inertia. inf when J3 <= 0 and the link has inertia or mass
    (nothing can be said relative to it); 0 for a massless link (``consistency_problems`` judges it)."""
    mass, _, ic = to_mass_com_inertia(theta)
    if mass <= 0:
        return 0.0
    j = np.linalg.eigvalsh(0.5 * (ic + ic.T))
    if j[2] <= 0:
        return 0.0 if np.all(j == 0) else math.inf
    return max(0.0, float((j[2] - j[0] - j[1]) / j[2]))


def nearest_physical(theta: np.ndarray) -> np.ndarray:
    """The physical link (10,) nearest to theta with its mass and centre of mass: the central
    second moments Sigma_c raised onto >= 0 (EIGEN_FLOOR x the largest, a margin for rounding), the
    nearest such Sigma_c in the Frobenius norm, so the pseudo-inertia is positive semidefinite.
    Raising Sigma_c's smallest eigenvalue s < 0 to 0 adds |s| to the two principal moments about
    the other axes: J1 + J2 = J3 afterwards (a flat body). theta itself when it is physical or has
    no mass (nothing to project: ``consistency_problems`` refuses such a link with inertia)."""
    theta = np.asarray(theta, dtype=float)
    mass, com, ic = to_mass_com_inertia(theta)
    if mass <= 0:
        return theta.copy()
    sigma = 0.5 * np.trace(ic) * np.eye(3) - ic
    lam, vec = np.linalg.eigh(0.5 * (sigma + sigma.T))
    floor = EIGEN_FLOOR * max(float(lam[-1]), 0.0)
    if lam[0] >= floor:
        return theta.copy()
    sigma = (vec * np.maximum(lam, floor)) @ vec.T
    return from_mass_com_inertia(mass, com, np.trace(sigma) * np.eye(3) - sigma)


EIGEN_FLOOR = 1e-12  # projected second moments: eigenvalues >= this x the largest


def consistency_problems(theta: np.ndarray, *, strict: bool = False, tol: float = 1e-9) -> list[str]:
    """Reasons why theta is not a physical rigid body; empty when it is.

    Non-strict (the load-time check) accepts the limits of physical bodies: massless links
    (theta == 0) and point or line masses (semidefinite central inertia). ``strict`` asks for
    m > 0 and a positive definite central inertia. A violated triangle inequality is named with
    its size (``triangle_violation``).
    """
    mass, _, ic = to_mass_com_inertia(theta)
    problems: list[str] = []
    scale = max(1.0, float(np.max(np.abs(ic))))
    if mass < 0 or (strict and mass <= 0):
        problems.append(f"mass must be {'>' if strict else '>='} 0, got {mass:g} kg")
        return problems
    if mass == 0:
        if np.any(np.abs(np.asarray(theta)[1:]) > tol * scale):
            problems.append("a massless link must have zero first moment and inertia")
        return problems
    if not np.allclose(ic, ic.T):
        problems.append("inertia tensor is not symmetric")
    eig = np.linalg.eigvalsh(0.5 * (ic + ic.T))
    size = _violation_text(theta)
    if eig[0] < (tol * scale if strict else -tol * scale):
        problems.append(
            "central inertia is not positive "
            f"{'definite' if strict else 'semidefinite'}: principal moments {np.round(eig, 12).tolist()}{size}"
        )
    elif eig[0] + eig[1] < eig[2] - tol * scale:
        problems.append(
            f"principal moments {np.round(eig, 12).tolist()} violate the triangle inequality "
            f"J1 + J2 >= J3{size}"
        )
    return problems


def _violation_text(theta) -> str:
    v = triangle_violation(theta)
    if v == 0.0:
        return ""
    return " (no positive moment)" if not math.isfinite(v) else f" by {100 * v:.3g} % of J3"


def link_inertials(name: str, theta: np.ndarray) -> dict:
    """One link's standard inertials as result.json stores them: {"name", "mass" [kg],
    "first_moment" m c [kg m], "inertia" [Ixx, Ixy, Ixz, Iyy, Iyz, Izz] about the link frame
    origin [kg m^2], "com" [m], "inertia_about_com" [kg m^2]} (link axes, docs/formats.md section 1 order)."""
    theta = np.asarray(theta, dtype=float)
    mass, com, ic = to_mass_com_inertia(theta)
    return {"name": name, "mass": mass, "first_moment": theta[1:4].tolist(), "inertia": theta[4:10].tolist(),
            "com": com.tolist(), "inertia_about_com": inertia_six(ic).tolist()}


def solid_cylinder(mass: float, radius: float, length: float) -> np.ndarray:
    """Principal central moments (axis first) of a homogeneous cylinder: [m r^2/2, m(3r^2+l^2)/12 x2]."""
    axial = 0.5 * mass * radius**2
    transverse = mass * (3.0 * radius**2 + length**2) / 12.0
    return np.array([axial, transverse, transverse])


def solid_box(mass: float, size_x: float, size_y: float, size_z: float) -> np.ndarray:
    """Principal central moments of a homogeneous box [Ixx, Iyy, Izz]."""
    return mass / 12.0 * np.array(
        [size_y**2 + size_z**2, size_x**2 + size_z**2, size_x**2 + size_y**2]
    )
