"""Robot descriptions: the immutable Robot and its loaders."""

from dynid.robot.loader import load_robot
from dynid.robot.model import Drive, Joint, JointLimits, Link, Robot

__all__ = ["Drive", "Joint", "JointLimits", "Link", "Robot", "load_robot"]
