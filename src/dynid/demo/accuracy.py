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
    """A tool on the flange (``PAYLOAD``): a log with it (another multi-sine, warm friction, the
    training log's noise), then its ten parameters from that log and the OLS result."""
    import numpy as np

    from dynid.data.io import joint_data_columns, write_columns
    from dynid.demo.generate import _friction, _noise
    from dynid.identify.model import full_parameters, parameter_slices
    from dynid.identify.payload import flange_body, identify_payload
    from dynid.identify.result import load_result, result_model
    from dynid.robot.inertia import from_mass_com_inertia
    from dynid.simulate import Measurement, random_multisine, simulate_joint_data

    s = ws.settings
    options, friction, _ = _friction(ws)
    t = np.arange(0.0, s.validation_seconds, 1.0 / s.rate)
    q, dq, ddq = random_multisine(ws.robot, seed=s.seed + 4).sample(t)
    theta = full_parameters(ws.robot, options, friction)
    body = flange_body(ws.robot)
    phi = from_mass_com_inertia(PAYLOAD["mass"], PAYLOAD["com"], np.diag(PAYLOAD["inertia"]))
    theta[parameter_slices(ws.robot, options)["rigid"]][10 * body:10 * body + 10] += phi
    p = ws.state["protocol"]
    data, _, _ = simulate_joint_data(ws.robot, t, q, dq, ddq, options, theta=theta, seed=s.seed + 5,
                                     measurement=Measurement(tuple(_noise(ws, p["q"], p["dq"], p["ddq"]))))
    write_columns(ws.dir / "with_load.csv", joint_data_columns(data))
    progress(0.4)
    result = load_result(ws.path("result"))
    options, base, beta, prep = result_model(result)
    estimate = identify_payload(ws.robot, [ws.dir / "with_load.csv"], options, base, prep, beta,
                                beta_cov=np.asarray(result["covariance"]) if "covariance" in result else None)
    content = estimate.to_dict()
    content.update({"robot": ws.settings.robot, "frame": f"link frame of {ws.robot.joints[body].name}",
                    "simulated": PAYLOAD})
    atomic_write_text(ws.path("payload"), json.dumps(content, indent=2) + "\n")
    ws.figures[f"payload mass [kg] (simulated {PAYLOAD['mass']})"] = content["mass"]["value"]
    progress(1.0)
