"""Shared fixtures of the identification tests: random physical robots and simulated logs."""

from __future__ import annotations

import numpy as np

from dynid.robot.inertia import from_mass_com_inertia


def random_physical_parameters(robot, seed: int) -> np.ndarray:
    """Random standard parameters (10 n,) of physical links: mass 1..5 kg, COM within 0.15 m,
    principal moments 0.01..0.1 kg m^2 obeying the triangle inequality, random axes."""
    rng = np.random.default_rng(seed)
    theta = []
    for _ in range(robot.n):
        a, b = rng.uniform(0.01, 0.1, 2)
        c = rng.uniform(abs(a - b) + 1e-3, a + b)
        rot, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        inertia = rot @ np.diag([a, b, c]) @ rot.T
        theta.append(from_mass_com_inertia(rng.uniform(1.0, 5.0), rng.uniform(-0.15, 0.15, 3), inertia))
    return np.concatenate(theta)


def relative_errors(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    return np.abs(estimate - truth) / np.abs(truth)
