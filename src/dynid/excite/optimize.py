"""Optimization of the coefficients of a periodic excitation trajectory (thesis 4.2.3).

Variables: the coefficients C (p, n) and offsets q0 (n,) of a ``PeriodicTrajectory``
(Fourier eq. 4.19 or harmonic eq. 4.1). Position, velocity and acceleration are linear in
(C, q0), so the limits (eq. 4.2-4.4) at dense instants are linear inequality constraints,
and zero velocity and acceleration at both ends (t = 0 and t = period) are linear equalities.

1. Global search (differential evolution; the thesis used a genetic algorithm), in a box
   z in [-1, 1]^d that maps onto feasible trajectories by construction (``Problem.project``):
   z gives a shape (in the null space of the end conditions when they are asked for), each
   joint's shape is scaled to touch its tightest limit (range, speed or acceleration, at
   the dense instants) and the offset slides the motion inside the remaining range.
2. Local polish (SLSQP, ``excite.polish``) of (C, q0) with the linear constraints written
   explicitly, gradients by batched forward differences; for ``cond`` on the epigraph form
   over the extreme singular values.
3. A fixed number of starts with seeds seed, seed + 1, ...; the best result is checked with
   guaranteed bounds (``limits.periodic_ratio_bounds``) and shrunk towards the middle of the
   range if the dense-sample constraints let it slightly overshoot.

Stopping rules are counts, never the clock: ``generations`` of differential evolution with
``popsize`` members per variable, at most ``polish_iterations`` SLSQP iterations, ``starts``
starts. The same seed and settings therefore give the same coefficients on any machine load
(BLAS runs on one thread, ``identify.threads``). ``max_seconds`` is only a safety net: when the
wall time passes it, the running stage stops early, later starts are skipped, and the result
says so (``OptimizeResult.time_limited``, ``optimization.time_limited`` in the metadata); such
a result depends on the machine and is not reproducible.

Optional torque limits use a prior model (the robot description's inertial parameters plus
its rotor inertias) as a penalty in the global search and as a constraint in the polish,
imposed at the polish instants (``polish_rate``); ``evaluate`` reports the 100 Hz ratio.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.optimize

from dynid.errors import DataError
from dynid.excite.criteria import CRITERIA, ExcitationModel, batch_values
from dynid.excite.deadline import TimeLimitReached, time_limit
from dynid.excite.limits import KinematicLimits
from dynid.excite.periodic import FAMILIES, PeriodicTrajectory, periodic_from_family
from dynid.excite.polish import make_feasible, polish
from dynid.identify.threads import single_blas_thread


@dataclass(frozen=True)
class OptimizeSettings:
    """family, n_harmonics, w_f [rad/s]: the trajectory (multipliers: integer harmonics other
    than 1..N, e.g. (1, 2, 4) of eq. 4.13); criterion: cond | logdet | weighted;
    limit_fraction: share of each limit the search may use; search_rate [Hz]: criterion
    samples during the search (the reported cond uses 100 Hz); constraint_samples: instants
    per period where the limits are imposed; zero_ends: dq = ddq = 0 at t = 0 and t = period;
    torque_limits: also keep |tau| <= torque_fraction tau_max with the prior model.

    Stopping rules (deterministic): starts: number of starts (seeds seed, seed + 1, ...);
    generations: differential-evolution generations per start, popsize: its population per
    variable; polish_iterations: at most this many SLSQP iterations per start (0: no polish).
    max_seconds: wall-time safety net for the whole run (None: none); a run it cuts short is
    flagged ``time_limited`` and is not reproducible. The defaults give cond <= 0.45 x the
    thesis' Table 4.1 trajectory on er3a (N = 5, w_f = 2 pi 0.1) in about 30 s on one core
    (docs/excitation.md)."""

    family: str = "fourier"
    n_harmonics: int = 5
    multipliers: tuple | None = None
    w_f: float = 2.0 * math.pi * 0.1
    criterion: str = "cond"
    weight: float = 0.5
    limit_fraction: float = 0.99
    search_rate: float = 10.0
    constraint_samples: int = 256
    zero_ends: bool = False
    torque_limits: bool = False
    torque_fraction: float = 1.0
    starts: int = 1
    generations: int = 20
    popsize: int = 2
    polish_iterations: int = 120
    max_seconds: float | None = 600.0
    polish_rate: float = 20.0
    seed: int = 0

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise DataError(f"unknown trajectory family '{self.family}', expected one of {sorted(FAMILIES)}")
        if self.criterion not in CRITERIA:
            raise DataError(f"unknown criterion '{self.criterion}', expected one of {CRITERIA}")
        if not 0 < self.limit_fraction <= 1:
            raise DataError(f"limit fraction must be in (0, 1], got {self.limit_fraction}")
        if self.n_harmonics < 1 or not self.w_f > 0:
            raise DataError("need n_harmonics >= 1 and w_f > 0")
        if self.starts < 1 or self.generations < 0 or self.polish_iterations < 0 or self.popsize < 1:
            raise DataError(f"need starts >= 1, popsize >= 1, generations >= 0 and polish iterations >= 0, "
                            f"got {self.starts}, {self.popsize}, {self.generations}, {self.polish_iterations}")
        if self.max_seconds is not None and not self.max_seconds > 0:
            raise DataError(f"the wall-time safety net must be positive (or None), got {self.max_seconds}")


@dataclass
class OptimizeResult:
    trajectory: PeriodicTrajectory
    value: float  # criterion at search_rate samples (log cond for cond)
    # per start: dict(seed, global, polished, generations, polish_iterations, seconds, time_limited)
    history: list = field(default_factory=list)
    seconds: float = 0.0
    time_limited: bool = False  # max_seconds cut the run short: the result is not reproducible


def _instants(period: float, count: int) -> np.ndarray:
    """``count`` equally spaced instants over one period, [0, period)."""
    return np.arange(count) * (period / count)


class Problem:
    """Precomputed bases, limits and the feasible parametrization of one optimization.

    geometry: optional ``excite.geometry.GeometricConstraints`` (clearance, workspace) and
    start: the posture (n,) they hold at (default: the middle of the ranges); candidates of
    the global search are shrunk towards it until they meet them (``geometry.shrink``)."""

    def __init__(self, model: ExcitationModel, settings: OptimizeSettings, geometry=None, start=None):
        self.model, self.settings = model, settings
        self.geometry = geometry if geometry is not None and geometry.size else None
        robot = model.robot
        self.n = robot.n
        self.limits = KinematicLimits.of(robot)
        names = [j.name for j in robot.joints]
        self.limits.require_finite(robot.name, joint_names=names)
        if settings.torque_limits:
            self.limits.require_finite(robot.name, ("tau_max",), names)
        self.template = periodic_from_family(settings.family, settings.w_f, settings.n_harmonics, self.n,
                                             settings.multipliers)
        self.p = self.template.coefficients.shape[0]
        period = self.template.period
        self.t_search = _instants(period, max(8, int(round(period * settings.search_rate))))
        self.t_polish = _instants(period, max(8, int(round(period * settings.polish_rate))))
        self.t_dense = _instants(period, settings.constraint_samples)
        self.search_basis = [self.template.basis(self.t_search, k) for k in range(3)]
        self.polish_basis = [self.template.basis(self.t_polish, k) for k in range(3)]
        self.dense_basis = [self.template.basis(self.t_dense, k) for k in range(3)]
        # end conditions dq(0) = ddq(0) = 0 (periodic: also at t = period) as E c = 0
        if settings.zero_ends:
            e = np.vstack([self.template.basis(np.zeros(1), 1), self.template.basis(np.zeros(1), 2)])
            e = e[np.linalg.norm(e, axis=1) > 1e-12]
            self.shape_basis = scipy.linalg.null_space(e)  # (p, p - rank E)
        else:
            self.shape_basis = np.eye(self.p)
        self.d_shape = self.shape_basis.shape[1]
        if self.d_shape == 0:
            raise DataError("no trajectory shape is left after imposing zero end velocity and "
                            "acceleration; use more harmonics")
        self.dim = self.d_shape * self.n + self.n
        f = settings.limit_fraction
        self.q_lo = self.limits.center - f * self.limits.half_range
        self.q_hi = self.limits.center + f * self.limits.half_range
        self.dq_max = f * self.limits.dq_max
        self.ddq_max = f * self.limits.ddq_max
        if settings.torque_limits:
            self.tau_max = settings.torque_fraction * self.limits.tau_max
        self.start = self.limits.center if start is None else np.asarray(start, dtype=float)
        outside = np.flatnonzero((self.start < self.q_lo) | (self.start > self.q_hi))
        if self.start.shape != (self.n,) or outside.size:
            raise DataError(f"start posture: expected {self.n} positions inside the ranges used "
                            f"(limit fraction {f:g}); outside for joint(s) {', '.join(str(i + 1) for i in outside)}")

    # -- feasible parametrization for the global search ----------------------------------
    def project(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """z (S, dim) in [-1, 1] -> q0 (S, n), C (S, p, n) meeting the limits at dense instants."""
        z = np.atleast_2d(z)
        shape = z[:, : self.d_shape * self.n].reshape(-1, self.d_shape, self.n)
        u = z[:, self.d_shape * self.n:]
        c_raw = np.einsum("pd,sdn->spn", self.shape_basis, shape)
        bq, bv, ba = self.dense_basis
        fq = np.einsum("mp,spn->smn", bq, c_raw)
        hi, lo = fq.max(axis=1), fq.min(axis=1)
        need = np.stack([(hi - lo) / (self.q_hi - self.q_lo),
                         np.abs(np.einsum("mp,spn->smn", bv, c_raw)).max(axis=1) / self.dq_max,
                         np.abs(np.einsum("mp,spn->smn", ba, c_raw)).max(axis=1) / self.ddq_max])
        worst = need.max(axis=0)  # (S, n)
        scale = np.where(worst > 1e-12, 1.0 / np.maximum(worst, 1e-12), 0.0)
        c = c_raw * scale[:, None, :]
        hi, lo = hi * scale, lo * scale
        middle = 0.5 * (self.q_lo + self.q_hi)
        slack = np.maximum(0.5 * (self.q_hi - self.q_lo) - 0.5 * (hi - lo), 0.0)
        q0 = middle - 0.5 * (hi + lo) + u * slack
        if self.geometry is not None:
            from dynid.excite.geometry.shrink import shrink_candidates

            q0, c, _ = shrink_candidates(self.geometry, self.search_basis[0], self.start, q0, c)
        return q0, c

    def samples(self, q0: np.ndarray, c: np.ndarray, polish: bool = False):
        """(S, M, n) q, dq, ddq at the search (or polish) instants."""
        bq, bv, ba = self.polish_basis if polish else self.search_basis
        q = np.einsum("mp,spn->smn", bq, c) + q0[:, None, :]
        return q, np.einsum("mp,spn->smn", bv, c), np.einsum("mp,spn->smn", ba, c)

    def torque_ratios(self, q, dq, ddq) -> np.ndarray:
        """(S, n) largest |tau| / tau_max of the prior model over the search instants."""
        from dynid.excite.prior import prior_torques

        s_count, m, n = q.shape
        tau = prior_torques(self.model.robot, q.reshape(-1, n), dq.reshape(-1, n), ddq.reshape(-1, n))
        return np.abs(tau.reshape(s_count, m, n)).max(axis=1) / self.tau_max

    def values(self, q0: np.ndarray, c: np.ndarray) -> np.ndarray:
        """(S,) objective; with torque limits, plus a penalty 10 (ratio - 1) when exceeded."""
        q, dq, ddq = self.samples(q0, c)
        out = batch_values(self.settings.criterion, self.model, q, dq, ddq, self.settings.weight)
        if self.settings.torque_limits:
            excess = np.maximum(self.torque_ratios(q, dq, ddq).max(axis=1) - 1.0, 0.0)
            out = out + 10.0 * excess
        return out

    # -- explicit linear constraints for the polish -------------------------------------
    def pack(self, q0: np.ndarray, c: np.ndarray) -> np.ndarray:
        return np.concatenate([np.asarray(c).ravel(), np.asarray(q0).ravel()])

    def unpack(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.atleast_2d(x)
        c = x[:, : self.p * self.n].reshape(-1, self.p, self.n)
        return x[:, self.p * self.n:], c

    def linear_constraints(self) -> tuple[np.ndarray, np.ndarray]:
        """A x <= ub for the limits at the dense instants; x = (C row-major, q0)."""
        bq, bv, ba = self.dense_basis
        m, p, n = bq.shape[0], self.p, self.n
        rows, ubs = [], []
        for i in range(n):
            cols = np.arange(p) * n + i
            for basis, upper, lower, with_q0 in ((bq, self.q_hi[i], -self.q_lo[i], True),
                                                 (bv, self.dq_max[i], self.dq_max[i], False),
                                                 (ba, self.ddq_max[i], self.ddq_max[i], False)):
                block = np.zeros((m, p * n + n))
                block[:, cols] = basis
                if with_q0:
                    block[:, p * n + i] = 1.0
                rows += [block, -block]
                ubs += [np.full(m, upper), np.full(m, lower)]
        return np.vstack(rows), np.concatenate(ubs)

    def equality_constraints(self) -> np.ndarray | None:
        """E x = 0 for zero end velocity and acceleration (None when not asked)."""
        if not self.settings.zero_ends:
            return None
        e = np.vstack([self.template.basis(np.zeros(1), 1), self.template.basis(np.zeros(1), 2)])
        rows = []
        for i in range(self.n):
            for r in e:
                row = np.zeros(self.p * self.n + self.n)
                row[np.arange(self.p) * self.n + i] = r
                rows.append(row)
        return np.array(rows)

    def trajectory(self, q0: np.ndarray, c: np.ndarray, **metadata) -> PeriodicTrajectory:
        return self.template.with_coefficients(np.asarray(q0).ravel(), np.asarray(c).reshape(self.p, self.n),
                                               **metadata)


def optimize_excitation(model: ExcitationModel, settings: OptimizeSettings = OptimizeSettings(),
                        progress=None, geometry=None, start=None, deadline: float | None = None) -> OptimizeResult:
    """``settings.starts`` x (differential evolution for ``generations`` + SLSQP polish).

    progress: optional callable(fraction_of_work_done, best_value, start_index) for a UI; the
    fraction counts generations and polish iterations, not time. geometry, start: optional
    clearance/workspace constraints and the posture they hold at (``Problem``); the result
    then meets them with the guaranteed bound between samples (``geometry.shrink``). deadline:
    ``time.perf_counter`` value the ``max_seconds`` safety net counts to (default: max_seconds
    from now; the command line counts from its own start, geometry setup included).
    """
    with single_blas_thread():
        return _optimize(model, settings, progress, geometry, start, deadline)


# instants per period of the final guaranteed clearance check (and of ``evaluate``)
GEOMETRY_SAMPLES = 10_000

# share of a start's work taken by the global search, for the progress fraction only
# (measured on er3a with the defaults: about a fifth of a start's time)
_GLOBAL_SHARE = 0.2


def _optimize(model: ExcitationModel, settings: OptimizeSettings, progress, geometry, start,
              deadline: float | None = None) -> OptimizeResult:
    start_time = time.perf_counter()
    if deadline is None:
        deadline = math.inf if settings.max_seconds is None else start_time + settings.max_seconds
    problem = Problem(model, settings, geometry, start)
    best_value, best_q0, best_c, history = math.inf, None, None, []
    time_limited = False

    def fraction(start, global_done, polish_done):
        within = _GLOBAL_SHARE * global_done + (1.0 - _GLOBAL_SHARE) * polish_done
        return (start + within) / settings.starts

    for start in range(settings.starts):
        if start > 0 and time.perf_counter() > deadline:
            time_limited = True  # the safety net skips the remaining starts
            break
        seed = settings.seed + start
        t0 = time.perf_counter()
        state = {"generation": 0, "cut": False}

        def report(intermediate_result):  # called within this start (late binding is fine)
            state["generation"] += 1
            if progress is not None:
                progress(fraction(start, state["generation"] / max(1, settings.generations), 0.0),
                         min(best_value, float(intermediate_result.fun)), start)
            if state["generation"] < settings.generations and time.perf_counter() > deadline:
                state["cut"] = True
                raise StopIteration

        def func(zt):  # scipy passes (dim, S) when vectorized
            return problem.values(*problem.project(zt.T))

        try:
            with time_limit(deadline):
                de = scipy.optimize.differential_evolution(
                    func, [(-1.0, 1.0)] * problem.dim, vectorized=True, updating="deferred",
                    popsize=settings.popsize, maxiter=settings.generations, tol=0.0, atol=0.0, polish=False,
                    init="sobol", rng=np.random.default_rng(seed), callback=report)
        except TimeLimitReached:  # inside a generation: this start has no point
            time_limited = True
            if best_q0 is None:
                raise DataError(f"the wall-time safety net (--max-seconds {settings.max_seconds:g}) ran out within "
                                "the first generation of the search: no trajectory. Give more time, fewer "
                                "--popsize or --harmonics, or a simpler obstacle scene") from None
            break
        q0, c = problem.project(de.x[None, :])
        global_value = float(problem.values(q0, c)[0])

        def polish_report(iteration, value):
            if progress is not None:
                progress(fraction(start, 1.0, iteration / max(1, settings.polish_iterations)),
                         min(best_value, value), start)

        try:
            with time_limit(deadline):
                q0p, cp, polished_value, info = polish(problem, q0[0], c[0], deadline, polish_report)
        except TimeLimitReached:  # inside a polish iteration: the global search's point
            q0p, cp, polished_value, info = q0[0], c[0], global_value, {"iterations": 0, "time_limited": True}
        cut = state["cut"] or info["time_limited"]
        time_limited = time_limited or cut
        history.append({"seed": seed, "global": global_value, "polished": polished_value,
                        "generations": int(de.nit), "polish_iterations": info["iterations"],
                        "seconds": time.perf_counter() - t0, "time_limited": cut})
        if polished_value < best_value:
            best_value, best_q0, best_c = polished_value, q0p, cp
        if progress is not None:
            progress(fraction(start + 1, 0.0, 0.0), best_value, start)
    trajectory = make_feasible(problem.trajectory(best_q0, best_c), problem.limits)
    shrink = None
    if problem.geometry is not None:
        from dynid.excite.geometry.shrink import shrink_guaranteed

        trajectory, shrink, _ = shrink_guaranteed(trajectory, problem.geometry, problem.limits, problem.start,
                                                  GEOMETRY_SAMPLES)
    meta = {"criterion": settings.criterion, "seed": settings.seed, "starts": settings.starts,
            "starts_run": len(history), "generations": settings.generations, "popsize": settings.popsize,
            "polish_iterations": settings.polish_iterations, "max_seconds": settings.max_seconds,
            "time_limited": time_limited, "reproducible": not time_limited,
            "zero_ends": settings.zero_ends, "torque_limits": settings.torque_limits,
            "limit_fraction": settings.limit_fraction}
    if problem.geometry is not None:
        meta["geometry_shrink"] = shrink  # 1: the polished trajectory met the constraints as it was
        meta["start_posture"] = problem.start.tolist()
    trajectory = trajectory.with_coefficients(trajectory.q0, trajectory.coefficients, optimization=meta)
    return OptimizeResult(trajectory, best_value, history, time.perf_counter() - start_time, time_limited)
