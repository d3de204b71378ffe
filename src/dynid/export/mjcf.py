"""MJCF (MuJoCo) model of an identified robot: its kinematics, the identified link inertials and
each motor's identified terms as MuJoCo's joint (or tendon) attributes.

Bodies are dynid's link frames at q = 0: body i sits at P_i E_i in its parent's link frame
(placement, then the link offset of standard DH; identity offsets for URDF and MDH robots), and
its joint turns (hinge) or slides (slide) about R_E^T axis through the joint-frame origin
-R_E^T t_E in body coordinates, so that P_i M_i(q) E_i = (P_i E_i)(E_i^-1 M_i(q) E_i). Each body
carries ``<inertial pos mass fullinertia>`` (centre of mass, mass, central inertia in link axes,
17 significant digits); ``<compiler inertiafromgeom="false">`` keeps MuJoCo from replacing them,
and the capsules drawn between joints (``group 1``, no contact, no mass) are only for viewing.

A mimic joint (URDF ``<mimic>``: q_f = a q_l + b) is a joint of its own without motor or motor
terms, tied to its leader by ``<equality><joint joint1=follower joint2=leader polycoef="b a 0 0 0">``
(MuJoCo: y - y0 = a0 + a1 (x - x0), reference positions 0 here). MuJoCo's inverse dynamics with
constraints disabled then gives the force on every joint, and G^T of it is dynid's torque on the
actuated coordinates (simulate/mujoco_bridge.coordinate_map, the virtual work of
Robot.mimic_map). In a forward simulation the equality is MuJoCo's soft constraint: ``solref``
``EQUALITY_SOLREF`` (time constant 2 ms, critically damped; MuJoCo raises it to twice the time
step when the step is longer) and ``solimp`` ``EQUALITY_SOLIMP`` keep the follower within 1e-3
rad of its leader on the test robot (tests/test_export_mjcf.py); the follower's own motion is then
slightly compliant, as MuJoCo's every constraint.

Identified model terms (identify.model), joint side, per motor k:

    tau += I_a,k ddq_k + Fv_k dq_k + Fc_k sign(dq_k)   ->   armature, damping, frictionloss

MuJoCo puts ``armature`` into the mass matrix and ``damping`` into the passive force
-damping dq, so ``mj_inverse`` with constraints disabled returns M ddq + c + g + I_a ddq + Fv dq;
``frictionloss`` is a friction *constraint*: while the joint moves it resists with exactly
Fc (the Coulomb term), at rest it holds up to Fc (static friction), with MuJoCo's constraint
softness in between. With a coupled transmission (R = diag(N)^-1 T, motor k moving several
joints) motor k's terms act on its velocity R_k dq: they go on a fixed tendon of length
sum_j R_kj q_j (``<tendon><fixed armature damping frictionloss>``), whose armature, damping
and friction MuJoCo maps onto the joints through R_k^T exactly as dynid's eq. C1 does.

What MuJoCo cannot express is left out, each with a note (written into the file and returned):
torque offsets (no constant joint force in a model: add them to the applied torque),
asymmetric friction (written as the mean of the two directions), the polynomial model's
Fv2 dq^2 sign(dq) + Fv3 dq^3 (only Fc and Fv are written), the Stribeck model's static excess
(Fs - Fc) exp(-(dq / vs)^2) (Fc and Fv written; MuJoCo's frictionloss holds at rest up to
Fc, not Fs), the load-dependent model's Fl |tau_load| sign(dq) (Fc and Fv written; MuJoCo's
frictionloss is a constant per joint, it cannot grow with the torque the joint transmits), the
tanh of ``--smooth-sign``
(frictionloss has its own regularization). MuJoCo
refuses point masses, rods and massless moving bodies: their principal moments and mass are
raised to ``INERTIA_FLOOR`` and ``MASS_FLOOR``, with a note (``mujoco_inertial``).
"""

from __future__ import annotations

import math
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from dynid.data.io import atomic_write_text
from dynid.export.urdf import _num, _unique_names, _vec
from dynid.export.motor_terms import motor_terms
from dynid.robot.inertia import to_mass_com_inertia

VIEW_RADIUS = 0.02  # m, capsules drawn between joints (viewing only)
INERTIA_FLOOR = 1e-12  # kg m^2: MuJoCo refuses a principal moment <= 0 (point masses, rods)
MASS_FLOOR = 1e-9  # kg: MuJoCo refuses a massless body that moves
EQUALITY_SOLREF = (0.002, 1.0)  # s, damping ratio: a mimic joint's equality (module docstring)
EQUALITY_SOLIMP = (0.99, 0.999, 0.001, 0.5, 2.0)  # MuJoCo's impedance d(violation): near-hard


def mujoco_inertial(link, notes: list[str]) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com, central inertia) of a link as MuJoCo accepts it: a mass below ``MASS_FLOOR``
    and principal moments below ``INERTIA_FLOOR`` raised to them (a note says so; the triangle
    inequality still holds)."""
    mass, com, ic = to_mass_com_inertia(link.inertial)
    lam, vec = np.linalg.eigh(0.5 * (ic + ic.T))
    raised = []
    if lam[0] < INERTIA_FLOOR:
        ic = (vec * np.maximum(lam, INERTIA_FLOOR)) @ vec.T
        raised.append(f"principal moments {np.round(lam, 15).tolist()} raised to >= {INERTIA_FLOOR:g} kg m^2")
    if mass < MASS_FLOOR:
        raised.append(f"mass {mass:g} raised to {MASS_FLOOR:g} kg")
        mass = MASS_FLOOR
    if raised:
        notes.append(f"link '{link.name}': {' and '.join(raised)} (MuJoCo needs positive ones)")
    return mass, com, ic


def mjcf_text(model, name: str | None = None, comment: str = "") -> tuple[str, list[str]]:
    """(MJCF text, notes) of an ``export.identified.IdentifiedModel`` (module docstring)."""
    robot = model.robot
    armature, damping, frictionloss, notes = motor_terms(model)
    rows = robot.motor_rows if robot.is_coupled else np.eye(robot.n)
    own = [bool(np.count_nonzero(rows[k]) == 1 and rows[k, k] == 1.0) for k in range(robot.n)]
    names = _unique_names(robot)
    children = {i: [c for c, j in enumerate(robot.joints) if j.parent == i] for i in range(-1, robot.n_bodies)}
    lines = ['<?xml version="1.0"?>']
    for text in ([comment] if comment else []) + notes:
        lines.append("<!-- " + text.replace("--", "- -") + " -->")
    lines += [f"<mujoco model={quoteattr(name or robot.name)}>",
              '  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>',
              f'  <option gravity="{_vec(robot.gravity)}"/>',
              f'  <default><geom type="capsule" size="{VIEW_RADIUS}" contype="0" conaffinity="0" group="1" '
              'mass="0" rgba="0.6 0.6 0.7 1"/></default>',
              "  <worldbody>"]
    actuated = {int(i): k for k, i in enumerate(robot.actuated)}

    def body(i: int, depth: int) -> None:
        joint, pad = robot.joints[i], "  " * depth
        re, te = joint.offset_rotation, joint.offset_translation
        rot = joint.placement_rotation @ re
        pos = joint.placement_translation + joint.placement_rotation @ te
        axes = np.concatenate([rot[:, 0], rot[:, 1]])  # MJCF xyaxes: the body's x and y axes, exactly
        lines.append(f"{pad}<body name={quoteattr(names[i])} pos=\"{_vec(pos)}\" xyaxes=\"{_vec(axes)}\">")
        mass, com, ic = mujoco_inertial(robot.links[i], notes)
        full = (ic[0, 0], ic[1, 1], ic[2, 2], ic[0, 1], ic[0, 2], ic[1, 2])
        lines.append(f'{pad}  <inertial pos="{_vec(com)}" mass="{_num(mass)}" fullinertia="{_vec(full)}"/>')
        attrs = [f"name={quoteattr(joint.name)}", f'type="{"slide" if joint.type == "prismatic" else "hinge"}"',
                 f'pos="{_vec(-re.T @ te)}"', f'axis="{_vec(re.T @ joint.axis)}"']
        lim = joint.limits
        if math.isfinite(lim.q_min) and math.isfinite(lim.q_max):
            attrs.append(f'range="{_num(lim.q_min)} {_num(lim.q_max)}"')
        k = actuated.get(i)
        if k is not None and own[k]:
            attrs += [f'armature="{_num(armature[k])}"', f'damping="{_num(damping[k])}"',
                      f'frictionloss="{_num(frictionloss[k])}"']
        lines.append(f"{pad}  <joint {' '.join(attrs)}/>")
        for c in children[i]:
            child = robot.joints[c]
            tip = child.placement_translation  # the child's joint origin, in this link frame
            if np.linalg.norm(tip) > 1e-9:
                lines.append(f'{pad}  <geom fromto="0 0 0 {_vec(tip)}"/>')
            body(c, depth + 1)
        lines.append(f"{pad}</body>")

    for root in children[-1]:
        body(root, 2)
    lines.append("  </worldbody>")
    tendons = [k for k in range(robot.n) if not own[k]]
    if tendons:  # coupled motors: their terms act through row k of R (module docstring)
        lines.append("  <tendon>")
        joint_names = [robot.joints[i].name for i in robot.actuated]
        for k in tendons:
            lines.append(f"    <fixed name={quoteattr(joint_names[k] + '_motor')} armature=\"{_num(armature[k])}\" "
                         f"damping=\"{_num(damping[k])}\" frictionloss=\"{_num(frictionloss[k])}\">")
            lines += [f"      <joint joint={quoteattr(joint_names[j])} coef=\"{_num(rows[k, j])}\"/>"
                      for j in np.flatnonzero(rows[k])]
            lines.append("    </fixed>")
        lines.append("  </tendon>")
    followers = [j for j in robot.joints if j.mimic is not None]
    if followers:  # mimic joints: one linear joint equality each (module docstring)
        lines.append("  <equality>")
        lines += [f"    <joint name={quoteattr(j.name + '_mimic')} joint1={quoteattr(j.name)} "
                  f"joint2={quoteattr(j.mimic.leader)} polycoef=\"{_num(j.mimic.offset)} {_num(j.mimic.multiplier)} 0 0 0\" "
                  f'solref="{_vec(EQUALITY_SOLREF)}" solimp="{_vec(EQUALITY_SOLIMP)}"/>' for j in followers]
        lines.append("  </equality>")
    lines.append("  <actuator>")  # joint torques as controls (ctrl = tau [N m | N])
    for joint in robot.actuated_joints:
        limit = joint.limits.tau_max
        bound = f' ctrlrange="{_num(-limit)} {_num(limit)}"' if math.isfinite(limit) else ' ctrllimited="false"'
        lines.append(f"    <motor name={quoteattr(joint.name)} joint={quoteattr(joint.name)} gear=\"1\"{bound}/>")
    lines += ["  </actuator>", "</mujoco>"]
    return "\n".join(lines) + "\n", notes


def write_mjcf(path: str | Path, model, name: str | None = None, comment: str = "") -> list[str]:
    """Write ``mjcf_text(model)`` to ``path`` atomically; returns its notes."""
    text, notes = mjcf_text(model, name, comment)
    atomic_write_text(path, text)
    return notes
