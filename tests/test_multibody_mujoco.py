"""Joint reaction wrenches of the seed experiment agree with MuJoCo's (mj_inverse followed by
mj_rnePostConstraint; cfrc_int is the wrench from the parent about the subtree centre of mass,
moved here to the joint point)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import dynid
from dynid.multibody import angular_form, body_coordinates, body_model, body_states
from dynid.multibody.constrained import inverse
from dynid.multibody.experiment import seed_trajectory
from dynid.multibody.quaternion import Quaternion
from dynid.robot.inertia import to_mass_com_inertia


def _num(values) -> str:
    return " ".join(f"{v:.17g}" for v in np.ravel(values))


def mjcf(robot) -> str:
    """The robot as MJCF text: nested bodies, one hinge or slide per body, explicit inertials."""
    children = {k: [] for k in range(-1, robot.n)}
    for k, joint in enumerate(robot.joints):
        children[joint.parent].append(k)

    def body(k: int) -> str:
        joint = robot.joints[k]
        assert not joint.is_offset
        m, c, ic = to_mass_com_inertia(robot.links[k].inertial)
        full = (ic[0, 0], ic[1, 1], ic[2, 2], ic[0, 1], ic[0, 2], ic[1, 2])
        kind = "hinge" if joint.type == "revolute" else "slide"
        quat = Quaternion.from_rotation(joint.placement_rotation[None])[0]
        inner = "".join(body(child) for child in children[k])
        return (f'<body name="b{k}" pos="{_num(joint.placement_translation)}" quat="{_num(quat)}">'
                f'<joint name="j{k}" type="{kind}" axis="{_num(joint.axis)}" pos="0 0 0"/>'
                f'<inertial pos="{_num(c)}" mass="{m:.17g}" fullinertia="{_num(full)}"/>{inner}</body>')

    return (f'<mujoco><compiler angle="radian"/><option gravity="{_num(robot.gravity)}"/>'
            f'<worldbody>{"".join(body(k) for k in children[-1])}</worldbody></mujoco>')


@pytest.mark.parametrize("form_name", ["cardan", "quaternion"])
@pytest.mark.parametrize("name", ["kr500"])  # kr500-rail has a massless carriage, which MuJoCo rejects
def test_reaction_wrenches_agree_with_mujoco(name, form_name):
    robot = dynid.load_robot(name)
    model = body_model(robot)
    t, q, dq, ddq = seed_trajectory(robot)  # the seed-kr500 experiment, 101 samples
    form = angular_form(form_name)
    sol = inverse(model, form, *body_coordinates(form, body_states(model, q, dq, ddq)))
    mj = mujoco.MjModel.from_xml_string(mjcf(robot))
    data = mujoco.MjData(mj)
    force, moment, tau = np.zeros_like(sol.force), np.zeros_like(sol.moment), np.zeros_like(q)
    for s in range(len(t)):
        data.qpos[:], data.qvel[:], data.qacc[:] = q[s], dq[s], ddq[s]
        mujoco.mj_inverse(mj, data)
        mujoco.mj_rnePostConstraint(mj, data)
        tau[s] = data.qfrc_inverse
        for k in range(robot.n):
            b = k + 1
            wrench = data.cfrc_int[b]  # (torque, force), world axes, about subtree_com[root]
            point = data.subtree_com[mj.body_rootid[b]]
            anchor = data.xanchor[k]  # the joint point O_k
            force[s, k] = wrench[3:]
            moment[s, k] = wrench[:3] + np.cross(point - anchor, wrench[3:])
    scale_f, scale_m = np.max(np.abs(force)), np.max(np.abs(moment))
    assert np.max(np.abs(sol.force - force)) < 1e-9 * scale_f
    assert np.max(np.abs(sol.moment - moment)) < 1e-9 * scale_m
    assert np.max(np.abs(sol.tau - tau)) < 1e-9 * np.max(np.abs(tau))
