"""Robot description files of the installed example-robot-data package (read in place)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


def example_robot_dir() -> Path:
    """The example-robot-data ``robots`` directory of the running interpreter's environment."""
    for base in (Path(p) for p in sys.path if p.endswith("site-packages")):
        robots = base / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if robots.is_dir():
            return robots
    pytest.skip("example-robot-data is not installed (pip install example-robot-data)", allow_module_level=True)


def example_robot_urdf(relative: str) -> Path:
    """Path of one URDF below the robots directory, e.g. 'xarm_description/urdf/xarm7.urdf'."""
    path = example_robot_dir() / relative
    if not path.exists():
        pytest.skip(f"{relative} is not part of the installed example-robot-data", allow_module_level=True)
    return path
