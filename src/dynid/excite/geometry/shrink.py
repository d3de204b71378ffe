"""Make a periodic trajectory meet the geometric constraints by shrinking it towards a safe posture.

With a start posture q_s that meets every constraint (``constraints.build_constraints``
checks it), the family of trajectories

    q_s(t) = q_s + s (q(t) - q_s),  s in [0, 1]      i.e.  q0' = q_s + s (q0 - q_s),  C' = s C

runs from the constant posture q_s (s = 0, feasible) to the trajectory itself (s = 1). Every
member keeps the position range (a convex combination of points inside it, when q_s is
inside it) and scales velocity and acceleration by s, so the kinematic limits hold for all s
when they hold for s = 1. Bisection on s therefore always ends on a feasible trajectory:

- ``shrink_candidates``: many candidates at once, feasibility sampled at given instants
  (the global search);
- ``shrink_guaranteed``: one trajectory, feasibility by the guaranteed bound between samples
  (``constraints.guaranteed_margins``), used for the final result.
"""

from __future__ import annotations

import numpy as np

BISECTION_STEPS = 6


def shrink_candidates(constraints, basis_q: np.ndarray, q_safe: np.ndarray, q0: np.ndarray, c: np.ndarray,
                      steps: int = BISECTION_STEPS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q0 (S, n), C (S, p, n) -> shrunk q0, C and the factors s (S,), with the margins >= 0 at
    the instants of ``basis_q`` (M, p). Feasible candidates keep s = 1."""
    s_count = q0.shape[0]

    def feasible(q0s, cs):
        q = np.einsum("mp,spn->smn", basis_q, cs) + q0s[:, None, :]
        g = constraints.margins(q.reshape(-1, q.shape[-1]))
        return g.reshape(q.shape[0], -1).min(axis=1) >= 0.0 if g.size else np.ones(q.shape[0], bool)

    scale = np.ones(s_count)
    bad = np.flatnonzero(~feasible(q0, c))
    if bad.size:
        lo, hi = np.zeros(bad.size), np.ones(bad.size)
        for _ in range(steps):
            mid = 0.5 * (lo + hi)
            ok = feasible(q_safe + mid[:, None] * (q0[bad] - q_safe), mid[:, None, None] * c[bad])
            lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
        scale[bad] = lo
    return q_safe + scale[:, None] * (q0 - q_safe), scale[:, None, None] * c, scale


def shrink_guaranteed(trajectory, constraints, limits, q_safe: np.ndarray, samples: int,
                      steps: int = 12) -> tuple[object, float, dict]:
    """(trajectory, s, guaranteed report) with every guaranteed margin >= 0; s = 1 when the
    trajectory already meets them (no change)."""
    report = constraints.guaranteed_margins(trajectory, limits, samples)
    if report["guaranteed"].size == 0 or report["guaranteed"].min() >= 0.0:
        return trajectory, 1.0, report

    def shrunk(s):
        return trajectory.with_coefficients(q_safe + s * (trajectory.q0 - q_safe), s * trajectory.coefficients)

    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if constraints.guaranteed_margins(shrunk(mid), limits, samples)["guaranteed"].min() >= 0.0:
            lo = mid
        else:
            hi = mid
    out = shrunk(lo)
    return out, lo, constraints.guaranteed_margins(out, limits, samples)
