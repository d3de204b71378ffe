"""dynid.load_robot: a builtin name, example:NAME, a .urdf file or a robot .yaml file -> Robot."""

from __future__ import annotations

from pathlib import Path

from dynid.errors import ModelError
from dynid.robot.builtin import BUILTINS
from dynid.robot.model import Robot


def load_robot(spec, joints: list[str] | None = None, lock: dict[str, float] | None = None) -> Robot:
    """Load a robot from a builtin name (``dynid robots``), ``example:NAME`` (example-robot-data),
    a .urdf path or a .yaml/.yml path (a DH/MDH table, or a file with ``urdf:``).

    joints: keep these actuated joints and lock the others (at their ``lock`` value, or 0 within
    their limits); lock: {joint name: value [rad | m]} to hold (robot/select.py).
    """
    from dynid.robot.select import select_joints

    if isinstance(spec, Robot):
        return select_joints(spec, joints, lock)
    text = str(spec)
    if text in BUILTINS:
        return select_joints(BUILTINS[text](), joints, lock)
    from dynid.robot.example import PREFIX, example_urdf
    from dynid.robot.urdf import load_urdf

    if text.startswith(PREFIX):
        robot = load_urdf(example_urdf(text), name=text, joints=joints, lock=lock)
        return robot
    suffix = Path(text).suffix.lower()
    if suffix == ".urdf":
        return load_urdf(text, joints=joints, lock=lock)
    if suffix in (".yaml", ".yml"):
        from dynid.robot.dh import read_yaml, robot_from_dh_document

        doc = read_yaml(text)
        if "urdf" in doc:
            from dynid.robot.description import robot_from_description
            return robot_from_description(doc, Path(text), joints, lock)
        doc.setdefault("name", Path(text).stem)
        return select_joints(robot_from_dh_document(doc, text, source=text), joints, lock)
    raise ModelError(
        f"robot '{text}': not a builtin ({', '.join(BUILTINS)}), example:NAME (dynid robots) "
        "nor a .urdf / .yaml file"
    )
