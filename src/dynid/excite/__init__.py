"""Excitation trajectories (thesis chapter 4): periodic families, their optimization, and the
full test cycle of the experiment protocol.

Modules, one job each:
    periodic   q(t) = q0 + B(t) C, the common form of both families
    fourier    finite Fourier series basis (eq. 4.19-4.21)
    harmonic   harmonic sine sum basis and a-priori bounds (eq. 4.1, 4.5-4.18)
    builtin    the thesis' Table 4.1 trajectory for er3a
    limits     limit arrays and limit-usage ratios (guaranteed bounds for periodic families)
    limit_sources  every limit from options, a limits file, the description or stated defaults
    geometry/  collision-free excitation: capsules, floor, boxes, workspace, guaranteed clearance
    criteria   cond / logdet / weighted criteria on the base regressor
    optimize   the feasible parametrization, differential evolution, multi-start; stops on fixed counts (seeded, reproducible)
    polish     SLSQP with explicit linear limit constraints; final guaranteed-bound check
    evaluate   cond and limit usage of a trajectory (the contract's JSON)
    prior      prior-model torques for optional torque limits
    motion     rest-to-rest primitives: cycloid (eq. 4.22-4.24), ramped constant-speed moves, quintic blends
    timeline   piecewise trajectories with stage labels, sampled at a controller rate
    rest_pose  configurations that keep a joint axis vertical (friction stage, thesis 4.4)
    protocol   excitation + friction + warming test cycle, repeated K times
    fileio     trajectory JSON and joint data file export (atomic writes)
"""

from dynid.excite.builtin import builtin_trajectory, thesis_table_4_1
from dynid.excite.periodic import PeriodicTrajectory

__all__ = ["PeriodicTrajectory", "builtin_trajectory", "thesis_table_4_1"]
