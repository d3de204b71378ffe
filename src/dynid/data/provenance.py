"""Whether a log was recorded on the robot it is read with: a Parquet file written by dynid
(``dynid simulate``, ``dynid convert``) names, in its ``dynid`` metadata (docs/formats.md), the
robot and the joints it was recorded with. A log of another robot of the same joint count
(kr500 and er3a are both 6R) is otherwise read without complaint and fitted into confident
nonsense, so a mismatch warns (``DynidWarning``), never refuses: a description may
legitimately be renamed (a URDF copied and edited), and a joint count that does not fit is
already caught by the columns (missing ``qk``: an error; extra: ``plausibility.column_messages``).

Evidence, strongest first:

- the joint names differ (recorded ``joints`` vs ``robot.joint_names``): another robot, or
  the same joints in another order (the columns q1..qn follow the log's order, so one joint's
  data would be read as another's);
- the robot names differ (compared without case and surrounding blanks) while the joint names
  agree or were not recorded: another robot of the same joint count, or a renamed description.

Joint names are not compared when ``--rename`` maps columns (the user has chosen the order).
"""

from __future__ import annotations

SHOWN = 8  # joint names listed in a message


def _listed(names) -> str:
    names = [str(n) for n in names]
    return "[" + ", ".join(names[:SHOWN]) + (", ..." if len(names) > SHOWN else "") + "]"


def _same_name(a, b) -> bool:
    return str(a).strip().casefold() == str(b).strip().casefold()


def recorded_robot_message(metadata: dict, robot, source: str, compare_joints: bool = True) -> str | None:
    """One line when the log's ``dynid`` metadata (``io.file_metadata``) names another robot
    or other joints than ``robot``; None when it agrees or records neither."""
    recorded = metadata.get("robot")
    joints = metadata.get("joints")
    if not isinstance(joints, list) or not compare_joints:
        joints = None
    other_robot = recorded is not None and not _same_name(recorded, robot.name)
    other_joints = joints is not None and [str(j) for j in joints] != list(robot.joint_names)
    if not (other_robot or other_joints):
        return None
    log = f"robot '{recorded}'" if recorded is not None else "a robot"
    given = f"robot '{robot.name}'"
    if not other_joints:
        agree = " (the joint names agree: a renamed description?)" if joints is not None else ""
        return (f"{source}: recorded on {log} (its 'dynid' metadata), read with {given}: a log of another "
                f"robot?{agree}")
    if sorted(map(str, joints)) == sorted(robot.joint_names):
        return (f"{source}: recorded on {log} with joints in the order {_listed(joints)} (its 'dynid' "
                f"metadata), read with {given} whose order is {_listed(robot.joint_names)}: columns q1..q"
                f"{robot.n} follow the log's order, so joints would be swapped (map them with --rename)")
    count = f"{len(joints)} joints " if len(joints) != robot.n else "joints "
    return (f"{source}: recorded on {log} with {count}{_listed(joints)} (its 'dynid' metadata), read with "
            f"{given} ({robot.n} joints {_listed(robot.joint_names)}): a log of another robot?")
