"""How sure a payload estimate is (``identify.payload``): honest standard deviations and the inertia a log determines.

``honest_covariance``: the covariance of contiguous time blocks of the logs (the
cluster-robust sandwich, ``identify.sandwich`` S1) with Khalil-Gautier's white-noise
covariance as a floor, scaled up when the halves of the logs disagree beyond it (S2).

``inertia_determined``: a small load's inertia is often below what a log can see; when the
standard deviation of its inertia about the centre of mass exceeds ``INERTIA_STD_LIMIT`` of
its largest principal moment, the inertia is undetermined (the physically consistent estimate
then rests on the constraint at the edge of the physical set, smallest eigenvalue ~1e-8, not
on the data). A determined inertia whose least-squares value is not physical beyond three
standard deviations warns.
"""

from __future__ import annotations

import warnings

import numpy as np

from dynid.errors import DynidWarning
from dynid.identify.normal_equations import NormalEquations
from dynid.identify.physical import pseudo_inertia_basis, pseudo_solve
from dynid.identify.sandwich import floored, halves_check, jackknife_covariance
from dynid.robot.inertia import inertia_six, pseudo_inertia, to_mass_com_inertia

INERTIA_STD_LIMIT = 0.5  # an inertia whose std exceeds this share of its largest moment is undetermined


def derived(phi: np.ndarray) -> np.ndarray:
    mass, com, ic = to_mass_com_inertia(phi)
    return np.concatenate([[mass], com, inertia_six(ic)])


def derived_jacobian(phi: np.ndarray) -> np.ndarray:
    """(10, 10) d(m, c, I_c six) / d phi by central differences."""
    scale = np.maximum(np.abs(phi), 1e-6 * max(abs(phi[0]), 1e-3))
    jac = np.empty((10, 10))
    for k in range(10):
        step = np.zeros(10)
        step[k] = 1e-6 * scale[k]
        jac[:, k] = (derived(phi + step) - derived(phi - step)) / (2 * step[k])
    return jac


def honest_covariance(blocks: list, x_ls: np.ndarray, var: np.ndarray, inv: np.ndarray, white: np.ndarray, size: int,
                       determined: np.ndarray, source, notes: list) -> tuple[np.ndarray, dict]:
    """(covariance, result "uncertainty"): Khalil-Gautier's ``white`` as a floor under the time
    blocks' covariance, scaled when the log's halves disagree (``identify.sandwich``, S1-S2)."""
    weights = 1.0 / var
    parts: dict = {}
    for (cluster, _), part in blocks.items():  # a cluster's rows of both halves
        parts.setdefault(cluster, NormalEquations(part.n, part.b)).merge(part)
    parts = list(parts.values())
    cov = floored(jackknife_covariance(parts, weights, pseudo_solve), white)
    compared = size - 10 + np.flatnonzero(determined[:4])  # mass and first moments
    halves = halves_check(tuple([part for (_, half), part in blocks.items() if half == k] for k in (0, 1)), weights,
                          lambda a, r: (pseudo_solve(a, r), np.linalg.pinv(a, rcond=1e-12, hermitian=True)),
                          cov, compared)
    payload = slice(size - 10, size)
    white_std = np.sqrt(np.maximum(np.diag(white)[payload], 0.0))
    ratio = np.sqrt(np.diag(cov)[payload]) / np.where(white_std > 0, white_std, np.inf)
    out = {"white_noise_std": [float(v) if d else None for v, d in zip(white_std, determined)],
           "blocks": len(parts), "largest_std_ratio": float(np.max(ratio[determined])) if determined.any() else 1.0,
           "halves": None if halves is None else halves.to_dict()}
    if halves is not None and halves.exceeded:
        cov = cov * halves.scale
        notes.append(f"{source}: the payload fitted to the first and to the second half of the log(s) differs by "
                     f"{halves.largest:.2g} of its standard deviations (mass or centre of mass): the robot changed "
                     "within the log (friction warming up, a drift) or the model misses something the motion shows "
                     f"in one half; the standard deviations are scaled by {np.sqrt(halves.scale):.2g}")
        warnings.warn(DynidWarning(notes[-1]), stacklevel=3)
    return cov, out


def inertia_determined(phi_ls: np.ndarray, phi_pc: np.ndarray, cov: np.ndarray, determined: np.ndarray, source,
                        notes: list) -> np.ndarray:
    """(10,) False on the inertia (Ixx..Izz) when the log does not determine it: the standard
    deviation of the inertia about the centre of mass beyond ``INERTIA_STD_LIMIT`` of its
    largest principal moment (then the physically consistent estimate rests on the constraint,
    at the edge of the physical set, not on the data: a note says so). A determined inertia
    whose least-squares value is not physical beyond three of its standard deviations warns:
    the model misses something the load's inertia absorbs."""
    keep = np.ones(10, dtype=bool)
    if not determined[4:].all():
        return keep
    jac = derived_jacobian(phi_ls)
    var = np.einsum("ij,jk,ik->i", jac, np.nan_to_num(cov), jac)
    moments = np.linalg.eigvalsh(to_mass_com_inertia(phi_ls)[2])
    largest = float(np.max(np.abs(moments)))
    spread = float(np.sqrt(max(var[4:].max(), 0.0)))
    if not spread < INERTIA_STD_LIMIT * largest:
        keep[4:] = False
        notes.append(f"{source}: the log does not determine the load's inertia: its standard deviation ({spread:.2g} "
                     f"kg m^2) exceeds {INERTIA_STD_LIMIT:g} of its largest principal moment ({largest:.2g} kg m^2); "
                     "inertia_about_com is null and the URDF carries the physically consistent value, at the edge of "
                     "the physical set, not an identified one (more wrist motion, faster, or a longer log)")
        return keep
    lam, vec = np.linalg.eigh(pseudo_inertia(phi_ls))
    g = np.einsum("i,kij,j->k", vec[:, 0], pseudo_inertia_basis(), vec[:, 0])  # d lambda_min / d phi
    lam_std = float(np.sqrt(max(g @ np.nan_to_num(cov) @ g, 0.0)))
    if lam[0] < -3.0 * lam_std:
        text = (f"{source}: the least-squares load is not physical (the smallest eigenvalue of its pseudo-inertia is "
                f"{lam[0]:.3g}, {-lam[0] / max(lam_std, 1e-300):.3g} of its standard deviations below 0); the "
                "physically consistent load sits on the edge of the physical set (smallest eigenvalue "
                f"{np.linalg.eigvalsh(pseudo_inertia(phi_pc))[0]:.2g}): the model misses an effect that the load's "
                "inertia absorbs")
        notes.append(text)
        warnings.warn(DynidWarning(text), stacklevel=3)
    return keep
