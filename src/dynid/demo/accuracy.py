"""Demo steps of the accuracy tools: the diagnosis of the training log (``dynid diagnose``)."""

from __future__ import annotations

import json

from dynid.data.io import atomic_write_text
from dynid.demo.workspace import Workspace


def diagnose(ws: Workspace, progress) -> None:
    """Check the training log for delay, sign/scale, units, clipping, gravity, excitation."""
    from dynid.identify.diagnose import diagnose as run_checks

    result = run_checks(ws.robot, ws.path("data"), options=ws.model_options())
    content = result.to_dict()
    content["source"] = ws.path("data").name  # not the hidden work directory's path
    atomic_write_text(ws.path("diagnosis"), json.dumps(content, indent=2) + "\n")
    ws.figures["diagnosis alarms"] = len(result.alarms)
    progress(1.0)


PAYLOAD = {"mass": 1.5, "com": (0.01, -0.02, 0.06), "inertia": (0.004, 0.005, 0.003)}  # kg, m, kg m^2 (principal)


def payload(ws: Workspace, progress) -> None:
    """A tool on the flange (``PAYLOAD``): the same excitation (another multi-sine) run twice,
    with and without the load, warm friction, the training log's noise; then the load's ten
    parameters from both logs (``--unloaded``: the robot's model is refitted with them, so
    the OLS result's error, which averages cold and warm friction, does not leak into the
    load) and, for comparison, from the loaded log with the OLS result alone."""
    import numpy as np

    from dynid.data.io import joint_data_columns, write_columns
    from dynid.demo.generate import _friction, _noise
    from dynid.identify.bands import parameter_covariance
    from dynid.identify.model import full_parameters, parameter_slices
    from dynid.identify.payload import flange_body, identify_payload
    from dynid.identify.result import load_result, result_model
    from dynid.robot.inertia import from_mass_com_inertia
    from dynid.simulate import Measurement, random_multisine, simulate_joint_data

    s = ws.settings
    options, friction, _ = _friction(ws)
    t = np.arange(0.0, s.validation_seconds, 1.0 / s.rate)
    q, dq, ddq = random_multisine(ws.robot, seed=s.seed + 4).sample(t)
    body = flange_body(ws.robot)
    phi = from_mass_com_inertia(PAYLOAD["mass"], PAYLOAD["com"], np.diag(PAYLOAD["inertia"]))
    p = ws.state["protocol"]
    noise = Measurement(tuple(_noise(ws, p["q"], p["dq"], p["ddq"])))
    for name, load, seed in (("with_load", phi, s.seed + 5), ("without_load", np.zeros(10), s.seed + 6)):
        theta = full_parameters(ws.robot, options, friction)
        theta[parameter_slices(ws.robot, options)["rigid"]][10 * body:10 * body + 10] += load
        data, _, _ = simulate_joint_data(ws.robot, t, q, dq, ddq, options, theta=theta, seed=seed, measurement=noise)
        write_columns(ws.dir / f"{name}.csv", joint_data_columns(data))
    progress(0.4)
    result = load_result(ws.path("result"))
    options, base, beta, prep = result_model(result)
    loaded = [ws.dir / "with_load.csv"]
    estimate = identify_payload(ws.robot, loaded, options, base, prep, beta, [ws.dir / "without_load.csv"])
    progress(0.7)
    one_log = identify_payload(ws.robot, loaded, options, base, prep, beta,
                               beta_cov=parameter_covariance(result) if "covariance" in result else None)
    content, alone = estimate.to_dict(), one_log.summary()
    content.update({"robot": ws.settings.robot, "frame": f"link frame of {ws.robot.joints[body].name}",
                    "simulated": PAYLOAD, "one_log": alone})
    com = np.array([c["value"] for c in content["com"]], dtype=float)
    com_alone = np.array([c["value"] for c in alone["com"]], dtype=float)
    known = np.isfinite(com) & np.isfinite(com_alone)  # a planar arm's motion leaves the normal component undetermined
    if not known.all():
        content["notes"].append("centre of mass errors over the determined components "
                                f"({', '.join(a for a, k in zip('xyz', known) if k)}) only")
    content["notes"].append(
        f"simulated: {PAYLOAD['mass']} kg at {[1e3 * c for c in PAYLOAD['com']]} mm. From the loaded log with the "
        f"OLS result alone (one-log mode): mass {alone['mass']['value']:.4g} kg, centre of mass "
        f"{1e3 * np.linalg.norm((com_alone - PAYLOAD['com'])[known]):.3g} mm off, because that model averages cold "
        "and warm friction (dynid payload identify warns when the robot's model misses the loaded log)")
    atomic_write_text(ws.path("payload"), json.dumps(content, indent=2) + "\n")
    ws.figures[f"payload mass [kg] (simulated {PAYLOAD['mass']})"] = content["mass"]["value"]
    ws.figures["payload centre of mass error [mm]"] = float(1e3 * np.linalg.norm((com - PAYLOAD["com"])[known]))
    progress(1.0)
