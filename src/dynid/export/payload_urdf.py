"""URDF of a robot with an identified payload as a fixed link on its flange body."""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

import numpy as np

from dynid.export.urdf import _inertial, _origin, _unique_names, urdf_text


def payload_urdf_text(robot, phi: np.ndarray, name: str = "payload", comment: str = "") -> str:
    """``urdf_text(robot)`` plus a link ``name`` holding phi (10,) (in the link frame of the
    last actuated joint's body), fixed to that body with the link frame as its own frame."""
    from dynid.identify.payload import flange_body

    body = flange_body(robot)
    joint = robot.joints[body]
    parent = _unique_names(robot)[body]
    text = urdf_text(robot, comment=comment)
    extra = [f"  <link name={quoteattr(name)}>", *_inertial(np.asarray(phi, dtype=float)), "  </link>",
             f"  <joint name={quoteattr(name + '_joint')} type=\"fixed\">", f"    <parent link={quoteattr(parent)}/>",
             f"    <child link={quoteattr(name)}/>", f"    {_origin(joint.offset_rotation, joint.offset_translation)}",
             "  </joint>"]
    return text.replace("</robot>\n", "\n".join(extra) + "\n</robot>\n")
