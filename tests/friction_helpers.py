"""Simulated multi-cycle protocol logs of er3a with a known friction drift (tests of dynid.friction)."""

from __future__ import annotations

import functools

import numpy as np

import dynid
from dynid.excite.fileio import load_trajectory
from dynid.excite.protocol import ProtocolSettings, sample_protocol
from dynid.identify.model import ModelOptions
from dynid.simulate import Measurement, simulate_joint_data
from dynid.simulate.drift import FrictionDrift

COULOMB = np.array([8.0, 10.0, 6.0, 3.0, 2.0, 1.5])  # warm Coulomb friction [N m]
VISCOUS = np.array([3.0, 4.0, 2.0, 1.0, 0.8, 0.5])  # warm viscous friction [N m s/rad]
DRIFT = FrictionDrift(ratio1=0.5, t1=900.0, ratio2=0.4, t2=200.0)  # cold = 1.9 x warm


@functools.lru_cache(maxsize=None)
def robot():
    return dynid.load_robot("er3a")


@functools.lru_cache(maxsize=None)
def protocol(cycles: int, rate: float):
    r = robot()
    excitation = load_trajectory("thesis-table-4.1", r.n, r.name)
    return sample_protocol(r, excitation, cycles, rate, ProtocolSettings(cycloid=False, warming_duration=60.0))


@functools.lru_cache(maxsize=8)
def simulate(cycles: int = 10, rate: float = 20.0, noise: float = 0.3, seed: int = 1,
             drift: FrictionDrift | None = DRIFT, coulomb: tuple = tuple(COULOMB), viscous: tuple = tuple(VISCOUS)):
    """(JointData with cycle and stage, true torques (N, n)) of the protocol with drifting friction
    (cached: callers must not modify the arrays)."""
    r, p = robot(), protocol(cycles, rate)
    data, tau_true, _ = simulate_joint_data(r, p["t"], p["q"], p["dq"], p["ddq"], ModelOptions(),
                                            np.column_stack([coulomb, viscous]), None, Measurement(noise),
                                            seed=seed, drift=drift)
    data.cycle, data.stage = p["cycle"], p["stage"]
    return data, tau_true


def true_level_friction(j: int, speed: float, drift: FrictionDrift = DRIFT, coulomb=COULOMB, viscous=VISCOUS) -> dict:
    """Eq. 5.4 truth of joint j at constant speed: a = Fc + Fv v, b = r1 a, c = r2 a."""
    a = coulomb[j] + viscous[j] * speed
    return {"a": a, "b": float(np.asarray(drift.ratio1)) * a, "t1": float(np.asarray(drift.t1)),
            "c": float(np.asarray(drift.ratio2)) * a, "t2": float(np.asarray(drift.t2))}
