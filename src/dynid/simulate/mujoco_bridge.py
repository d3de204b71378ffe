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

Joints are matched by name: the data columns follow the robot's actuated joints. A joint the data
does not name must follow one through an ``<equality joint>`` of degree 1 (a URDF mimic joint,
export/mjcf.py): y - y0 = a0 + a1 (x - x0), with y0, x0 the joints' reference positions.
``coordinate_map`` reads those equalities from the MuJoCo model itself (so a wrong export shows):
MuJoCo's coordinates are o + G q for the data's q, its velocities and accelerations G dq, G ddq,
and a generalized force f on MuJoCo's coordinates is G^T f on the data's (virtual work, the same
map as dynid's Robot.mimic_map).
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


def coordinate_map(model, joint_names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(G (nv, n), o (nq,)): MuJoCo's joint coordinates o + G q for the named joints' q (module
    docstring). Every other joint must follow a named one through active joint equalities of
    degree 1 (chains allowed); hinge and slide joints only."""
    import mujoco

    _, dadr = joint_addresses(model, joint_names)
    kinds = {int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)}
    if model.nq != model.nv or any(int(k) not in kinds for k in model.jnt_type):
        raise DataError("the MuJoCo model has free or ball joints: only hinge and slide joints are compared")
    g, o = np.zeros((model.nv, len(joint_names))), np.zeros(model.nq)
    g[dadr, np.arange(len(joint_names))] = 1.0
    known = set(dadr.tolist())
    follows = {}  # follower joint -> (leader joint or -1, a0, a1)
    for e in range(model.neq):
        if model.eq_type[e] != mujoco.mjtEq.mjEQ_JOINT or not model.eq_active0[e]:
            continue
        coef = np.asarray(model.eq_data[e, :5], dtype=float)
        if np.any(coef[2:] != 0):
            raise DataError(f"equality {model.equality(e).name or e} of the MuJoCo model is a polynomial of degree > 1 "
                            f"({coef.tolist()}): only linear joint couplings (URDF mimic) are compared")
        follower = int(model.eq_obj1id[e])
        if follower in follows:
            raise DataError(f"joint {model.joint(follower).name!r} of the MuJoCo model follows two joint equalities: "
                            "one linear coupling per joint is compared")
        follows[follower] = (int(model.eq_obj2id[e]), coef[0], coef[1])
    pending = {j: rule for j, rule in follows.items() if int(model.jnt_dofadr[j]) not in known}
    while pending:
        ready = [j for j, (lead, _, _) in pending.items() if lead < 0 or int(model.jnt_dofadr[lead]) in known]
        if not ready:
            break
        for j in ready:
            lead, a0, a1 = pending.pop(j)
            y, y0 = int(model.jnt_dofadr[j]), float(model.qpos0[model.jnt_qposadr[j]])
            if lead < 0:
                o[y] = y0 + a0
            else:
                x, x0 = int(model.jnt_dofadr[lead]), float(model.qpos0[model.jnt_qposadr[lead]])
                g[y], o[y] = a1 * g[x], y0 + a0 + a1 * (o[x] - x0)
            known.add(y)
    loose = [model.joint(i).name for i in range(model.njnt) if int(model.jnt_dofadr[i]) not in known]
    if loose:
        raise DataError(f"the MuJoCo model's joints {loose} are neither in the data ({joint_names}) nor follow one of "
                        "them through an <equality joint>")
    return g, o


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
    g, o = coordinate_map(model, joint_names)
    qpos, qvel, qacc = o + q @ g.T, dq @ g.T, ddq @ g.T
    flags = int(model.opt.disableflags)
    model.opt.disableflags = flags | int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    data = mujoco.MjData(model)
    out = np.empty(q.shape)
    try:
        for s in range(q.shape[0]):  # MuJoCo has no batched inverse dynamics (module docstring)
            data.qpos[:], data.qvel[:], data.qacc[:] = qpos[s], qvel[s], qacc[s]
            mujoco.mj_inverse(model, data)
            force = data.qfrc_inverse + model.dof_frictionloss * _sign(data.qvel, smooth_sign)
            if model.ntendon:
                force += (model.tendon_frictionloss * _sign(data.ten_velocity, smooth_sign)) @ _tendon_jacobian(
                    model, data)
            out[s] = force @ g
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
           step: float = 1e-3, breaks=(), keep=None, every_joint: bool = False
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    ``mujoco.rollout`` call. Joints the data does not name (followers, module docstring) start on
    their leaders and move under MuJoCo's equality constraints; ``every_joint``: q_sim and dq_sim
    are (N, nq) of all MuJoCo's joints (the followers' included) instead of the named ones."""
    import mujoco
    from mujoco import rollout

    t, q, dq = np.asarray(t, dtype=float), np.atleast_2d(np.asarray(q, dtype=float)), np.atleast_2d(dq)
    tau = np.atleast_2d(np.asarray(tau, dtype=float))
    qadr, dadr = joint_addresses(model, joint_names)
    g, o = coordinate_map(model, joint_names)
    read_q, read_v = (np.arange(model.nq), np.arange(model.nv)) if every_joint else (qadr, dadr)
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
        data.qpos[:], data.qvel[:], data.time = o + g @ q[s], g @ dq[s], t[s]
        mujoco.mj_getState(model, data, initial[w], spec)
        grid = t[s] + step * np.arange(steps)
        e = ends[w]  # the window's own samples (a log's clock may restart at a segment)
        applied[w][:, dadr] = np.column_stack([np.interp(grid, t[s:e], tau[s:e, j]) for j in range(tau.shape[1])])
    states, _ = rollout.rollout(model, data, initial, applied, control_spec=int(mujoco.mjtState.mjSTATE_QFRC_APPLIED))
    q_sim, dq_sim = (np.full((len(t), read_q.size), np.nan) for _ in range(2))
    for w, (s, e) in enumerate(zip(starts, ends)):  # loop over windows: each a few interpolations
        times = np.concatenate([[t[s]], states[w, :, 0]])
        qpos = np.vstack([initial[w, 1:1 + model.nq], states[w, :, 1:1 + model.nq]])
        qvel = np.vstack([initial[w, 1 + model.nq:1 + model.nq + model.nv],
                          states[w, :, 1 + model.nq:1 + model.nq + model.nv]])
        q_sim[s:e] = np.column_stack([np.interp(t[s:e], times, qpos[:, a]) for a in read_q])
        dq_sim[s:e] = np.column_stack([np.interp(t[s:e], times, qvel[:, d]) for d in read_v])
    return q_sim, dq_sim, starts
