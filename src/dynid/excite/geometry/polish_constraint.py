"""Geometric constraints of the local polish (SLSQP), in the coefficients x = (C, q0).

The period is sampled densely (``dense`` instants, spacing h) and cut into ``windows``
windows; for each window and each constraint k that comes near (margin below ``band`` at
the start point, every workspace face), the constraint is

    min over the window's instants of g_k(t_m)  >=  delta_k = L_k h / 2,

with L_k the speed bound of ``GeometricConstraints.speed_coefficients`` at the velocity
limits. A point that meets them all meets every constraint between the dense instants too
(g >= (g_m + g_m+1)/2 - L_k h/2 >= 0). The window minimum follows its moving minimizer;
its gradient is the gradient at the minimizing instant (``GeometricConstraints.jacobian``)
times dq(t_m)/dx, which is the trajectory's basis: dq_i(t_m)/dC[p, i] = B_p(t_m),
dq_i/dq0_i = 1.
"""

from __future__ import annotations

import numpy as np

DENSE = 2048
WINDOWS = 64
BAND = 0.15  # [m]: constraints farther than this at the start point are left out


class TrajectoryGeometry:
    """Window-minimum margins of the dense samples, as SLSQP constraint function and Jacobian."""

    def __init__(self, problem, constraints, x0: np.ndarray, dense: int = DENSE, windows: int = WINDOWS,
                 band: float = BAND):
        self.problem, self.constraints = problem, constraints
        period = problem.template.period
        self.h = period / dense
        self.t = np.arange(dense) * self.h
        self.basis = problem.template.basis(self.t, 0)  # (M, p)
        limits = problem.limits
        lipschitz = constraints.speed_coefficients(limits.q_min, limits.q_max) @ limits.dq_max
        self.delta = 0.5 * self.h * lipschitz  # (K,)
        if dense % windows:
            raise ValueError("dense instants must split evenly into windows")
        self.windows = windows
        g = self.margins_all(x0)
        near = g.min(axis=0) < band
        if constraints.workspace is not None:
            near[-6:] = True
        self.active = np.flatnonzero(near)
        self._cache: dict = {}

    @property
    def size(self) -> int:
        return self.active.size * self.windows

    def q(self, x: np.ndarray) -> np.ndarray:
        q0, c = self.problem.unpack(x)
        return self.basis @ c[0] + q0[0]

    def margins_all(self, x: np.ndarray) -> np.ndarray:
        """(M, K) margins minus delta at the dense instants."""
        return self.constraints.margins(self.q(x)) - self.delta

    def _window_min(self, x: np.ndarray):
        key = x.tobytes()
        if key not in self._cache:
            g = self.margins_all(x)[:, self.active]  # (M, Ka)
            per = g.shape[0] // self.windows
            inside = g.reshape(self.windows, per, -1).argmin(axis=1)  # (W, Ka)
            arg = inside + per * np.arange(self.windows)[:, None]
            self._cache = {key: (np.take_along_axis(g, arg, axis=0), arg)}
        return self._cache[key]

    def values(self, x: np.ndarray) -> np.ndarray:
        """(W Ka,) window minima (>= 0 when met)."""
        return self._window_min(x)[0].ravel()

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """(W Ka, nx) d(window minimum)/dx."""
        _, arg = self._window_min(x)
        q = self.q(x)
        instants = arg.ravel()  # row r = (w, a): instant arg[w, a], constraint active[a]
        which = np.tile(self.active, self.windows)
        _, grad = self.constraints.jacobian(q[instants])  # (R, K, n)
        g = grad[np.arange(instants.size), which]  # (R, n)
        b = self.basis[instants]  # (R, p)
        n, p = self.problem.n, self.problem.p
        jac_c = (b[:, :, None] * g[:, None, :]).reshape(instants.size, p * n)
        return np.hstack([jac_c, g])

    def feasible(self, x: np.ndarray, tol: float = 0.0) -> bool:
        return bool(np.all(self.margins_all(x) >= -tol)) if self.constraints.size else True
