"""Joint logs simulated by MuJoCo, the independent simulator: a robot whose true inertials differ
from its description, with rotor inertia (armature), viscous and Coulomb friction (damping,
frictionloss: MuJoCo's friction constraint, static at rest), tracking a multi-sine under a PD
controller with MuJoCo's own bias forces fed forward, logged like a real drive: positions from
a quantized motor encoder, torques with noise."""

from __future__ import annotations

import mujoco
import numpy as np

from dynid.export.urdf import urdf_text
from dynid.robot.inertia import from_mass_com_inertia, to_mass_com_inertia


def perturbed(robot, seed: int, amount: float = 0.4):
    """The description with every link's mass, centre of mass and principal moments off by up to
    ``amount`` (uniform; the centre of mass by up to amount x max(|c|, 2 cm) per axis), physical."""
    rng = np.random.default_rng(seed)
    thetas = []
    for link in robot.links:
        m, c, ic = to_mass_com_inertia(link.inertial)
        lam, vec = np.linalg.eigh(ic)
        lam = np.sort(lam * rng.uniform(1 - amount, 1 + amount, 3))
        lam[2] = min(lam[2], 0.97 * (lam[0] + lam[1]))  # strictly inside the triangle inequality
        c = c + rng.uniform(-amount, amount, 3) * max(float(np.linalg.norm(c)), 0.02)
        thetas.append(from_mass_com_inertia(m * rng.uniform(1 - amount, 1 + amount), c, vec @ np.diag(lam) @ vec.T))
    return robot.with_parameters(np.concatenate(thetas))


def truth_model(robot, armature, viscous, coulomb):
    """MuJoCo model of ``robot`` (its URDF compiled by MuJoCo) with per-joint armature, damping and
    frictionloss (n,) set through MuJoCo's own model editing (MjSpec)."""
    spec = mujoco.MjSpec.from_string(urdf_text(robot))
    for k, name in enumerate(robot.joint_names):
        joint = spec.joint(name)
        joint.armature, joint.frictionloss = armature[k], coulomb[k]
        linear_only = np.zeros(np.size(joint.damping))  # MuJoCo 4: polynomial damping, linear term first
        linear_only.flat[0] = viscous[k]
        joint.damping = linear_only if linear_only.size > 1 else float(viscous[k])
    return spec.compile()


def mujoco_log(model, robot, reference, duration: float, rate: float = 200.0, counts: int = 2**14,
               noise: float = 0.01, seed: int = 0, step: float = 1e-3, friction=None,
               bandwidth: float = 10.0) -> dict[str, np.ndarray]:
    """Columns {t, q1.., tau1..} of a log of ``model`` tracking ``reference`` (a MultiSine) for
    ``duration`` s: tau = bias(q, dq) + M(q) ddq_ref + Kp e + Kd de (``bandwidth`` Hz), MuJoCo's
    Euler step ``step``; logged every 1 / rate s with q rounded to a motor encoder of ``counts``
    per turn (through the gear ratio) and tau plus Gaussian noise of ``noise`` x its RMS.
    ``friction(tau, dq)`` (n,), if given, is a friction torque MuJoCo has no term for, from the
    actuator torque and MuJoCo's own velocity at each step: the joints get tau minus it."""
    rng = np.random.default_rng(seed)
    model.opt.timestep = step
    data = mujoco.MjData(model)
    adr = np.array([model.joint(name).qposadr[0] for name in robot.joint_names])
    dof = np.array([model.joint(name).dofadr[0] for name in robot.joint_names])
    q_ref, dq_ref, ddq_ref = reference.sample(np.arange(0.0, duration, step))
    data.qpos[adr], data.qvel[dof] = q_ref[0], dq_ref[0]
    mujoco.mj_forward(model, data)
    diagonal = np.empty(model.nv)
    for j in range(model.nv):  # M's diagonal from products M e_j (the same call in MuJoCo 3 and 4)
        column, unit = np.zeros(model.nv), np.eye(model.nv)[j]
        mujoco.mj_mulM(model, data, column, unit)
        diagonal[j] = column[j]
    w = 2 * np.pi * bandwidth
    kp, kd = diagonal[dof] * w**2, diagonal[dof] * 2 * w
    every = int(round(1.0 / (rate * step)))
    t_log, q_log, tau_log = [], [], []
    feed = np.zeros(model.nv)
    for k in range(q_ref.shape[0]):  # a controller in the loop: one MuJoCo step at a time
        e, de = q_ref[k] - data.qpos[adr], dq_ref[k] - data.qvel[dof]
        acc = np.zeros(model.nv)
        acc[dof] = ddq_ref[k]
        mujoco.mj_mulM(model, data, feed, acc)
        tau = data.qfrc_bias[dof] + feed[dof] + kp * e + kd * de
        if k % every == 0:
            t_log.append(data.time)
            q_log.append(data.qpos[adr].copy())
            tau_log.append(tau)
        data.qfrc_applied[dof] = tau if friction is None else tau - friction(tau, data.qvel[dof])
        mujoco.mj_step(model, data)
    q, tau = np.array(q_log), np.array(tau_log)
    resolution = 2 * np.pi / (counts * robot.gear_ratios)
    q = np.round(q / resolution) * resolution
    tau = tau + rng.normal(size=tau.shape) * noise * np.sqrt(np.mean(tau**2, axis=0))
    columns = {"t": np.array(t_log)}
    columns.update({f"q{j + 1}": q[:, j] for j in range(robot.n)})
    columns.update({f"tau{j + 1}": tau[:, j] for j in range(robot.n)})
    return columns


def er3a_off_its_description(root, seed: int, amount: float = 0.4) -> tuple[object, np.ndarray]:
    """(er3a description, true full parameters (p,)) of an er3a whose inertials (``perturbed``) and
    rotor inertias are off the description's by up to ``amount``, with the description's default
    friction; writes ``root``/train.csv (20 s) and validation.csv (10 s, another multi-sine) of
    MuJoCo logs at 200 Hz (``mujoco_log``): the experiment of tests/test_regularized_pc.py and
    bench/regularized_prior.py."""
    import dynid
    from dynid.data.io import write_columns
    from dynid.identify import ModelOptions
    from dynid.identify.model import full_parameters
    from dynid.simulate import default_friction, random_multisine

    cad = dynid.load_robot("er3a")
    true = perturbed(cad, seed, amount)
    rotor = cad.rotor_inertias * np.random.default_rng(seed).uniform(1 - amount, 1 + amount, cad.n)
    friction = default_friction(cad, ModelOptions())
    for name, s, seconds in (("train", seed, 20.0), ("validation", seed + 100, 10.0)):
        model = truth_model(true, rotor, friction[:, 1], friction[:, 0])
        write_columns(root / f"{name}.csv", mujoco_log(model, true, random_multisine(cad, seed=s, fraction=0.7),
                                                       seconds, seed=s))
    truth = full_parameters(true, ModelOptions(), friction)
    truth[-cad.n:] = rotor
    return cad, truth
