"""dynid.load_robot: a builtin name, a .urdf file or a DH/MDH .yaml file -> Robot."""

from __future__ import annotations

from pathlib import Path

from dynid.errors import ModelError
from dynid.robot.builtin import BUILTINS
from dynid.robot.dh import load_dh_yaml
from dynid.robot.model import Robot
from dynid.robot.urdf import load_urdf


def load_robot(spec) -> Robot:
    """Load a robot from a builtin name (``dynid robots``), a .urdf path or a .yaml/.yml path."""
    if isinstance(spec, Robot):
        return spec
    text = str(spec)
    if text in BUILTINS:
        return BUILTINS[text]()
    suffix = Path(text).suffix.lower()
    if suffix == ".urdf":
        return load_urdf(text)
    if suffix in (".yaml", ".yml"):
        return load_dh_yaml(text)
    raise ModelError(
        f"robot '{text}': not a builtin ({', '.join(BUILTINS)}) nor a .urdf / .yaml file"
    )
