"""Identify a robot's dynamic model from NumPy arrays, then predict torques with it.

    python examples/identify_arrays.py

Load a builtin robot, make the arrays a controller would log (here simulated: a multi-sine
motion, torques with 0.01 N m of sensor noise), identify the base parameters with their
standard deviations, and predict the torques of another motion.
"""

import numpy as np

import dynid
from dynid.simulate import Measurement, random_multisine, simulate_joint_data


def simulated_log(robot, seed: int, seconds: float = 40.0, rate: float = 200.0):
    """(t (N,), q, dq (N, n), measured tau (N, n), true tau (N, n)) of a random multi-sine."""
    t = np.arange(0.0, seconds, 1.0 / rate)
    q, dq, ddq = random_multisine(robot, seed=seed, f0=0.1).sample(t)
    log, tau_true, _ = simulate_joint_data(robot, t, q, dq, ddq, seed=seed, measurement=Measurement(tau_noise=0.01))
    return log.t, log.q, log.dq, log.tau, tau_true


robot = dynid.load_robot("er3a")                     # builtin name, example:NAME, .urdf or .yaml
t, q, dq, tau, _ = simulated_log(robot, seed=1)

idn = dynid.Identification(robot, estimator="wls")   # the options of 'dynid identify'
result = idn.fit(t, q, tau, dq=dq)                   # (N,), (N, n) arrays in SI units
print(f"{len(result.names)} base parameters; relative RMSD per joint {np.round(result.relative_rmsd, 4).tolist()}")
for name, value, std in list(zip(result.names, result.values, result.std))[:6]:
    print(f"  {name:8s} {value: .5g} +- {std:.2g}")

t2, q2, dq2, tau2, tau2_true = simulated_log(robot, seed=2)
tau_hat = result.predict(t2, q2, dq=dq2)             # (N, n), preprocessed as in training
inner = slice(100, -100)                             # the low-pass filter's edges
error = np.linalg.norm(tau_hat[inner] - tau2_true[inner]) / np.linalg.norm(tau2_true[inner])
print(f"another motion: predicted torques within {error:.3%} of the true ones")
print(f"validation on it: {result.validate(t2, q2, tau2, dq=dq2)['relative_error']:.3%} relative error "
      "against the measured (noisy) torques")
