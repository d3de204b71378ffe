"""Robot descriptions: the immutable Robot and its loaders."""

from dynid.robot.loader import load_robot
from dynid.robot.model import Drive, Joint, JointLimits, Link, Mimic, Robot

__all__ = ["Drive", "Joint", "JointLimits", "Link", "Mimic", "Robot", "load_robot"]
