"""Acceleration-free (momentum, voltage or current) versus acceleration-based identification on
the same simulated drive logs (docs/voltage_identification.md, "Comparison").

One training and one validation log of ``robot`` along two random multi-sines (seeds
``seed`` and ``seed + 1``), ``default_drives`` (L = 0), velocity noise ``dq_noise`` on the
written dq. Three estimators:

- ``voltage``: eq. V8 with u, scale fixed by ``known_voltage`` (one entry per scale group;
  default: the gain a of the first joint of each group);
- ``current``: eq. V8 with i and all k_j = N K_t known (the knowledge the acceleration method has);
- ``acceleration``: the existing pipeline (zero-phase low-pass of q and dq, default
  min(20 Hz, fs / 10) or ``accel_lowpass_hz``, central differences of the filtered dq for
  ddq), tau = k i with all k known, OLS.

Parameter errors compare base parameters except the viscous ones (their truth differs by
the back-EMF damping between the voltage and current models), relative to each true value
(or to the largest |beta| for true zeros). Validation on the other log, for each estimate:

- ``tau_filtered``: F[tau_m] predicted by the acceleration-free predictor (no derivative of
  data) against the exact F[tau_m]; the floor is the true parameters through the same predictor;
- ``tau_accel``: tau_m = Y(q, dq_f, ddq_f) beta with the pipeline's preprocessing, against the
  exact tau_m; floor likewise;
- ``voltage_filtered``: F[u] predicted (W beta + c F[dq]... eq. V8) against F[u] measured.
The voltage estimate enters the torque predictions with its viscous terms reduced by the
damping c = a N K_b (K_b from the drive data); the acceleration estimate enters the voltage
prediction with the true gains a and c.
"""

from __future__ import annotations

import numpy as np

from dynid.data.columns import JointData
from dynid.data.preprocess import Preprocessing, edge_mask, edge_samples, prepare, sample_rate
from dynid.drives.experiment import drive_log
from dynid.drives.motor import default_drives
from dynid.drives.regression import filtered_system, identify_drive_model, scale_groups
from dynid.drives.signals import identification_truth
from dynid.identify.base import base_parameters
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.identify.model import ModelOptions, identification_regressor, joint_columns
from dynid.identify.pipeline import regressor_arrays
from dynid.simulate import random_multisine
from dynid.simulate.joint_space import default_friction


def _log(robot, seed, rate, duration, dq_noise, drives, friction):
    t = np.arange(0.0, duration, 1.0 / rate)
    sample = random_multisine(robot, seed=seed).sample
    cols, _ = drive_log(robot, drives.kind, sample, t, friction, dq_noise=dq_noise, seed=seed + 100, drives=drives)
    n = robot.n
    get = lambda p: np.column_stack([cols[f"{p}{j + 1}"] for j in range(n)])  # noqa: E731
    q, dq_true, ddq = sample(t)
    tau_m = get("i") * drives.current_gain
    return {"t": t, "q": get("q"), "dq": get("dq"), "u": get("u"), "i": get("i"), "tau_m": tau_m,
            "dq_true": dq_true}


def _relative(est, truth, skip):
    scale = np.max(np.abs(truth))
    err = np.abs(est - truth) / np.where(np.abs(truth) > 1e-9 * scale, np.abs(truth), scale)
    return err[~skip]


def compare_estimators(robot, seed: int = 0, rate: float = 500.0, duration: float = 20.0,
                       dq_noise=0.0, filter_hz: float = 1.0, known_voltage: dict | None = None,
                       prefilter_hz: float = 0.0, accel_lowpass_hz: float | None = None) -> dict:
    """Run the three estimators (module docstring); returns parameter errors and RMSDs per joint."""
    options = ModelOptions("coulomb-viscous")
    base = base_parameters(robot, options)
    drives = default_drives(robot, "dc-motor", inductance=0.0)
    friction = default_friction(robot, options)
    theta_i, k = identification_truth(robot, drives, friction, "current")
    theta_u, a = identification_truth(robot, drives, friction, "voltage")
    beta_i, beta_u = base.to_base(theta_i), base.to_base(theta_u)
    c = drives.gains()[1]
    viscous = np.array([nm.startswith("Fv") for nm in base.names])
    fv_joint = np.array([int(nm[2:]) - 1 if nm.startswith("Fv") else -1 for nm in base.names])
    to_current = lambda beta, damping: beta - np.where(viscous, damping[fv_joint], 0.0)  # noqa: E731
    groups = scale_groups(robot, options, base)
    lam = 2.0 * np.pi * filter_hz
    train = _log(robot, seed, rate, duration, dq_noise, drives, friction)
    valid = _log(robot, seed + 1, rate, duration, dq_noise, drives, friction)

    names = list(base.names)
    first = [int(g[0]) for g in groups[0]]
    known_u = known_voltage or {f"gain{j + 1}": float(a[j]) for j in first}
    known_i = {f"gain{j + 1}": float(k[j]) for j in range(robot.n)}  # all k, as the acceleration method
    sys_u = filtered_system(robot, train["t"], train["q"], train["dq"], train["u"], options, base, lam,
                            prefilter_hz=prefilter_hz)
    sys_i = filtered_system(robot, train["t"], train["q"], train["dq"], train["i"], options, base, lam,
                            prefilter_hz=prefilter_hz)
    fit_u = identify_drive_model(sys_u, base, known_u, groups, "voltage")
    fit_i = identify_drive_model(sys_i, base, known_i, groups, "current")
    prep = Preprocessing(lowpass_hz=accel_lowpass_hz)
    data = JointData(train["t"], train["q"], train["dq"], None, train["tau_m"])
    ready = prepare(data, prep, joint_columns=lambda q, dq, ddq: joint_columns(dq, ddq, options))
    y, tau, mask = regressor_arrays(robot, ready, options, base, prep)
    acc = OrdinaryLeastSquares(names).fit(y, tau, mask)

    damping_u = fit_u.gains * drives.gear_ratio * drives.back_emf  # c = a N K_b, K_b from the drive data
    estimates = {"voltage": to_current(fit_u.beta, damping_u), "current": fit_i.beta, "acceleration": acc.coef_,
                 "truth": beta_i}
    out = {"names": names, "groups": [(g + 1).tolist() for g in groups[0]], "known_voltage": known_u,
           "parameter_error": {}, "gain_error": {}, "tau_filtered": {}, "tau_accel": {}, "voltage_filtered": {}}
    for key in ("voltage", "current", "acceleration"):
        out["parameter_error"][key] = _relative(estimates[key], beta_i, viscous)
    out["gain_error"]["voltage"] = np.abs(fit_u.gains / a - 1.0)
    out["gain_error"]["current"] = np.abs(fit_i.gains / k - 1.0)
    out["viscous_error"] = {"voltage": _relative(fit_u.beta, beta_u, ~viscous),
                            "current": _relative(fit_i.beta, beta_i, ~viscous),
                            "acceleration": _relative(acc.coef_, beta_i, ~viscous)}

    # validation
    sys_v = filtered_system(robot, valid["t"], valid["q"], valid["dq"], valid["u"], options, base, lam)
    h = 1.0 / rate
    from dynid.drives.filters import filtered
    f_tau = filtered(valid["tau_m"], lam, h)
    f_dq = sys_v.dq
    vdata = JointData(valid["t"], valid["q"], valid["dq"], None, valid["tau_m"])
    vready = prepare(vdata, prep)
    keep = edge_mask(len(vready), edge_samples(prep, sample_rate(vready.t)))
    y_acc = identification_regressor(robot, vready.q, vready.dq, vready.ddq, options)[..., base.independent]
    rms = lambda e: np.sqrt(np.mean(e**2, axis=0))  # noqa: E731
    for key, beta in estimates.items():
        out["tau_filtered"][key] = rms(sys_v.W @ beta - f_tau)
        out["tau_accel"][key] = rms((y_acc @ beta - valid["tau_m"])[keep])
        gains, damp = (fit_u.gains, damping_u) if key == "voltage" else (a, c)
        out["voltage_filtered"][key] = rms((sys_v.W @ beta + damp * f_dq) / gains - sys_v.x)
    return out
