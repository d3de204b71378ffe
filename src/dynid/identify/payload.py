"""Payload identification: the ten inertial parameters of a body fixed to the flange.

A load rigidly fixed to the last link adds its standard parameters phi (10,) (thesis eq.
3.14 order, expressed in the link frame of the last actuated joint, like the link's own) to
that link's. The joint torques are linear in them (the last link's columns Y_L of the rigid-body
regressor, ``dynid.regressor``):

    tau_loaded = Y_b beta + Y_L phi + e                                               (P1)

- one log (the robot's model trusted): beta from a result.json, so r = tau - Y_b beta = Y_L phi
  + e is a ten-parameter regression on the loaded log;
- two logs (the robot's model not trusted): beta and phi together from the log without the
  load (rows [Y_b 0]) and the log with it (rows [Y_b Y_L]), so errors of the robot's model do
  not leak into the payload.

Least squares is weighted per joint (Gautier's two-step WLS, as ``estimators.WLS``); the
standard deviations are Khalil-Gautier's, s^2 (W^T S W)^-1 on the determined directions;
in one-log mode the robot model's own uncertainty (its covariance C_beta from result.json) adds

    C_phi += A^+ M C_beta M^T A^+,   M = sum_j w_j sum_i Y_L,ij^T Y_b,ij               (P3)

since r = tau - Y_b beta_hat moves with beta_hat (A = W^T S W of the payload columns).
What the motion cannot determine is found from the normal matrix: a payload parameter k is
*determined* when the unit vector e_k lies in the row space of the (column-normalized)
regressor, i.e. every null-space direction has a negligible k-th component; an undetermined
one is reported as null with the reason, never guessed.

The white-noise covariance is a floor, not the answer: the torque is low-passed with the
regressor (its noise correlates over about fs / (2 fc) samples), drives ripple with the
position, a model misses what follows the motion. The reported covariance is the jackknife
over clusters of the motion's states (``identify.sandwich`` S1: an error that is a function of
the state falls in one cluster every time the motion passes there), never below
Khalil-Gautier's, scaled up when the payload fitted to the first and to the second half of the
logs differ beyond it (S2); result "uncertainty" holds the white-noise std, the number of
clusters, the halves' check. A common error of the drive gains (torques read from currents)
scales the whole load and leaves no trace in the residuals: with its relative standard
deviation u (``gain_std``, ``--gain-std``; by default the largest relative std of the gains
file of ``dynid drives gains`` the currents were read through, ``drive_gain_std``)

    C_phi += u^2 phi phi^T                                                              (P4)

and without it a note says that the std do not hold it (docs/identification.md: a 13 % low
mass with a std 45 times smaller is what gains 13 % low give).

Physical consistency (Wensing, Kim & Slotine 2017, as ``physical.py``): the estimate solves

    min (x - x_ls)^T A (x - x_ls) / RSS_ls   s.t.   J(phi) >= 0,  m >= 0                (P2)

(J the 4x4 pseudo-inertia, x = phi or [beta; phi]); a tiny regularization toward zero picks
the undetermined directions. Mass, centre of mass c = h / m and the inertia about it,
I_c = I_O - m (c.c 1 - c c^T), follow; their standard deviations by first-order propagation
(numerical Jacobian of the map phi -> (m, c, I_c) times the covariance of phi).

One-log mode trusts the robot's model; a model that does not explain the loaded log (friction
that changed since, an effect it lacks) biases the load beyond any standard deviation (the
demo: a model averaging cold and warm friction put the centre of mass 57 mm off, ~18 std; its
relative residual on the loaded log was 1.9-2.3 times its own on joints 1, 2, 4 and 5, against
at most 0.72 times in tests/test_payload.py's accurate case). So
the loaded log's relative residual per joint (RMS residual / RMS torque), after the payload
fit, is compared with the robot's own fit's (result.json ``fit.relative_rmsd``; relative,
because sensor noise grows with the torque the load adds): more than ``MODEL_MISFIT`` times
it on a joint warns and recommends ``--unloaded`` (the same motion without the load).

The inertia of a small load is often below what a log can see (a 100 Hz log, slow wrist
motion): when its standard deviation exceeds half its largest principal moment, the inertia is
reported as undetermined (null, with a note) instead of the physically consistent value the
constraint alone chose at the edge of the physical set (smallest eigenvalue ~1e-8); a
determined inertia whose least-squares value is not physical beyond three standard deviations
warns (the model misses an effect the inertia absorbs).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from dynid.data.preprocess import edge_samples, sample_rate
from dynid.data.segments import segment_edge_mask
from dynid.errors import DataError, DynidWarning, IllConditionedError
from dynid.identify.estimators import joint_noise_variances
from dynid.identify.model import identification_regressor
from dynid.identify.normal_equations import NormalEquations, spectrum
from dynid.identify.physical import least_squares_form, pseudo_inertia_basis, pseudo_solve
from dynid.identify.pipeline import prepared_sources, row_mask
from dynid.identify.payload_uncertainty import derived_jacobian, honest_covariance, inertia_determined
from dynid.identify.sandwich import StateClusters
from dynid.robot.inertia import PARAMETER_NAMES, inertia_six, pseudo_inertia, to_mass_com_inertia

ROWS = 8192  # samples per regressor evaluation
MIN_WRIST_RANGE = 0.1  # rad: a wrist joint moving less than this is "not moving"
DETERMINED_TOL = 1e-6  # null-space component below which a parameter counts as determined
MODEL_MISFIT = 1.5  # one-log mode: loaded-log residual / the robot fit's own residual that warns


@dataclass
class PayloadEstimate:
    """phi (10,) physically consistent estimate; phi_ls (10,) least squares; std (10,) (NaN where
    undetermined); determined (10,) bool; cov (10, 10); rmsd per joint of the loaded log; notes;
    uncertainty: how the covariance was made (white-noise std, blocks, halves, gain_std)."""

    phi: np.ndarray
    phi_ls: np.ndarray
    std: np.ndarray
    determined: np.ndarray
    cov: np.ndarray
    rmsd: np.ndarray
    lmi_min_eigenvalue: float
    mode: str
    samples: int
    notes: list[str] = field(default_factory=list)
    uncertainty: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """Mass, CoM, inertia about the CoM with standard deviations (None where not determined)."""
        mass, com, ic = to_mass_com_inertia(self.phi)
        jac = derived_jacobian(self.phi)
        var = np.einsum("ij,jk,ik->i", jac, np.nan_to_num(self.cov), jac)
        needs = np.abs(jac) > 1e-12  # which phi each derived figure depends on
        ok = np.array([bool(np.all(self.determined[needs[i]])) for i in range(jac.shape[0])])
        std = np.where(ok, np.sqrt(np.maximum(var, 0.0)), np.nan)
        values = np.concatenate([[mass], com, inertia_six(ic)])
        figure = lambda k: {"value": float(values[k]) if ok[k] else None,  # noqa: E731
                            "std": float(std[k]) if ok[k] else None}
        return {"mass": figure(0), "com": [figure(k) for k in (1, 2, 3)],
                "inertia_about_com": {nm: figure(4 + i) for i, nm in enumerate(("Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz"))}}

    def to_dict(self) -> dict:
        params = [{"name": nm, "value": float(v) if d else None, "std": float(s) if d else None,
                   "determined": bool(d), "consistent_value": float(p)}
                  for nm, v, s, d, p in zip(PARAMETER_NAMES, self.phi_ls, self.std, self.determined, self.phi)]
        undetermined = [nm for nm, d in zip(PARAMETER_NAMES, self.determined) if not d]
        return {"format": "dynid-payload", "mode": self.mode, "samples": self.samples, **self.summary(),
                "parameters": params, "undetermined": undetermined,
                "lmi_min_eigenvalue": self.lmi_min_eigenvalue, "uncertainty": dict(self.uncertainty),
                "fit": {"rmsd": [float(v) for v in self.rmsd]}, "notes": list(self.notes)}


def flange_body(robot) -> int:
    """Tree index of the body the flange belongs to: the last actuated joint's."""
    actuated = getattr(robot, "actuated", None)
    return int(actuated[-1]) if actuated is not None else robot.n - 1


def check_wrist_motion(robot, ready, source: str) -> None:
    """A payload log needs motion of the wrist (the last three actuated joints, or the last
    one of a shorter arm): without it the load's inertia and centre of mass stay hidden."""
    wrist = list(range(max(robot.n - 3, 0), robot.n)) if robot.n >= 4 else [robot.n - 1]
    span = np.ptp(ready.q[:, wrist], axis=0)
    if np.all(span < MIN_WRIST_RANGE):
        raise DataError(f"{source}: the wrist joint(s) {', '.join(str(j + 1) for j in wrist)} barely move "
                        f"(ranges {', '.join(f'{s:.3g}' for s in span)} rad, at least {MIN_WRIST_RANGE} rad "
                        "needed on one of them): a payload log needs wrist motion to show the load's centre "
                        "of mass and inertia")


def _accumulate(robot, readies, options, base, prep, beta, loaded: bool, ne: NormalEquations, two_logs: bool,
                cross: np.ndarray | None = None, tau_ss: np.ndarray | None = None,
                blocks: dict | None = None, clusters: StateClusters | None = None) -> int:
    """Add the rows of prepared logs to ``ne`` (module docstring, P1); returns the sample count.
    cross (n, 10, b): one-log mode, sum_i Y_L,ij^T Y_b,ij per joint j (for the robot model's share
    of the payload's covariance, P3); tau_ss (n,): the measured torques' sum of squares is added;
    blocks: {(cluster, half): normal equations} of the rows in each cluster of the motion's
    states (``clusters``) and half of its log (0 or 1), for the standard deviations the
    residuals support (``identify.sandwich``); their sum is what ``ne`` gets."""
    body = flange_body(robot)
    count = 0
    for ready in readies:
        if ready.tau is None:
            raise DataError(f"{ready.source}: no torques (tau1..taun) or currents (i1..in) to identify from")
        mask = row_mask(ready.dq, segment_edge_mask(ready, edge_samples(prep, sample_rate(ready.t))), prep)
        for s in range(0, len(ready), ROWS):
            sl = slice(s, s + ROWS)
            y = identification_regressor(robot, ready.q[sl], ready.dq[sl], ready.ddq[sl], options)
            yb = y[..., base.independent]
            yl = y[..., 10 * body:10 * body + 10] if loaded else np.zeros(yb.shape[:2] + (10,))
            m = np.ones(yb.shape[:2], dtype=bool) if mask is None else mask[sl]
            if tau_ss is not None:
                tau_ss += np.sum(ready.tau[sl] ** 2 * m, axis=0)
            if two_logs:
                w, tau = np.concatenate([yb, yl], axis=2), ready.tau[sl]
            else:
                w, tau = yl, ready.tau[sl] - yb @ beta
                if cross is not None:
                    cross += np.einsum("ijk,ijl->jkl", yl * m[..., None], yb)
            if blocks is None:
                ne.add(w, tau, m)
            else:
                half = (np.arange(sl.start, sl.start + len(tau)) * 2 >= len(ready)).astype(int)
                key = clusters.labels(np.concatenate([ready.q[sl], ready.dq[sl]], axis=1)) * 2 + half
                order = np.argsort(key, kind="stable")
                w, tau, m, key = w[order], tau[order], m[order], key[order]
                edges = np.flatnonzero(np.diff(key)) + 1
                for lo, hi in zip(np.r_[0, edges], np.r_[edges, len(key)]):  # loop over the clusters present
                    part = blocks.setdefault((int(key[lo]) // 2, int(key[lo]) % 2), NormalEquations(ne.n, ne.b))
                    part.add(w[lo:hi], tau[lo:hi], m[lo:hi])
            count += len(ready.t[sl])
    return count


def determined_parameters(a: np.ndarray, tail: int = 10) -> np.ndarray:
    """(tail,) True for the last ``tail`` unknowns that the normal matrix a determines."""
    diag = np.diag(a)
    null = spectrum(a).null_directions()  # the directions the data do not determine (normalized units)
    zero = diag <= 1e-20 * max(diag.max(), 1e-300)
    comp = np.sqrt(np.sum(null[-tail:] ** 2, axis=1)) if null.size else np.zeros(tail)
    return (comp < DETERMINED_TOL ** 0.5) & ~zero[-tail:]


def _refuse_shared_logs(loaded_paths, unloaded_paths) -> None:
    """A log cannot be both with and without the load (by name, another name or a link): the load's
    torques would cancel and its parameters come out as noise."""
    import os

    def identity(p):
        try:
            st = os.stat(p)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    loaded = {identity(p): p for p in loaded_paths if identity(p) is not None}
    for p in unloaded_paths:
        if identity(p) in loaded:
            raise DataError(f"payload: {p} is given both with the load (--data {loaded[identity(p)]}) and without it "
                            "(--unloaded); the two-log mode needs logs recorded with and without the payload")


def drive_gain_std(given: float | None, mapping, currents: bool) -> tuple[float, str | None]:
    """(u, where it came from) of P4: ``given`` (``--gain-std``) when not None; else, for
    torques read from currents through a gains file of ``dynid drives gains`` that carries each
    gain's relative std, the largest of them (a common error of the gains is not larger than the
    least certain gain's; for independent errors this is conservative); else 0 (None)."""
    if given is not None:
        return float(given), "--gain-std"
    if currents and mapping.current_gain_std:
        return float(max(mapping.current_gain_std)), "drive gains file"
    return 0.0, None


def identify_payload(robot, loaded_paths, options, base, prep, beta: np.ndarray | None = None,
                     unloaded_paths=None, mapping=None, nan: str = "drop",
                     beta_cov: np.ndarray | None = None,
                     robot_relative_rmsd: np.ndarray | None = None, gain_std: float | None = None,
                     currents: bool = False) -> PayloadEstimate:
    """The payload's parameters (module docstring) from the loaded log(s), with the robot's
    base parameters ``beta`` (one-log mode) or with the unloaded log(s) (two-log mode).
    robot_relative_rmsd (n,): relative residual of the robot's own fit (one-log mode: the misfit
    check of the module docstring); gain_std: relative standard deviation of the drive gains
    common to all joints (P4; None: the largest of the gains file's, ``mapping.current_gain_std``,
    when the currents are read through one, else 0); currents: the torques were read from
    currents through gains (then a note says that their error is not in the standard deviations
    unless gain_std)."""
    from dynid.data.columns import ColumnMapping

    mapping = mapping or ColumnMapping()
    gain_std, gain_source = drive_gain_std(gain_std, mapping, currents)
    two_logs = unloaded_paths is not None
    if not two_logs and beta is None:
        raise DataError("payload: give the robot's result.json (its base parameters) or a log without the load")
    if not (np.isfinite(gain_std) and gain_std >= 0):
        raise DataError(f"payload: the drive gains' relative standard deviation must be >= 0, got {gain_std}")
    if two_logs:
        _refuse_shared_logs(loaded_paths, unloaded_paths)
    loaded = prepared_sources(robot, loaded_paths, options, mapping, prep, nan)
    for ready in loaded:
        check_wrist_motion(robot, ready, ready.source)
    size = base.rank + 10 if two_logs else 10
    ne = NormalEquations(robot.n, size)
    cross = None if two_logs or beta_cov is None else np.zeros((robot.n, 10, base.rank))
    tau_ss = np.zeros(robot.n)
    unloaded = prepared_sources(robot, unloaded_paths, options, mapping, prep, nan) if two_logs else []
    clusters = StateClusters.fit([np.concatenate([r.q, r.dq], axis=1) for r in loaded + unloaded])
    blocks: dict = {}
    samples = _accumulate(robot, loaded, options, base, prep, beta, True, ne, two_logs, cross, tau_ss, blocks,
                          clusters)
    if two_logs:
        _accumulate(robot, unloaded, options, base, prep, None, False, ne, True, blocks=blocks, clusters=clusters)
    for part in blocks.values():
        ne.merge(part)
    a, rhs = ne.totals()
    determined = determined_parameters(a)
    if not determined[0]:
        raise IllConditionedError(f"{loaded_paths[0]}: the motion does not determine the payload's mass; "
                                  "the load must be lifted against gravity (shoulder or elbow motion)")
    x_ols = pseudo_solve(a, rhs)
    var = joint_noise_variances(ne, x_ols)  # Gautier's per-joint error variance, then weighted
    aw, rw = ne.totals(1.0 / var)
    x_ls = pseudo_solve(aw, rw)
    dof = max(int(ne.rows.sum()) - int(np.linalg.matrix_rank(aw)), 1)
    s2 = float(np.sum(ne.residual_ss(x_ls) / var)) / dof
    inv = np.linalg.pinv(aw, rcond=1e-12, hermitian=True)
    notes = []
    cov, uncertainty = honest_covariance(blocks, x_ls, var, inv, s2 * inv, size, determined, loaded_paths[0], notes)
    if cross is not None:  # P3: the robot model's error moves the payload too
        m = np.tensordot(1.0 / var, cross, axes=1)  # (10, b) = sum_j w_j sum_i Y_L^T Y_b
        cov = cov + inv @ m @ beta_cov @ m.T @ inv
    phi_ls = x_ls[size - 10:]
    if gain_std > 0:  # P4: a common error of the drive gains scales the whole load
        cov[size - 10:, size - 10:] += gain_std**2 * np.outer(phi_ls, phi_ls)
    uncertainty["gain_std"], uncertainty["gain_std_source"] = gain_std, gain_source
    x_pc, status = _consistent(aw, rw, x_ls, ne, var, size, determined.all())
    phi_pc = x_pc[size - 10:]
    payload_cov = cov[size - 10:, size - 10:]
    structural = determined.copy()  # what the motion leaves free; then what its noise hides
    determined = determined & inertia_determined(phi_ls, phi_pc, payload_cov, determined, loaded_paths[0], notes)
    std = np.sqrt(np.maximum(np.diag(payload_cov), 0.0))
    rmsd = np.sqrt(ne.residual_ss(x_pc) / np.maximum(ne.rows, 1))
    if status not in ("optimal", "least squares"):
        text = (f"{loaded_paths[0]}: the physically consistent payload fit stopped before its optimum (solver status "
                f"'{status}'): its values may be off by more than the standard deviations of the least-squares ones "
                "(parameters[].value)")
        notes.append(text)
        warnings.warn(DynidWarning(text), stacklevel=2)
    if not two_logs and robot_relative_rmsd is not None:
        relative = rmsd / np.sqrt(np.maximum(tau_ss / np.maximum(ne.rows, 1), 1e-300))
        ratio = relative / np.maximum(np.asarray(robot_relative_rmsd, dtype=float), 1e-12)
        j = int(np.argmax(ratio))
        if ratio[j] > MODEL_MISFIT:
            text = (f"{loaded_paths[0]}: the robot's model leaves {ratio[j]:.2g} times its own fit's relative residual "
                    f"on joint {j + 1} of the loaded log ({100 * relative[j]:.3g} % of the RMS torque against "
                    f"{100 * robot_relative_rmsd[j]:.3g} %): what it misses "
                    "(friction that changed, an effect it lacks) biases the payload beyond its standard deviations; "
                    "record the same motion without the load and give it with --unloaded")
            notes.append(text)
            warnings.warn(DynidWarning(text), stacklevel=2)
    if not structural.all():
        names = [nm for nm, d in zip(PARAMETER_NAMES, structural) if not d]
        notes.append(f"not determined by the motion: {', '.join(names)} (the log's motion leaves them free; the "
                     "URDF carries a physically consistent value for them, not an identified one)")
    if not two_logs and beta_cov is None:
        notes.append("standard deviations cover the loaded log's noise only, not the errors of the robot's model "
                     "(its result holds no covariance); --unloaded covers both")
    if currents and gain_source is None:
        notes.append("the torques come from currents through drive gains: the load's parameters scale with a common "
                     "error of the gains, which these standard deviations do not hold (give the gains' relative "
                     "uncertainty with --gain-std, or calibrate the gains with a known load: dynid drives gains)")
    return PayloadEstimate(phi_pc, phi_ls, np.where(determined, std, np.nan), determined,
                           payload_cov, rmsd, float(np.linalg.eigvalsh(pseudo_inertia(phi_pc))[0]),
                           "two logs (with and without the load)" if two_logs else "one log, robot model of the result",
                           samples, notes, uncertainty)


def _consistent(aw: np.ndarray, rw: np.ndarray, x_ls: np.ndarray, ne: NormalEquations, var: np.ndarray, size: int,
                all_determined: bool) -> tuple[np.ndarray, str]:
    """(x, status) of the physically consistent estimate (P2). A least-squares estimate that is
    consistent already (m > 0, J(phi) >= 0, every parameter determined) is the constrained
    minimum itself: no solver runs (status "least squares"; noise-free logs made the SDP's
    objective so steep that the solver stopped early, 1 % off in mass)."""
    phi_ls = x_ls[size - 10:]
    if all_determined and phi_ls[0] > 0 and np.linalg.eigvalsh(pseudo_inertia(phi_ls))[0] >= 0:
        return x_ls, "least squares"
    import cvxpy as cp

    g, c = least_squares_form(aw, rw)
    rss_ls = max(float(np.sum(ne.residual_ss(x_ls) / var)), 1e-300)
    x = cp.Variable(size)
    phi = x[size - 10:]
    scale = np.maximum(np.abs(x_ls), 1e-3 * max(abs(x_ls[size - 10]), 1e-3))
    objective = cp.sum_squares(g @ x - c) / rss_ls + 1e-8 * cp.sum_squares(cp.multiply(1.0 / scale, x))
    basis = pseudo_inertia_basis()
    mass_scale = max(abs(float(x_ls[size - 10])), 1e-3)
    constraints = [sum(phi[k] * basis[k] for k in range(10)) / mass_scale >> 0, phi[0] >= 0]
    problem = cp.Problem(cp.Minimize(objective), constraints)
    status, best = "solver_error", None
    for solver in ("CLARABEL", "SCS"):  # the second only when the first does not reach its optimum
        try:
            problem.solve(solver=solver)
        except (cp.error.SolverError, ValueError):
            continue
        status = problem.status
        if x.value is not None:
            best = np.asarray(x.value, dtype=float)
        if status == "optimal":
            break
    if best is None:
        raise IllConditionedError(f"payload: the physically consistent fit failed (solver status '{status}')")
    return best, status
