"""Identify a physically consistent model and export it as a URDF.

    python examples/export_urdf.py [FOLDER]

The physically consistent estimator (Wensing, Kim & Slotine 2017: one pseudo-inertia LMI per
link) returns full standard parameters that a real mass distribution can have, so they can be
written as the links' <inertial> elements; the exported URDF loads back as a robot whose
inverse dynamics reproduce the identified model (a URDF has no gravity field: the robot's
must be the default [0, 0, -9.81]). Only the identifiable combinations of the inertial
parameters are fixed by the data; the constraints and the description choose the rest.
FOLDER (default: temporary) receives it.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import dynid
from dynid.export import identified_model, write_urdf
from dynid.simulate import Measurement, random_multisine, simulate_joint_data

folder = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="dynid-example-"))
folder.mkdir(parents=True, exist_ok=True)
robot = dynid.load_robot("er3a")
t = np.arange(0.0, 30.0, 0.005)
q, dq, ddq = random_multisine(robot, seed=4, f0=0.1).sample(t)
log, _, _ = simulate_joint_data(robot, t, q, dq, ddq, seed=4, measurement=Measurement(tau_noise=0.01))

result = dynid.Identification(robot, estimator="pc").fit(log.t, log.q, log.tau, dq=log.dq)
print(f"smallest pseudo-inertia eigenvalue per link: {np.round(result.document['lmi_min_eigenvalues'], 6).tolist()}")

model = identified_model(robot, result.document)     # the standard parameters onto the robot's kinematics
write_urdf(folder / "identified.urdf", model.robot, comment="identified by examples/export_urdf.py")
exported = dynid.load_robot(folder / "identified.urdf")
tau_urdf = dynid.inverse_dynamics(exported, q, dq, ddq)
tau_model = dynid.inverse_dynamics(model.robot, q, dq, ddq)
masses = [round(float(link.inertial[0]), 3) for link in exported.links]
print(f"wrote {folder / 'identified.urdf'}: link masses {masses} kg; its rigid-body torques equal the identified "
      f"model's to {np.max(np.abs(tau_urdf - tau_model)):.1e} N m")
