"""Identify from log files, validate on another log, and keep the result.

    python examples/identify_files.py [FOLDER]

Two training logs (a CSV and a Parquet file, as a controller or 'dynid convert' writes them)
are one least-squares problem, each preprocessed on its own and streamed in bounded memory;
the model is then validated on a third log, saved as the result.json of 'dynid identify', and
read back. FOLDER (default: a temporary folder) receives the logs and result.json.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

import dynid
from dynid.data.io import write_joint_data
from dynid.simulate import Measurement, random_multisine, simulate_joint_data

folder = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="dynid-example-"))
folder.mkdir(parents=True, exist_ok=True)
robot = dynid.load_robot("er3a")
for seed, name in ((1, "run1.csv"), (2, "run2.parquet"), (3, "check.csv")):
    t = np.arange(0.0, 25.0, 0.005)
    q, dq, ddq = random_multisine(robot, seed=seed, f0=0.1).sample(t)
    log, _, _ = simulate_joint_data(robot, t, q, dq, ddq, seed=seed,
                                    measurement=Measurement(tau_noise=0.02, encoder_counts=2**16,
                                                            write_derivatives=False))
    write_joint_data(folder / name, log)             # t, q1..q6, tau1..tau6: velocities estimated from q

idn = dynid.Identification(robot, friction="coulomb-viscous", offset=True)   # lowpass="auto": cross-validated
result = idn.fit_files([folder / "run1.csv", folder / "run2.parquet"])
print(f"low-pass cutoff {result.preprocessing.lowpass_hz:.3g} Hz chosen by cross-validation; "
      f"{result.document['fit']['samples']} samples, condition number {result.diagnostics['condition_number']:.3g}")

report = result.validate_files([folder / "check.csv"], min_velocity=0.05)[str(folder / "check.csv")]
print(f"validation on check.csv: relative error {report['relative_error']:.3%}, "
      f"RMSD per joint {np.round(report['rmsd'], 3).tolist()} N m")

result.save(folder / "result.json")                  # what 'dynid identify --out' writes
again = dynid.load_result(folder / "result.json")    # 'dynid predict --params' reads it
assert np.array_equal(again.values, result.values)
print(f"wrote {folder / 'result.json'}: {len(again.names)} base parameters, "
      f"{'none' if not again.undetermined else again.undetermined} undetermined")
