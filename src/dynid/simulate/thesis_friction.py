"""The thesis' own friction and friction drift, as defaults of simulated er3a protocols.

Friction (thesis eq. 3.10 / 5.3, dynid's ``polynomial`` model, joint side, N m and rad/s):

    tau_f = f1 sign(dq) + f2 dq + f3 dq^2 sign(dq) + f4 dq^3

with f1..f4 the per-cycle means of Table H.5-H.8 for Robot 2 ("Right"), Test 1, over the
cycles without the first 5 ("warm"; the all-cycle means are kept for reference). Drift: every
coefficient decays from cold to warm as eq. 5.4 with the amplitudes and time constants of
Table 5.6 (Robot 2, Test 1, the 60 % level): f(t) = f_warm (1 + (b/a) e^(-t/t1) + (c/a)
e^(-t/t2)), t1, t2 in minutes there (``simulate.drift.FrictionDrift`` takes seconds).
Table N.1 prints the same fits with t1, t2 replaced by their reciprocals 1/t1, 1/t2 [1/min]
(Robot 2 Test 1, J1: 0.02442 = 1/40.94343, 0.34612 = 1/2.88916).

Consistency of the two tables: the warm friction at 60 % of the er3a's dq_max (thesis Table
2.1), sum_k F_k(0.6 dq_max) f_k, is within 13 % of Table 5.6's a for every joint
(``warm_level_friction``; tests/test_thesis_protocol.py).
"""

from __future__ import annotations

import numpy as np

# Table H.5-H.8, Robot 2, Test 1: Mean of f1, f2, f3, f4 per joint; [all cycles, without the first 5]
TABLE_H_F_ALL = np.array([
    [5.6097, 10.8538, -3.3692, 0.4065],
    [3.1583, 17.5127, -6.1075, 1.0364],
    [1.7262, 7.4997, -2.3027, 0.3079],
    [5.4409, 10.0282, -2.6719, 0.2836],
    [0.7985, 4.2813, -1.2413, 0.1312],
    [1.5536, 1.6567, -0.3879, 0.0320],
])
TABLE_H_F_WARM = np.array([
    [5.5628, 9.9610, -3.0883, 0.3751],
    [3.1676, 16.1216, -5.6709, 0.9919],
    [1.7192, 7.0056, -2.1941, 0.2968],
    [5.5328, 9.2108, -2.4918, 0.2689],
    [0.7884, 3.9821, -1.1637, 0.1236],
    [1.5480, 1.5874, -0.3796, 0.0317],
])
# Table 5.6 (= Table N.1, Robot 2, Test 1, velocity 60 %): a, b [N m], t1 [min], c [N m], t2 [min]
TABLE_5_6 = np.array([
    [16.60894, 4.87445, 40.94343, 8.56154, 2.88916],
    [20.25689, 6.46293, 56.55044, 11.05555, 7.43387],
    [10.01373, 6.35484, 23.01969, 8.42142, 0.53915],
    [19.10495, 7.17766, 25.88962, 7.98374, 3.76450],
    [5.89756, 3.85085, 20.28498, 19.59727, 0.46770],
    [4.14913, 1.92346, 12.83307, 33.80185, 0.31042],
])
# Table N.1, Robot 2, Test 1 as printed: a, b, 1/t1 [1/min], c, 1/t2 [1/min]
TABLE_N1_ROBOT2_TEST1 = np.array([
    [16.60894, 4.87445, 0.02442, 8.56154, 0.34612],
    [20.25689, 6.46293, 0.01768, 11.05555, 0.13452],
    [10.01373, 6.35484, 0.04344, 8.42142, 1.85479],
    [19.10495, 7.17766, 0.03863, 7.98374, 0.26564],
    [5.89756, 3.85085, 0.04930, 19.59727, 2.13811],
    [4.14913, 1.92346, 0.07792, 33.80185, 3.22148],
])
LEVEL_SHARE = 0.6  # Table 5.6 and Appendix N fit the 60 % level


def thesis_friction() -> np.ndarray:
    """(6, 4) warm polynomial coefficients f1..f4 per joint (Table H, Robot 2, Test 1, cycles 6-24)."""
    return TABLE_H_F_WARM.copy()


def thesis_drift():
    """``FrictionDrift`` of Table 5.6: per joint r1 = b/a, t1, r2 = c/a, t2 (minutes -> s)."""
    from dynid.simulate.drift import FrictionDrift

    a, b, t1, c, t2 = TABLE_5_6.T
    return FrictionDrift(ratio1=b / a, t1=60.0 * t1, ratio2=c / a, t2=60.0 * t2)


def applies_to(robot) -> bool:
    """The thesis' values are those of the EFORT ER3A (6 revolute joints)."""
    return robot.name == "er3a" and robot.n == 6


def warm_level_friction(robot, friction: np.ndarray = TABLE_H_F_WARM, share: float = LEVEL_SHARE) -> np.ndarray:
    """(n,) warm friction torque of the polynomial model at ``share`` x dq_max [N m]."""
    v = share * robot.limit_array("dq_max")
    f = np.asarray(friction, dtype=float)
    return f[:, 0] + f[:, 1] * v + f[:, 2] * v * v + f[:, 3] * v**3


def table_5_6_truth(robot, friction: np.ndarray = TABLE_H_F_WARM, share: float = LEVEL_SHARE) -> np.ndarray:
    """(n, 5) the eq. 5.4 curve (a, b, t1 [min], c, t2 [min]) that a simulation with ``friction``
    and ``thesis_drift`` has at ``share`` x dq_max: a = warm friction there, b = (b/a)_5.6 a,
    c = (c/a)_5.6 a, time constants of Table 5.6."""
    a = warm_level_friction(robot, friction, share)
    ratio = TABLE_5_6 / TABLE_5_6[:, :1]
    return np.column_stack([a, ratio[:, 1] * a, TABLE_5_6[:, 2], ratio[:, 3] * a, TABLE_5_6[:, 4]])
