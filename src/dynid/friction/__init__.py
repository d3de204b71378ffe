"""Friction measurement and its drift from cold to warm (thesis 5.2, eq. 5.3, 5.4; future work 6.2).

    analysis = dynid.friction.analyze(robot, data)        # FrictionAnalysis (per-cycle curves, drift fits)
    analysis.to_json("friction.json")
    fit = dynid.friction.fit_drift(t, y)                  # eq. 5.4 with 95 % intervals
    mix = dynid.friction.mix_fit([(t1, y1), (t2, y2)])    # the thesis' "mix" over several tests
    dynid.friction.compare_fits(fit_robot1, fit_robot2)
    dynid.friction.compare_robots([a1, a2], [b1, b2])     # mix fits of two robots per joint and level
"""

from dynid.friction.analysis import FrictionAnalysis, analyze, load_and_analyze
from dynid.friction.compare import compare_robots
from dynid.friction.drift import DriftFit, compare_fits, eq54, fit_drift, mix_fit
from dynid.friction.gravity import GravityFit, fit_gravity
from dynid.friction.plateaus import PlateauSettings, Plateaus, find_plateaus

__all__ = [
    "DriftFit", "FrictionAnalysis", "GravityFit", "PlateauSettings", "Plateaus", "analyze", "compare_fits", "compare_robots",
    "eq54", "find_plateaus", "fit_drift", "fit_gravity", "load_and_analyze", "mix_fit",
]
