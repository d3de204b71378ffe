"""Physically consistent identification: a semidefinite program over the full parameters.

Wensing, Kim & Slotine (2017): a link's ten standard parameters are realizable by a
non-negative mass distribution exactly when its pseudo-inertia

    J(theta_i) = [[Sigma, h], [h^T, m]],  Sigma = tr(I)/2 1 - I   (I about the link origin)

is positive semidefinite. The estimator solves

    min_theta  ||W (K theta) - tau||^2_S / RSS_ls + lambda ||D (theta - theta_prior)||^2
    s.t.       J(theta_i) >= 0 for every link i          (one LMI per link)
               I_a >= 0, Coulomb and viscous coefficients >= 0
               |theta_k - prior_k| <= bound |prior_k|     (optional, rigid-body parameters)

with S the per-joint weights (1 / sigma_j^2 from an OLS pass, as in WLS, when ``weighted``),
written through the normal equations: ||W beta - tau||^2 = (beta - beta_ls)^T A (beta - beta_ls)
+ const, and RSS_ls the residual of unconstrained least squares (so the data term is ~1 at
the noise level). The small regularization (lambda = 1e-6 by default, D = 1 / max(|prior|,
scale of the group)) only picks the non-identifiable directions of theta (those K maps to
zero); it is negligible for the identifiable ones. Solved with cvxpy and Clarabel (SCS as fallback).

The prior is the robot description's parameters. A description without inertias (a DH/MDH
table without ``links:``, every link's ten parameters zero) has none to give: its zeros would
set D's scale to the 1e-6 floor and pull every parameter to zero (a fit 75-99 % off). Its
prior is then the least-squares solution, written in the full parameters as the smallest
change of the description that reproduces it, projected onto the constraints (as the
estimate is, below; a physical prior also keeps the solver's scaling sound),

    theta_prior = Proj(theta_d + K^+ (beta_ls - K theta_d))                             (P1)

(theta_d: the description's zeros, with its rotor inertias; K^+ the pseudo-inverse), so the
constraints, not the prior, move the fit away from least squares; ``--prior-bound``, which
bounds the distance to the description's inertias, is refused for such a description.

A solver meets the constraints to its own tolerance only (SCS about 1e-5, an
``optimal_inaccurate`` status worse): a link on the boundary of the physical set (a thin rod,
J1 + J2 = J3, which the fit often reaches) may then miss J >= 0 by a little and be refused
by every physical check downstream (``dynid export``). The estimate is therefore projected
onto the constraints: each link's pseudo-inertia onto the positive semidefinite matrices
(its negative eigenvalues raised to 1e-12 of the largest: the nearest such matrix in the
Frobenius norm, and J is a one-to-one linear image of the ten parameters), I_a, Coulomb and
viscous coefficients onto >= 0 (``physical_projection``). The size of that step is reported
(``diagnostics.physical_projection``; a warning when it is beyond rounding), never hidden.
"""

from __future__ import annotations

import warnings

import numpy as np

from dynid.errors import IllConditionedError, ModelError
from dynid.identify.estimators import Estimator, joint_noise_variances
from dynid.identify.model import FRICTION_MODELS, ModelOptions, full_parameters, parameter_slices
from dynid.identify.normal_equations import NormalEquations, spectrum
from dynid.identify.threads import single_blas_thread
from dynid.robot.inertia import consistency_problems, from_pseudo_inertia, pseudo_inertia
from dynid.robot.validation import projected_links

EIGEN_FLOOR = 1e-12  # projected pseudo-inertias: eigenvalues >= this x the largest (a margin for rounding)
BOUNDARY = 1e-6  # a constraint's margin below this (relative) puts the estimate on it
ACTIVE_DISTANCE = 0.05  # constraints moved the estimate by more than this (Mahalanobis): one is active
ACTIVE_CORRELATION = 0.3  # a parameter correlated more than this with the step is on the active constraint


def pseudo_inertia_basis() -> np.ndarray:
    """(10, 4, 4): J(theta) = sum_k theta_k P_k (J is linear in the standard parameters)."""
    return np.array([pseudo_inertia(e) for e in np.eye(10)])


def link_lmi_margins(theta: np.ndarray, n: int) -> np.ndarray:
    """(n,) smallest eigenvalue of each link's pseudo-inertia (>= 0 when physical)."""
    theta = np.asarray(theta, dtype=float)
    return np.array([np.linalg.eigvalsh(pseudo_inertia(theta[10 * i:10 * i + 10]))[0] for i in range(n)])


def physical_projection(theta: np.ndarray, n: int, nonnegative) -> np.ndarray:
    """theta (p,) with each of the n links' pseudo-inertia projected onto J >= EIGEN_FLOOR x its
    largest eigenvalue and the parameters ``nonnegative`` (indices) onto >= 0 (module docstring)."""
    out = np.array(theta, dtype=float)
    for i in range(n):
        lam, vec = np.linalg.eigh(pseudo_inertia(out[10 * i:10 * i + 10]))
        floor = EIGEN_FLOOR * max(lam[-1], 0.0)
        if lam[0] < floor:
            out[10 * i:10 * i + 10] = from_pseudo_inertia((vec * np.maximum(lam, floor)) @ vec.T)
    out[list(nonnegative)] = np.maximum(out[list(nonnegative)], 0.0)
    return out


def least_squares_form(a: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(G, c) with ||G beta - c||^2 = beta^T A beta - 2 rhs^T beta + const, for A >= 0 possibly
    singular: from the eigendecomposition of the column-normalized A (``normal_equations.Spectrum``;
    directions below its rank threshold are left out: the data say nothing about them)."""
    return spectrum(a).least_squares_form(rhs)


def least_squares_prior(k: np.ndarray, description: np.ndarray, beta_ls: np.ndarray, n: int,
                        nonnegative) -> np.ndarray:
    """(p,) the full parameters nearest ``description`` (p,) whose base parameters K theta are
    the least-squares ones beta_ls (b,), projected onto the constraints of n links
    (``physical_projection``): Proj(theta_d + K^+ (beta_ls - K theta_d)) (module docstring, P1)."""
    return physical_projection(description + np.linalg.pinv(k) @ (beta_ls - k @ description), n, nonnegative)


def pseudo_solve(a: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Minimum-norm (in normalized units) least-squares solution from the normal equations."""
    g, c = least_squares_form(a, rhs)
    return np.linalg.lstsq(g, c, rcond=None)[0]


class PhysicallyConsistent(Estimator):
    """Semidefinite least squares with one pseudo-inertia LMI per link (module docstring).

    Options (keyword, besides the estimators' common ones): robot, options, base (the model the
    base parameters belong to), theta_prior (p,) the standard parameters the regularization
    pulls toward (default: the robot description's; (P1) without inertias), bound,
    regularization, weighted, solver. It holds no parameter ``fixed`` (its constraints choose
    what the data leave free); the regularized one does (regularized.py).

    Extra results: theta_ (p,) full standard parameters, lmi_min_eig_ (n,), solver_status_,
    unconstrained_ (b,) the least-squares estimate with the same weights.
    ``std_`` are those of the unconstrained problem at the solution (Khalil-Gautier's, or the
    sandwich of ``identify.residual_correlation`` with the weights ``joint_weights``): they mean
    that only where no constraint is active; ``active_constraints`` says where one is.
    """

    def joint_weights(self) -> np.ndarray:
        """(n,) the weight of each joint's rows in the data term (1 / sigma_j^2 when ``weighted``)."""
        return 1.0 / np.asarray(self.sigma2_, dtype=float)

    def active_constraints(self) -> dict:
        """Where the constraints hold the estimate away from least squares, and the std there set to
        NaN (no number: the spread of a constrained estimate is not that of the unconstrained problem,
        and none is invented). The step d = beta - beta_ls (``unconstrained_``) the constraints made
        has the Mahalanobis length D = sqrt(d^T C^-1 d) (C = ``cov_``, the unconstrained problem's);
        D > ACTIVE_DISTANCE means a constraint is active. An active constraint g^T beta >= 0 moves
        the estimate along C g (d = C g lambda), so parameter k's correlation with it is
        |d_k| / (sigma_k D); it is on the active constraint when that exceeds ACTIVE_CORRELATION
        (its variance would shrink by more than ~10 % under the constraint). Returns result.json
        "uncertainty"'s "constraints": {"active", "distance", "parameters" (names), "why"}."""
        at = self.on_boundary()
        free = np.flatnonzero(np.isfinite(self.std_))
        step = (self.coef_ - self.unconstrained_)[free]
        cov = np.asarray(self.cov_, dtype=float)[np.ix_(free, free)]
        distance = float(np.sqrt(max(step @ spectrum(cov).pseudo_inverse() @ step, 0.0))) if free.size else 0.0
        on = np.zeros(free.size, dtype=bool)
        if at and distance > ACTIVE_DISTANCE:
            on = np.abs(step) > ACTIVE_CORRELATION * distance * self.std_[free]
        names = [self._label(int(k)) for k in free[on]]
        self.std_[free[on]], self.rel_std_[free[on]] = np.nan, np.nan
        why = (f"a physical-consistency constraint is active (the estimate is {distance:.3g} standard deviations, "
               "Mahalanobis, from least squares): the std of the parameters on it are null (the spread of a "
               "constrained estimate is not that of the unconstrained problem); the others are the unconstrained "
               "problem's at the solution" if names else
               "no constraint holds the estimate away from least squares: the std are the unconstrained problem's "
               "at the solution")
        return {"active": bool(names), "distance": distance, "parameters": names, "on_boundary": at, "why": why}

    def on_boundary(self) -> list[str]:
        """The constraints the estimate ``theta_`` lies on: a link's pseudo-inertia with its smallest
        eigenvalue below BOUNDARY x its largest, a sign-constrained coefficient at 0 (below BOUNDARY
        x its scale), a rigid-body parameter at its ``bound``. Only these can be active."""
        n, scale = self.robot.n_bodies, self._parameter_scale()
        out = []
        for i in range(n):
            lam = np.linalg.eigvalsh(pseudo_inertia(self.theta_[10 * i:10 * i + 10]))
            if lam[0] <= BOUNDARY * max(lam[-1], 1e-300):
                out.append(f"J({self.robot.links[i].name}) >= 0")
        names = self.base.standard_names
        out += [f"{names[k]} >= 0" for k in self._nonnegative() if self.theta_[k] <= BOUNDARY * scale[k]]
        if self.bound is not None:
            rigid = slice(0, 10 * n)
            gap = self.bound * np.abs(self.theta_prior[rigid]) - np.abs(self.theta_[rigid] - self.theta_prior[rigid])
            out += [f"|{names[k]} - prior| <= bound" for k in np.flatnonzero(gap <= BOUNDARY * scale[rigid])]
        return out


    name = "pc"

    def __init__(self, names=None, *, robot, options: ModelOptions, base, theta_prior: np.ndarray | None = None,
                 bound: float | None = None, regularization: float = 1e-6, weighted: bool = True,
                 solver: str = "CLARABEL", **kw):
        super().__init__(names if names is not None else base.names, **kw)
        if self.fixed.size and not self.holds_fixed:
            raise ValueError("the physically consistent estimator holds no parameter fixed: its constraints "
                             "choose what the data leave free (fixed= is for ols, wls, irls and pc regularized "
                             "toward the description, regularized.py)")
        self.robot, self.options, self.base = robot, options, base
        self.theta_prior = (full_parameters(robot, options) if theta_prior is None
                            else np.asarray(theta_prior, dtype=float))
        self.from_least_squares = theta_prior is None and not np.any(self.theta_prior[:10 * robot.n_bodies])
        if self.from_least_squares and bound is not None:
            raise ModelError(f"--prior-bound {bound:g}: robot '{robot.name}' has no inertial parameters to bound the "
                             "fit to (its description has no links' masses and inertias); give them or leave "
                             "--prior-bound out")
        self.bound, self.regularization = bound, regularization
        self.weighted, self.solver = weighted, solver

    def _fit_equations(self, ne: NormalEquations) -> None:
        with single_blas_thread():  # b x b matrices: on a busy machine BLAS threads only contend
            return self._fit(ne)

    def _fit(self, ne: NormalEquations) -> "PhysicallyConsistent":
        if np.isfinite(self.max_condition):  # data that cannot determine beta: the SDP would return the prior
            try:
                self._solve(*ne.totals())
            except IllConditionedError as exc:
                raise IllConditionedError(f"{exc} (physically consistent estimate: it would rest on the prior "
                                          "for these parameters; --max-condition inf accepts that)") from None
        var = np.ones(ne.n)
        beta_ls = pseudo_solve(*ne.totals())
        prior_note = []
        if self.from_least_squares:  # no inertias in the description: its prior is least squares (P1)
            self.theta_prior = least_squares_prior(self.base.K, full_parameters(self.robot, self.options), beta_ls,
                                             self.robot.n_bodies, self._nonnegative())
            prior_note = [f"robot '{self.robot.name}' has no inertial parameters: the physically consistent fit "
                          "starts from the least-squares solution (its prior), not from the description"]
        if self.weighted:
            var = joint_noise_variances(ne, beta_ls)
        a, rhs = ne.totals(1.0 / var)
        g_beta, c = least_squares_form(a, rhs)
        g = g_beta @ self.base.K  # acts on theta
        # the data term is measured in units of the least-squares residual (about r - b when
        # weighted), so the regularization stays far below the noise level of the fit
        self.unconstrained_ = pseudo_solve(a, rhs)  # least squares with the same weights (``active_constraints``)
        rss_ls = float(np.sum(ne.residual_ss(self.unconstrained_) / var))
        norm = max(rss_ls, 1e-12 * float(np.sum(ne.C / var)), 1e-300)
        n = self.robot.n_bodies  # one LMI per moving body (mimic followers included)
        value, status, self.n_iter_ = self._solve_sdp(g, c, norm)
        if value is None or status not in ("optimal", "optimal_inaccurate"):
            raise IllConditionedError(f"physically consistent identification: solver status '{status}'; "
                                      "the constraints may contradict the prior bounds")
        solution = np.asarray(value, dtype=float)
        self.theta_ = physical_projection(solution, n, self._nonnegative())
        self._report_projection(solution, n, status)
        self.solver_status_ = status
        self.converged_ = status == "optimal"
        self.lmi_min_eig_ = link_lmi_margins(self.theta_, n)
        beta = self.base.K @ self.theta_
        s2 = float(np.sum(ne.residual_ss(beta) / var)) / self._dof(ne)
        self.sigma2_ = var
        try:
            _, inv, cond = self._solve(a, rhs)
            notes = list(self.warnings_)
        except IllConditionedError as exc:  # --max-condition inf: the constraints and the prior give an estimate
            inv, cond = np.full((ne.b, ne.b), np.nan), float("inf")
            notes = [f"unconstrained problem ill-conditioned, no standard deviations; the estimate rests on the "
                     f"prior in the directions the data do not determine: {exc}"]
        self.warnings_ = (notes + ([f"solver status {status}"] if status != "optimal" else []) + self._moved
                          + prior_note)
        return self._finish(ne, beta, s2 * inv, cond)

    def _solve_sdp(self, g: np.ndarray, c: np.ndarray, norm: float) -> tuple[np.ndarray | None, str, int | None]:
        """(theta or None, solver status, iterations) of the program of the module docstring:
        data term ||g theta - c||^2 / norm (~1 at the noise level) and the prior's term."""
        import cvxpy as cp

        theta = cp.Variable(self.base.K.shape[1])
        scale = self._parameter_scale()
        objective = cp.sum_squares(g @ theta - c) / norm
        objective += self.regularization * cp.sum_squares(cp.multiply(1.0 / scale, theta - self.theta_prior))
        problem = cp.Problem(cp.Minimize(objective), self._constraints(theta))
        status = self._solve_problem(problem, cp)
        return theta.value, status, getattr(problem.solver_stats, "num_iters", None)

    def constraints(self, theta) -> list:
        """The constraints of the program (module docstring) on a cvxpy variable theta (p,), for
        programs with unknowns of their own beside theta (``drives.gains_pc``)."""
        return self._constraints(theta)

    def parameter_scale(self) -> np.ndarray:
        """(p,) the scale of each parameter in the prior's regularization (``_parameter_scale``)."""
        return self._parameter_scale()

    def solve_program(self, problem) -> str:
        """Solve a cvxpy problem with this estimator's solver (SCS when it fails); its status."""
        import cvxpy as cp

        return self._solve_problem(problem, cp)

    def _constraints(self, theta) -> list:
        """J(theta_i) >= 0 for every link (Wensing et al. 2017, one LMI per link, scaled by the
        prior mass), the sign constraints and the prior bound (module docstring)."""
        import cvxpy as cp

        vec_basis = pseudo_inertia_basis().reshape(10, 16).T  # vec J(theta_i) = P theta_i
        constraints = []
        for i in range(self.robot.n_bodies):
            mass_scale = max(abs(self.theta_prior[10 * i]), 1e-3)
            constraints.append(cp.reshape(vec_basis @ theta[10 * i:10 * i + 10], (4, 4), order="C") / mass_scale >> 0)
        constraints += self._sign_constraints(theta)
        if self.bound is not None:
            rigid = slice(0, 10 * self.robot.n_bodies)
            constraints.append(cp.abs(theta[rigid] - self.theta_prior[rigid])
                               <= self.bound * np.abs(self.theta_prior[rigid]) + 1e-12)
        return constraints

    def _report_projection(self, solution: np.ndarray, n: int, status: str) -> None:
        """projection_ (diagnostics) and the warning when the step onto the constraints is beyond rounding."""
        change = np.abs(self.theta_ - solution) / self._parameter_scale()
        links = [self.robot.links[i].name for i in range(n) if np.any(change[10 * i:10 * i + 10] > 0)]
        largest = float(change.max()) if change.size else 0.0
        self.projection_ = {"links": links, "largest_change": largest}
        self._moved = []
        if largest > 1e-9:
            where = f"link(s) {', '.join(links)}" if links else "friction or rotor inertia below 0"
            self._moved = [f"the SDP solution (solver status {status}) missed the physical-consistency constraints "
                           f"by up to {largest:.2g} of a parameter's scale ({where}): projected onto them"]
        bad = [(self.robot.links[i].name, consistency_problems(self.theta_[10 * i:10 * i + 10])) for i in range(n)]
        bad = [(name, why) for name, why in bad if why]
        if bad:  # cannot happen after the projection unless the numbers are absurd: say so, do not return them
            raise IllConditionedError(f"physically consistent identification: link '{bad[0][0]}' is not physical "
                                      f"after the projection onto the constraints ({bad[0][1][0]})")

    def diagnostics(self) -> dict:
        """``Estimator.diagnostics`` plus "physical_projection": the links whose solver estimate was
        moved onto the constraints and the largest change relative to a parameter's scale; and
        "prior_projection" when description links were projected before serving as the prior
        (``robot.validation.projected_links``)."""
        out = super().diagnostics()
        out["physical_projection"] = getattr(self, "projection_", None)
        prior = projected_links(self.robot)
        if prior:  # description links moved onto the physical set before serving as the prior (Robot.physical)
            out["prior_projection"] = prior
        return out

    def _solve_problem(self, problem, cp) -> str:
        for solver in (self.solver, "SCS"):
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    problem.solve(solver=solver)
                self._solver_messages = [str(w.message) for w in caught]
                return problem.status
            except (cp.error.SolverError, ValueError):
                continue
        return "solver_error"

    def _parameter_scale(self) -> np.ndarray:
        """Per-parameter scale of the regularization: max(|prior_k|, mean |prior| of its group)."""
        n = self.robot.n_bodies
        prior = np.abs(self.theta_prior)
        scale = np.empty_like(prior)
        rigid = prior[:10 * n].reshape(n, 10)
        for cols in ([0], [1, 2, 3], [4, 5, 6, 7, 8, 9]):
            group = max(float(rigid[:, cols].mean()), 1e-6)
            scale[:10 * n].reshape(n, 10)[:, cols] = np.maximum(rigid[:, cols], group)
        rest = slice(10 * n, None)
        scale[rest] = np.maximum(prior[rest], max(float(prior[rest].mean()) if prior[rest].size else 0.0, 1e-3))
        return scale

    def _nonnegative(self) -> list[int]:
        """Indices of I_a and the Coulomb and viscous coefficients (all four of the asymmetric model,
        Coulomb, static and viscous of the Stribeck model)."""
        sl = parameter_slices(self.robot, self.options)
        idx = []
        k = len(FRICTION_MODELS[self.options.friction])
        if k:
            nonneg = {"coulomb-viscous": [0, 1], "polynomial": [0, 1], "asymmetric": [0, 1, 2, 3],
                      "stribeck": [0, 1, 2], "load-dependent": [0, 1, 2]}
            idx += [sl["friction"].start + j * k + c for j in range(self.robot.n) for c in nonneg[self.options.friction]]
        if self.options.rotor_inertia:
            idx += list(range(sl["rotor_inertia"].start, sl["rotor_inertia"].stop))
        return idx

    def _sign_constraints(self, theta) -> list:
        """I_a >= 0; Coulomb and viscous coefficients >= 0 (all four of the asymmetric model)."""
        idx = self._nonnegative()
        return [theta[idx] >= 0] if idx else []


def consistency_gap(robot, options: ModelOptions, base, beta: np.ndarray, solver: str = "CLARABEL") -> float:
    """How far base parameters beta are from any physical model: min ||D (K theta - beta)|| / ||D beta||
    over theta with every pseudo-inertia J(theta_i) >= 0 and I_a, Coulomb, viscous >= 0
    (D = 1 / max(|beta|, 1e-6 max|beta|)). Zero (to solver accuracy) when beta is physical."""
    import cvxpy as cp

    beta = np.asarray(beta, dtype=float)
    d = 1.0 / np.maximum(np.abs(beta), 1e-6 * np.abs(beta).max())
    helper = PhysicallyConsistent(robot=robot, options=options, base=base)
    theta = cp.Variable(base.K.shape[1])
    basis = pseudo_inertia_basis()
    constraints = [sum(theta[10 * i + k] * basis[k] for k in range(10)) >> 0 for i in range(robot.n_bodies)]
    constraints += helper._sign_constraints(theta)
    problem = cp.Problem(cp.Minimize(cp.norm(cp.multiply(d, base.K @ theta - beta))), constraints)
    helper._solve_problem(problem, cp)
    return float(problem.value) / float(np.linalg.norm(d * beta))
