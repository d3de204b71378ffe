"""Motor-to-joint transmissions, coupled ones included (docs/transmissions.md).

Motor k sits on the drive of joint k. The transmission is a constant matrix T (n, n):

    q_m = T q,   dq_m = T dq,   ddq_m = T ddq                                   (T1)

With no coupling T = diag(N) (the gear ratios). A coupled wrist adds off-diagonal entries:
on a Staubli TX40, q6 = q_m6 / N6 - q5, so row 6 of T is N6 (e5 + e6). Power balance
(the motors' power tau_m^T dq_m equals the joints' power tau^T dq for every dq) gives

    tau = T^T tau_m,   tau_m = T^-T tau                                         (T2)

T must be square, finite, with a non-zero diagonal (motor k moves joint k: T_kk = N_k, the
gear ratio of drive k) and non-singular, so that the joints follow from the motors,
q = T^-1 q_m. Arrays here are time-major rows, so (T1) reads q_m = q @ T.T and (T2)
tau = tau_m @ T.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import ModelError

# T is rejected as singular above this 2-norm condition number (the joint angles would be
# amplified encoder noise: q = T^-1 q_m).
MAX_CONDITION = 1e8


def check_transmission(t, gear_ratios: np.ndarray, joint_names: list[str], where: str) -> np.ndarray:
    """T as a float (n, n) array, or a ModelError naming ``where`` and what is wrong."""
    n = len(joint_names)
    try:
        t = np.array(t, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: expected an {n} x {n} matrix of numbers") from None
    if t.shape != (n, n):
        raise ModelError(f"{where}: expected an {n} x {n} matrix (one row per motor, one column per "
                         f"joint: {', '.join(joint_names)}), got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ModelError(f"{where}: entries must be finite numbers")
    diagonal = np.diag(t)
    if np.any(diagonal == 0):
        k = int(np.flatnonzero(diagonal == 0)[0])
        raise ModelError(f"{where}: T[{k + 1}][{k + 1}] is 0; number the motors so that motor k moves "
                         f"joint k (T_kk = its gear ratio, joint '{joint_names[k]}')")
    cond = np.linalg.cond(t)
    if not cond < MAX_CONDITION:
        raise ModelError(f"{where}: the matrix is singular (condition number {cond:.3g}): the motor "
                         "angles must determine the joint angles, q = T^-1 q_m")
    mismatch = np.flatnonzero(~np.isclose(diagonal, gear_ratios, rtol=1e-12, atol=0.0))
    if mismatch.size:
        k = int(mismatch[0])
        raise ModelError(f"{where}: T[{k + 1}][{k + 1}] = {diagonal[k]:g} but joint '{joint_names[k]}' has "
                         f"gear ratio {gear_ratios[k]:g}; they are the same number (or give only one)")
    return t


def transmission_from_document(doc, robot, where: str) -> np.ndarray:
    """T from a YAML ``transmission:`` block: ``matrix`` (full T, rows = motors) or ``coupling``
    (entries added to diag(gear ratios): a list of {motor, joint, ratio}, motor and joint by
    name or 1-based number)."""
    if not isinstance(doc, dict) or set(doc) - {"matrix", "coupling"} or len(doc) != 1:
        raise ModelError(f"{where}: expected a mapping with one of 'matrix' (the full T, one row per "
                         "motor) or 'coupling' (a list of {motor, joint, ratio})")
    if "matrix" in doc:
        return check_transmission(doc["matrix"], robot.gear_ratios, robot.joint_names, f"{where}: matrix")
    entries = doc["coupling"]
    if not isinstance(entries, list) or not entries:
        raise ModelError(f"{where}: 'coupling' must be a non-empty list of {{motor, joint, ratio}}")
    return coupled_matrix(robot, [_coupling_entry(e, robot, f"{where}: coupling[{i}]")
                                  for i, e in enumerate(entries)], where)


def _coupling_entry(entry, robot, where: str) -> tuple[int, int, float]:
    if not isinstance(entry, dict) or set(entry) != {"motor", "joint", "ratio"}:
        raise ModelError(f"{where}: expected {{motor: NAME or k, joint: NAME or j, ratio: NUMBER}}, got {entry!r}")
    ratio = entry["ratio"]
    if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or not np.isfinite(ratio):
        raise ModelError(f"{where}: 'ratio' must be a finite number, got {ratio!r}")
    return joint_index(robot, entry["motor"], f"{where}: motor"), joint_index(robot, entry["joint"],
                                                                              f"{where}: joint"), float(ratio)


def joint_index(robot, key, where: str) -> int:
    """0-based index of an actuated joint given by name or 1-based number."""
    names = robot.joint_names
    if isinstance(key, int) and not isinstance(key, bool):
        if 1 <= key <= len(names):
            return key - 1
        raise ModelError(f"{where}: {key} is not a joint number 1..{len(names)}")
    if isinstance(key, str) and key in names:
        return names.index(key)
    raise ModelError(f"{where}: '{key}' is not an actuated joint ({', '.join(names)})")


def coupled_matrix(robot, couplings: list[tuple[int, int, float]], where: str) -> np.ndarray:
    """diag(gear ratios) plus off-diagonal entries (motor k, joint j, ratio) -> checked T."""
    t = np.diag(robot.gear_ratios)
    given: dict[tuple[int, int], float] = {}
    for k, j, ratio in couplings:
        if k == j:
            raise ModelError(f"{where}: motor {k + 1} on its own joint is the gear ratio; give it in the "
                             "drive (gear_ratio / mechanicalReduction), not as a coupling")
        if (k, j) in given:  # the later entry would silently replace the earlier one
            raise ModelError(f"{where}: the coupling of motor {k + 1} ({robot.joint_names[k]}) to joint {j + 1} "
                             f"({robot.joint_names[j]}) is given twice (ratios {given[k, j]:g} and {ratio:g}); "
                             "expected one entry per motor and joint")
        given[k, j] = ratio
        t[k, j] = ratio
    return check_transmission(t, robot.gear_ratios, robot.joint_names, where)


# -- conversions between motor and joint side (time-major rows) --------------------------------
def joint_from_motor(t: np.ndarray, x_m: np.ndarray) -> np.ndarray:
    """q = T^-1 q_m (also dq, ddq): (N, n) -> (N, n), (T1)."""
    return np.linalg.solve(t, np.asarray(x_m, dtype=float).T).T


def motor_from_joint(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """q_m = T q (also dq_m, ddq_m): (N, n) -> (N, n), (T1)."""
    return np.asarray(x, dtype=float) @ t.T


def joint_torques(t: np.ndarray, tau_m: np.ndarray) -> np.ndarray:
    """tau = T^T tau_m: (N, n) motor torques -> joint torques, (T2)."""
    return np.asarray(tau_m, dtype=float) @ t


def motor_torques(t: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """tau_m = T^-T tau: (N, n) joint torques -> motor torques, (T2)."""
    return np.linalg.solve(t.T, np.asarray(tau, dtype=float).T).T
