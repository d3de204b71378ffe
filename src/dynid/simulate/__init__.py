"""Synthetic experiments: joint-space torques of a known model along a trajectory."""

from dynid.simulate.joint_space import Measurement, default_friction, simulate_joint_data
from dynid.simulate.trajectories import MultiSine, random_multisine

__all__ = ["Measurement", "MultiSine", "default_friction", "random_multisine", "simulate_joint_data"]
