"""Friction drift from cold to warm: eq. 5.4 fits with confidence intervals, the mix fit, two
robots, and the drift-aware identification (thesis 5.2.4, 6.2), on simulated data with known truth."""

import numpy as np

from dynid.friction import analyze, compare_fits, eq54, fit_drift, mix_fit
from dynid.friction.drift_model import cross_validate
from dynid.simulate.drift import FrictionDrift, Warmup

from friction_helpers import COULOMB, DRIFT, VISCOUS, robot, simulate, true_level_friction

NOISE = 0.3


def test_eq54_intervals_cover_the_truth_at_their_level():
    truth = np.array([10.0, 5.0, 900.0, 4.0, 200.0])
    t = np.linspace(30.0, 2400.0, 12)
    rng = np.random.default_rng(7)
    inside = []
    for _ in range(40):  # 40 noise draws
        fit = fit_drift(t, eq54(t, *truth) + rng.normal(0.0, 0.05, t.size), seed=0, starts=2)
        inside.append((fit.ci_low <= truth) & (truth <= fit.ci_high))
    coverage = np.mean(inside, axis=0)
    assert np.all(coverage >= 0.8), coverage  # nominal 0.95 (linearized intervals, 7 degrees of freedom)


def test_drift_of_every_level_recovered_within_its_interval():
    data, _ = simulate(cycles=10, rate=20.0, noise=NOISE)
    result = analyze(robot(), data, seed=0)
    inside, t1, t2 = [], [], []
    for (j, level), fit in result.drift.items():
        truth = true_level_friction(j, result.levels[j][level])
        inside.extend(fit.contains(truth).values())
        if j < 3:  # the joints with the largest friction
            t1.append(fit["t1"])
            t2.append(fit["t2"])
    assert len(result.drift) >= 25
    assert np.mean(inside) >= 0.85, np.mean(inside)  # nominal 0.95
    assert abs(np.median(t1) / 900.0 - 1) < 0.15 and abs(np.median(t2) / 200.0 - 1) < 0.15, (t1, t2)


def _points(seed, drift, level=2, joint=1):
    data, _ = simulate(cycles=8, rate=10.0, noise=NOISE, seed=seed, drift=drift)
    result = analyze(robot(), data, fit_drifts=False)
    return result.drift_points(joint, level), result.levels[joint][level]


def test_mix_fit_and_two_robots_of_one_model():
    robot2 = FrictionDrift(ratio1=1.0, t1=500.0, ratio2=0.4, t2=200.0)  # more cold excess, faster warm-up
    (test1, speed), (test2, _) = _points(1, DRIFT), _points(2, DRIFT)
    mix1 = mix_fit([test1, test2])
    mix2 = mix_fit([_points(3, robot2)[0], _points(4, robot2)[0]])
    assert all(mix1.contains(true_level_friction(1, speed)).values())
    assert all(mix2.contains(true_level_friction(1, speed, robot2)).values())
    between = compare_fits(mix1, mix2)
    assert between["cold"]["significant"]  # 2.4 a against 1.9 a
    assert not between["a"]["significant"]  # same warm friction
    within = compare_fits(fit_drift(*test1), fit_drift(*test2))
    assert not any(v["significant"] for v in within.values())


def test_drift_aware_model_beats_static_on_other_cycles():
    data, _ = simulate(cycles=8, rate=10.0, noise=NOISE)
    cv = cross_validate(robot(), data, [2, 4, 6, 8])
    static, drift = np.array(cv["rmsd_static"]), np.array(cv["rmsd_drift"])
    assert np.all(np.abs(drift / NOISE - 1) < 0.05), drift  # at the noise floor
    assert np.all(static[:3] > 1.5 * drift[:3]), (static, drift)
    tc = cv["model"].time_constants_[0]
    assert abs(tc[0] / 900.0 - 1) < 0.25 and abs(tc[1] / 200.0 - 1) < 0.25, tc


def test_temperature_model_recovers_cold_and_warm_friction():
    warmup = Warmup(ambient=20.0, rise=25.0, time_constant=900.0)
    drift = FrictionDrift(ratio1=0.5, t1=900.0, ratio2=0.0, t2=100.0)  # affine in that temperature
    data, _ = simulate(cycles=8, rate=10.0, noise=NOISE, drift=drift)
    temp = warmup.temperatures(data.t - data.t[0], robot().n)
    cv = cross_validate(robot(), data, [2, 4, 6, 8], mode="temperature", temp=temp)
    model = cv["model"]
    values = dict(zip(model.names_, model.coef_))
    std = dict(zip(model.names_, model.std_))
    for j in range(3):
        for name, warm in (("Fc", COULOMB[j]), ("Fv", VISCOUS[j])):
            # f(T) = warm (1 + 0.5 (1 - (T - 20) / 25)): cold 1.5 warm at T = 20, slope -0.5 warm / 25
            assert abs(values[f"{name}{j + 1}"] - 1.5 * warm) < 4 * std[f"{name}{j + 1}"] + 1e-9
            assert abs(values[f"{name}{j + 1}_dT"] + 0.5 * warm / 25.0) < 4 * std[f"{name}{j + 1}_dT"] + 1e-9
    assert np.all(np.array(cv["rmsd_drift"]) < 1.05 * NOISE)
    assert np.all(np.array(cv["rmsd_static"])[:3] > 1.5 * np.array(cv["rmsd_drift"])[:3])
