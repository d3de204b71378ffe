"""Demo steps that generate data: excitation design, test protocol, simulated measurements."""

from __future__ import annotations

import numpy as np

from dynid.demo.workspace import Workspace


def excitation(ws: Workspace, progress) -> None:
    """Optimize a Fourier excitation (fixed deterministic budget), evaluate it, write it."""
    from dynid.excite.criteria import ExcitationModel
    from dynid.excite.evaluate import evaluate_trajectory
    from dynid.excite.fileio import write_trajectory
    from dynid.excite.optimize import OptimizeSettings, optimize_excitation

    s = ws.settings
    model = ExcitationModel.of(ws.robot, seed=s.seed)
    settings = OptimizeSettings(starts=1, generations=s.generations, polish_iterations=s.polish_iterations,
                                max_seconds=None, seed=s.seed)
    result = optimize_excitation(model, settings, lambda fraction, best, _: progress(fraction))
    report = evaluate_trajectory(model, result.trajectory)
    traj = result.trajectory.with_coefficients(result.trajectory.q0, result.trajectory.coefficients,
                                               cond=report["cond"], max_ratio=report["max_ratio"],
                                               limits_ok=report["limits_ok"],
                                               limits=ws.state["limits"].to_dict(ws.robot))
    write_trajectory(ws.path("trajectory"), traj, ws.robot.name)
    ws.state["trajectory"] = traj
    ws.figures["excitation cond (normalized base regressor)"] = report["cond"]
    ws.figures["excitation within limits"] = report["limits_ok"]


def protocol(ws: Workspace, progress) -> None:
    """Sample the test cycle (excitation, friction levels, warming) ``cycles`` times."""
    from dynid.excite.protocol import ProtocolSettings, sample_protocol

    s = ws.settings
    import json

    from dynid.data.io import atomic_write_text

    settings = ProtocolSettings(level_duration=s.level_duration, warming_duration=s.warming, seed=s.seed)
    ws.state["protocol"] = sample_protocol(ws.robot, ws.state["trajectory"], s.cycles, s.rate, settings)
    summary = ws.state["protocol"]["summary"]
    atomic_write_text(ws.path("protocol"), json.dumps({"robot": ws.robot.name, "cycles": s.cycles, "rate": s.rate,
                                                       **summary}, indent=1) + "\n")
    ws.figures["protocol duration [s]"] = float(ws.state["protocol"]["t"][-1])
    ws.figures["friction levels reached (of 6 per joint)"] = int(min(
        sum(abs(u["share"] - u["target"]) < 1e-9 for u in levels) for levels in summary["friction_levels"]))
    progress(1.0)


def _friction(ws: Workspace):
    """(model options, friction (n, k), drift) of the simulation: the thesis' own on a thesis run."""
    from dynid.simulate import default_friction
    from dynid.simulate.drift import FrictionDrift

    options = ws.model_options()
    if ws.thesis:
        from dynid.simulate.thesis_friction import thesis_drift, thesis_friction
        return options, thesis_friction(), thesis_drift()
    s = ws.settings
    return options, default_friction(ws.robot, options), FrictionDrift(ratio1=s.drift_r1, t1=s.drift_t1,
                                                                      ratio2=s.drift_r2, t2=s.drift_t2)


def _noise(ws: Workspace, q, dq, ddq) -> np.ndarray:
    """Torque noise std per joint: ``noise`` x RMS of the noise-free model torque."""
    from dynid.identify.model import full_parameters, model_torques

    options, friction, _ = _friction(ws)
    theta = full_parameters(ws.robot, options, friction)
    tau = model_torques(ws.robot, q, dq, ddq, theta, options)
    return ws.settings.noise * np.sqrt(np.mean(tau**2, axis=0))


def simulate(ws: Workspace, progress) -> None:
    """Torques of the known model with drifting friction and sensor noise; a separate multi-sine
    log for validation recorded right after the test (the friction as warm as at its end), and the
    same motion recorded at a cold start (``validation_cold``), each with its ``since_cold`` column;
    their noise-free torques stay in ``ws.state["true_torque"]`` (the headline's noise floor)."""
    from dynid.data.io import joint_data_columns, write_columns
    from dynid.simulate import Measurement, random_multisine, simulate_joint_data

    s, p = ws.settings, ws.state["protocol"]
    sigma = _noise(ws, p["q"], p["dq"], p["ddq"])
    options, friction, drift = _friction(ws)
    data, _, theta = simulate_joint_data(ws.robot, p["t"], p["q"], p["dq"], p["ddq"], options, friction,
                                         measurement=Measurement(tuple(sigma)), seed=s.seed + 1, drift=drift)
    data.cycle, data.stage = p["cycle"], p["stage"]
    columns = joint_data_columns(data)
    columns["since_cold"] = p["t"] - p["t"][0]  # the test starts cold
    write_columns(ws.path("data"), columns)
    progress(0.7)
    t = np.arange(0.0, s.validation_seconds, 1.0 / s.rate)
    q, dq, ddq = random_multisine(ws.robot, seed=s.seed + 2).sample(t)
    end = float(p["t"][-1] - p["t"][0]) + 1.0 / s.rate  # the test's end: the robot has run this long [s]
    truth = ws.state["true_torque"] = {}  # role -> (t, noise-free torque): the validation logs' noise floor
    for role, since_cold, seed in (("validation", end, s.seed + 3), ("validation_cold", 0.0, s.seed + 4)):
        val, tau_true, _ = simulate_joint_data(ws.robot, t, q, dq, ddq, options, friction,
                                               measurement=Measurement(tuple(sigma)), seed=seed, drift=drift,
                                               cold_start=t[0] - since_cold)
        truth[role] = (t, tau_true)
        columns = joint_data_columns(val)
        columns["since_cold"] = t - t[0] + since_cold  # the log says when it was recorded (docs/formats.md)
        write_columns(ws.path(role), columns)
    ws.state["theta_true"] = theta
    ws.figures["training samples"] = int(p["t"].size)
    ws.figures["torque noise std, share of RMS torque"] = s.noise
    progress(1.0)
