"""MuJoCo as an independent simulator of an exported model (export/mjcf.py): its inverse
dynamics along a trajectory, and a forward simulation under given joint torques.

- ``inverse_torques``: per sample ``mj_inverse`` with MuJoCo's constraints disabled (joint limits
  and friction constraints would add their solver's forces): M(q) ddq + c(q, dq) + g(q) with the
  armature in M and the passive damping force, plus the friction terms the constraint stands for
  while moving, sum over joints and tendons of frictionloss sign(velocity) J^T (``sign`` may be
  dynid's tanh(v / smooth_sign)). This is what ``dynid predict`` computes from the same result
  (tests: equal to 1e-5 of the RMS torque). MuJoCo has no batched inverse dynamics: the samples
  are a Python loop over ``mj_inverse`` (a few microseconds each; a check, not a hot path).
- ``replay``: open-loop forward simulation from a logged initial state under torques given at
  the log's times (linearly interpolated onto MuJoCo's time step), by ``mujoco.rollout`` (one C
  loop), with MuJoCo's friction constraints active (static friction at rest). It answers "does
  the identified model, simulated, move as the robot moved under the same torques": the
  positions drift apart slowly where the model is right and quickly where it is not.

Joints are matched by name: the data columns follow the robot's actuated joints.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynid.errors import DataError


def load_model(path: str | Path):
    """A MuJoCo MjModel from an MJCF or URDF file (errors name the file)."""
    import mujoco

    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as exc:
        raise DataError(f"{path}: MuJoCo cannot load it ({str(exc).strip().splitlines()[0]})") from None


def joint_addresses(model, joint_names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(qpos, dof) addresses (n,) of the named joints in a MuJoCo model."""
    names = [model.joint(i).name for i in range(model.njnt)]
    missing = [name for name in joint_names if name not in names]
    if missing:
        raise DataError(f"the MuJoCo model has no joint {missing[0]!r} (its joints: {names})")
    ids = [names.index(name) for name in joint_names]
    return np.array(model.jnt_qposadr[ids]), np.array(model.jnt_dofadr[ids])


def _sign(v: np.ndarray, smooth_sign: float) -> np.ndarray:
    return np.tanh(v / smooth_sign) if smooth_sign > 0 else np.sign(v)


def inverse_torques(model, joint_names: list[str], q, dq, ddq, smooth_sign: float = 0.0) -> np.ndarray:
    """(N, n) joint torques of the MuJoCo model along (q, dq, ddq) (N, n) (module docstring)."""
    import mujoco

    q, dq, ddq = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, dq, ddq))
    qadr, dadr = joint_addresses(model, joint_names)
    if model.nq != model.nv or model.nv != len(joint_names):
        raise DataError(f"the MuJoCo model has {model.nv} degrees of freedom, the data {len(joint_names)} joints")
    flags = int(model.opt.disableflags)
    model.opt.disableflags = flags | int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    data = mujoco.MjData(model)
    out = np.empty(q.shape)
    try:
        for s in range(q.shape[0]):  # MuJoCo has no batched inverse dynamics (module docstring)
            data.qpos[qadr], data.qvel[dadr], data.qacc[dadr] = q[s], dq[s], ddq[s]
            mujoco.mj_inverse(model, data)
            force = data.qfrc_inverse + model.dof_frictionloss * _sign(data.qvel, smooth_sign)
            if model.ntendon:
                force += (model.tendon_frictionloss * _sign(data.ten_velocity, smooth_sign)) @ _tendon_jacobian(
                    model, data)
            out[s] = force[dadr]
    finally:
        model.opt.disableflags = flags
    return out


def _tendon_jacobian(model, data) -> np.ndarray:
    """(ntendon, nv) dense tendon Jacobian of the current state."""
    import mujoco

    if data.ten_J.shape == (model.ntendon, model.nv):
        return np.asarray(data.ten_J)
    dense = np.zeros((model.ntendon, model.nv))
    layout = model if hasattr(model, "ten_J_rownnz") else data  # MuJoCo 4 keeps the sparsity on the model
    mujoco.mju_sparse2dense(dense, data.ten_J, layout.ten_J_rownnz, layout.ten_J_rowadr, layout.ten_J_colind)
    return dense


def windows(t: np.ndarray, window: float | None, breaks=(), keep=None) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) sample indices of the replay windows: runs of ``keep`` samples (default all)
    not crossing a segment start (``breaks``), each cut every ``window`` seconds of its own time
    (None: whole runs); windows of one sample are dropped."""
    keep = np.ones(len(t), dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    cut = np.zeros(len(t) + 1, dtype=bool)
    cut[np.asarray(breaks, dtype=np.int64)] = True
    edges = np.flatnonzero(np.diff(np.concatenate([[False], keep, [False]]).astype(np.int8)) != 0)
    starts, ends = [], []
    for a, b in zip(edges[::2], edges[1::2]):  # runs of kept samples, then split at the breaks
        inner = np.concatenate([[a], a + 1 + np.flatnonzero(cut[a + 1:b]), [b]])
        for lo, hi in zip(inner[:-1], inner[1:]):
            span = float(t[hi - 1] - t[lo])
            cuts = [lo] if window is None or window <= 0 or window >= span else \
                lo + np.searchsorted(t[lo:hi], t[lo] + window * np.arange(int(np.ceil(span / window))))
            cuts = np.unique(cuts)
            starts += list(cuts)
            ends += list(np.append(cuts[1:], hi))
    starts, ends = np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
    return starts[ends - starts > 1], ends[ends - starts > 1]


def replay(model, joint_names: list[str], t, q, dq, tau, window: float | None = None,
           step: float = 1e-3, breaks=(), keep=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q_sim, dq_sim, starts): the MuJoCo model simulated open loop under the joint torques
    tau (N, n) given at the times t (N,) [s] (linearly interpolated onto MuJoCo's time ``step``,
    RK4: both set in ``model.opt``), sampled at t. Each ``window`` seconds (None: one window)
    the simulation starts again from the logged state (q, dq) (N, n) at that sample
    (``starts``: their indices): an arm under gravity is open-loop unstable (errors grow e-fold
    in ~sqrt(l / g), a fifth of a second), so a simulation is judged over horizons where that
    growth is small (multiple shooting). A window also starts at every index of ``breaks`` (a
    new segment of the log, whose clock may start again), and only samples of ``keep`` (default
    all) are replayed: the filter edges of a segment carry distorted accelerations, whose
    torques would kick the simulation off (others are NaN). All windows run in one
    ``mujoco.rollout`` call."""
    import mujoco
    from mujoco import rollout

    t, q, dq = np.asarray(t, dtype=float), np.atleast_2d(np.asarray(q, dtype=float)), np.atleast_2d(dq)
    tau = np.atleast_2d(np.asarray(tau, dtype=float))
    qadr, dadr = joint_addresses(model, joint_names)
    model.opt.timestep = step
    model.opt.integrator = int(mujoco.mjtIntegrator.mjINT_RK4)
    starts, ends = windows(t, window, breaks, keep)
    if not starts.size:
        raise DataError(f"{len(t)} samples ({int(np.sum(keep)) if keep is not None else len(t)} away from the "
                        "filter edges): nothing to replay")
    steps = int(np.ceil(max(float(t[e - 1] - t[s]) for s, e in zip(starts, ends)) / step)) + 1
    data = mujoco.MjData(model)
    spec = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)  # time, qpos, qvel, ... in this order
    initial = np.empty((starts.size, mujoco.mj_stateSize(model, spec)))
    applied = np.zeros((starts.size, steps, model.nv))
    for w, s in enumerate(starts):
        data.qpos[qadr], data.qvel[dadr], data.time = q[s], dq[s], t[s]
        mujoco.mj_getState(model, data, initial[w], spec)
        grid = t[s] + step * np.arange(steps)
        e = ends[w]  # the window's own samples (a log's clock may restart at a segment)
        applied[w][:, dadr] = np.column_stack([np.interp(grid, t[s:e], tau[s:e, j]) for j in range(tau.shape[1])])
    states, _ = rollout.rollout(model, data, initial, applied, control_spec=int(mujoco.mjtState.mjSTATE_QFRC_APPLIED))
    q_sim, dq_sim = np.full(q.shape, np.nan), np.full(q.shape, np.nan)
    for w, (s, e) in enumerate(zip(starts, ends)):  # loop over windows: each a few interpolations
        times = np.concatenate([[t[s]], states[w, :, 0]])
        qpos = np.vstack([initial[w, 1:1 + model.nq], states[w, :, 1:1 + model.nq]])
        qvel = np.vstack([initial[w, 1 + model.nq:1 + model.nq + model.nv],
                          states[w, :, 1 + model.nq:1 + model.nq + model.nv]])
        q_sim[s:e] = np.column_stack([np.interp(t[s:e], times, qpos[:, a]) for a in qadr])
        dq_sim[s:e] = np.column_stack([np.interp(t[s:e], times, qvel[:, d]) for d in dadr])
    return q_sim, dq_sim, starts
