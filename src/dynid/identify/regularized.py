"""Physically consistent identification regularized toward the description's inertials with
the entropic (log-det) divergence between pseudo-inertias (``--estimator pc --regularize``).

Least squares determines only the base parameters beta = K theta; the standard parameters
theta of the links (what a URDF or a simulator needs) are fixed by the data only in the
directions K sees. Lee, Wensing & Park ("Geometric robot dynamic identification: a convex
programming approach", IEEE T-RO 36(2), 2020) pull the other directions toward a prior with a
divergence that respects the geometry of rigid bodies: for the 4x4 pseudo-inertias
J_i = J(theta_i) (physical.py) and the prior's Jbar_i, the Bregman divergence of the log-det
function phi(J) = -log det J,

    D(J || Jbar) = tr(Jbar^-1 J) - log det(Jbar^-1 J) - 4                                 (R1)

(Lee et al., eq. 22 / the "entropic" or Stein divergence). It is zero only at J = Jbar,
convex in J, finite only for J positive definite (so every link stays physical), and
invariant to the body frame and the length unit (J -> A J A^T for any affine change of
coordinates A leaves it alone), unlike a Euclidean distance on theta, which mixes kg, kg m
and kg m^2. The estimate is the maximum a posteriori one

    min_theta  1/2 sum_j ||tau_j - Y_j K theta||^2 / sigma_j^2 + w sum_i D(J_i || Jbar_i)  (R2)
    s.t.       J_i > 0, I_a, Coulomb, viscous >= 0 (and ``--prior-bound``, if given)

with sigma_j^2 the per-joint noise variances of an OLS pass (physical.py) and w the weight of
the prior (``--regularize WEIGHT``; ``auto``: chosen by held-out cross-validation,
regularize_cv.py). Directions the data determine have a curvature of the order of the number
of samples and follow the data for any moderate w; directions the data leave free have only
the prior's and stay at Jbar; the weakly determined ones are a compromise the held-out error
decides. Written through the normal equations as in physical.py: the data term is
(beta - beta_ls)^T A_w (beta - beta_ls) / RSS_ls, so (R2) is solved as

    min  ||G K theta - c||^2 / RSS_ls + (2 w / RSS_ls) sum_i D(J_i || Jbar_i) + small       (R3)

where "small" is physical.py's Frobenius term (1e-6, far below both) on every parameter: it
alone picks the directions neither the data nor a pseudo-inertia prior fix (friction, rotor
inertias and offsets the data do not see, links the description leaves massless), and w = 0
is plain ``--estimator pc``.

Numerics: each link is whitened by the Cholesky factor of its prior, Jbar_i = L_i L_i^T and
X_i = L_i^-1 J_i L_i^-T, so D = tr X_i - log det X_i - 4 with X_i = 1 at the prior (cvxpy's
``log_det``, an exponential-cone and semidefinite program for Clarabel, SCS as fallback). A
prior pseudo-inertia must be positive definite: a description link that is a point mass, a
rod or a flat body (J singular) is thickened first, its central second moments raised to
at least ``THICKEN`` of the largest (a point mass: to a sphere of ``POINT_RADIUS`` radius of
gyration); a link that misses the triangle inequality is projected first (``Robot.physical``).
"""

from __future__ import annotations

import numpy as np

from dynid.errors import ModelError
from dynid.identify.physical import PhysicallyConsistent, pseudo_inertia_basis
from dynid.robot.inertia import from_mass_com_inertia, nearest_physical, pseudo_inertia, to_mass_com_inertia

THICKEN = 1e-3  # a singular prior's central second moments are raised to this x the largest
POINT_RADIUS = 0.01  # m: the radius of gyration given to a point-mass prior


def prior_pseudo_inertia(theta: np.ndarray) -> np.ndarray | None:
    """The positive definite prior Jbar (4, 4) of one link's standard parameters (10,) (module
    docstring: projected, then thickened), or None for a massless link (no prior on it)."""
    theta = nearest_physical(theta)
    mass, com, ic = to_mass_com_inertia(theta)
    if not mass > 0:
        return None
    sigma = 0.5 * np.trace(ic) * np.eye(3) - ic  # central second moments of mass
    lam, vec = np.linalg.eigh(0.5 * (sigma + sigma.T))
    floor = THICKEN * lam[-1] if lam[-1] > 0 else mass * POINT_RADIUS**2
    if lam[0] < floor:
        sigma = (vec * np.maximum(lam, floor)) @ vec.T
        theta = from_mass_com_inertia(mass, com, np.trace(sigma) * np.eye(3) - sigma)
    return pseudo_inertia(theta)


def entropic_divergence(j: np.ndarray, j_prior: np.ndarray) -> float:
    """D(J || Jbar) of eq. (R1) for 4x4 pseudo-inertias (inf when J is not positive definite)."""
    m = np.linalg.solve(j_prior, j)
    sign, logdet = np.linalg.slogdet(m)
    if sign <= 0:
        return float("inf")
    return float(np.trace(m) - logdet - 4.0)


def link_divergences(theta: np.ndarray, prior: np.ndarray, n_bodies: int) -> list[float | None]:
    """(n_bodies,) D(J_i || Jbar_i) of standard parameters theta against the prior's (None: a
    link without a prior, massless in the description)."""
    out = []
    for i in range(n_bodies):
        jbar = prior_pseudo_inertia(prior[10 * i:10 * i + 10])
        out.append(None if jbar is None else entropic_divergence(pseudo_inertia(theta[10 * i:10 * i + 10]), jbar))
    return out


class EntropicPhysicallyConsistent(PhysicallyConsistent):
    """``PhysicallyConsistent`` with the entropic prior term of eq. (R3), weight ``weight`` (w of
    eq. R2, >= 0; it may be changed between fits). The estimators' options ``fixed`` and ``prior``
    hold base parameters at given values here as constraints of the whole program (K_U theta =
    prior_U: those a log with joints held still cannot determine, at the description's values,
    as least squares holds them; undetermined.py); ``hold`` is (fixed, prior[fixed]).
    The convex program is compiled once per estimator with its data as cvxpy parameters, so
    refits (cross-validation folds, other weights) only solve. Extra results: divergence_
    (n_bodies,) D(J_i || Jbar_i) at the estimate (None for a link without a prior)."""

    holds_fixed = True  # K_U theta = prior_U in the program (not a reduction of the normal equations)

    def __init__(self, names=None, *, robot, options, base, weight: float = 1.0, **kw):
        super().__init__(names, robot=robot, options=options, base=base, **kw)
        if self.from_least_squares:
            raise ModelError(f"--regularize: robot '{robot.name}' has no inertial parameters to pull the links "
                             "toward (its description has no links' masses and inertias); give them or leave "
                             "--regularize out")
        self.weight = weight
        self.hold = (self.fixed, self.prior[self.fixed]) if self.fixed.size else None
        self._program, self._compiled_hold = None, None

    def _solve_sdp(self, g: np.ndarray, c: np.ndarray, norm: float):
        import cvxpy as cp

        if not (np.isfinite(self.weight) and self.weight >= 0):
            raise ValueError(f"regularization weight {self.weight!r}: expected a finite number >= 0")
        if self._program is None or self._compiled_hold is not self.hold:
            self._program, self._compiled_hold = self._compile(cp), self.hold
        problem, theta, data, rhs, prior_scale = self._program
        rows = np.zeros(data.shape)  # g has at most b rows (directions the data see): pad with zeros
        rows[:g.shape[0]] = g / np.sqrt(norm)
        target = np.zeros(rhs.shape)
        target[:c.shape[0]] = c / np.sqrt(norm)
        data.value, rhs.value, prior_scale.value = rows, target, 2.0 * self.weight / norm
        status = self._solve_problem(problem, cp)
        return theta.value, status, getattr(problem.solver_stats, "num_iters", None)

    def _compile(self, cp):
        """(problem, theta, G / sqrt(norm), c / sqrt(norm), 2 w / norm): eq. (R3) with its data as
        parameters (a parametrized program cvxpy compiles once: DPP)."""
        p = self.base.K.shape[1]
        theta = cp.Variable(p)
        data, rhs = cp.Parameter((self.base.K.shape[0], p)), cp.Parameter(self.base.K.shape[0])
        prior_scale = cp.Parameter(nonneg=True)
        vec_basis = pseudo_inertia_basis().reshape(10, 16).T
        divergences = []
        for i in range(self.robot.n_bodies):
            jbar = prior_pseudo_inertia(self.theta_prior[10 * i:10 * i + 10])
            if jbar is None:
                continue
            inv_l = np.linalg.inv(np.linalg.cholesky(jbar))
            white = np.kron(inv_l, inv_l) @ vec_basis  # vec(L^-1 J L^-T) = (L^-1 (x) L^-1) vec J
            x = cp.reshape(white @ theta[10 * i:10 * i + 10], (4, 4), order="C")
            divergences.append(cp.trace(x) - cp.log_det(x) - 4.0)  # eq. (R1) with Jbar = 1
        scale = self._parameter_scale()
        objective = cp.sum_squares(data @ theta - rhs)
        # physical.py's small term on every parameter (what w = 0 leaves)
        objective += self.regularization * cp.sum_squares(cp.multiply(1.0 / scale, theta - self.theta_prior))
        if divergences:
            objective += prior_scale * cp.sum(cp.hstack(divergences))
        constraints = self._constraints(theta)
        if self.hold is not None and len(self.hold[0]):  # base parameters the log cannot determine
            constraints.append(self.base.K[np.asarray(self.hold[0])] @ theta == np.asarray(self.hold[1], dtype=float))
        problem = cp.Problem(cp.Minimize(objective), constraints)
        return problem, theta, data, rhs, prior_scale

    def joint_weights(self) -> None:
        """None: the prior's pull, not a constraint, moves this estimate from least squares; its std
        stay the unconstrained problem's white-noise ones at the solution (result "uncertainty")."""
        return None

    def _fit_equations(self, ne) -> None:
        super()._fit_equations(ne)
        self.divergence_ = link_divergences(self.theta_, self.theta_prior, self.robot.n_bodies)

    def _solve(self, a, rhs):
        """``Estimator._solve`` of the base parameters not held (their conditioning is what the
        data must carry; a held parameter's regressor column may be zero): (beta, A^-1, cond)
        with zeros in the held rows and columns of A^-1."""
        if self.hold is None or not len(self.hold[0]):
            return super()._solve(a, rhs)
        held, values = np.asarray(self.hold[0]), np.asarray(self.hold[1], dtype=float)
        free = np.setdiff1d(np.arange(a.shape[0]), held)
        names = self.names
        self.names = None if names is None else [names[k] for k in free]  # labels of the sub-problem's errors
        try:
            reduced = rhs[free] - a[np.ix_(free, held)] @ values  # the held parameters' share moved right
            beta_free, inv_free, cond = super()._solve(a[np.ix_(free, free)], reduced)
        finally:
            self.names = names
        beta, inv = np.empty(a.shape[0]), np.zeros(a.shape)
        beta[free], beta[held] = beta_free, values
        inv[np.ix_(free, free)] = inv_free
        return beta, inv, cond

    def _finish(self, ne, beta, cov, cond):
        """``Estimator._finish`` with the held base parameters out of the covariance (they are not
        estimated: std NaN, as least squares reports them, undetermined.expand)."""
        if self.hold is None or not len(self.hold[0]):
            return super()._finish(ne, beta, cov, cond)
        held = np.asarray(self.hold[0])
        cov = np.array(cov, dtype=float)
        cov[held, :], cov[:, held] = 0.0, 0.0
        super()._finish(ne, beta, cov, cond)
        self.std_[held], self.rel_std_[held] = np.nan, np.nan
        return self

    def diagnostics(self) -> dict:
        """``PhysicallyConsistent.diagnostics`` plus "regularization": the weight and each link's
        divergence from the prior at the estimate."""
        out = super().diagnostics()
        out["regularization"] = {"weight": self.weight, "divergence": getattr(self, "divergence_", None)}
        return out
