"""A simulated drive log: t, q, dq (noisy if asked), tau, i, u columns, and the truth behind it."""

from __future__ import annotations

import numpy as np

from dynid.drives.motor import default_drives
from dynid.drives.signals import drive_signals, identification_truth
from dynid.identify.base import base_parameters
from dynid.identify.model import ModelOptions
from dynid.simulate.joint_space import default_friction


def drive_log(robot, kind: str, sample, t: np.ndarray, friction: np.ndarray | None = None,
              inductance: float | np.ndarray = 2e-3, dq_noise=0.0, u_noise=0.0, i_noise=0.0,
              seed: int = 0, drives=None) -> tuple[dict, dict]:
    """(columns {t, q1.., dq1.., tau1.., i1.., u1..}, truth) of ``robot`` with ``default_drives``.

    friction: (n, 2) joint-side [Fc, Fv] (default ``simulate.default_friction``); dq_noise,
    u_noise, i_noise: Gaussian noise std per joint (scalar or (n,)) added to the written dq, u, i
    (seeded). truth: drive constants, friction, true base parameters of the current- and
    voltage-input models (eq. V5) and the gains.
    """
    from dynid.drives.momentum import require_per_joint_drives

    require_per_joint_drives(robot)
    drives = drives or default_drives(robot, kind, inductance)
    if friction is None:
        friction = default_friction(robot, ModelOptions("coulomb-viscous"))
    sig = drive_signals(robot, drives, sample, t, friction)
    rng = np.random.default_rng(seed)
    noisy = lambda x, s: x + rng.normal(size=x.shape) * np.broadcast_to(np.asarray(s, float), (robot.n,))  # noqa: E731
    dq_m, u_m, i_m = noisy(sig["dq"], dq_noise), noisy(sig["u"], u_noise), noisy(sig["i"], i_noise)
    cols = {"t": np.asarray(t, dtype=float)}
    for prefix, arr in (("q", sig["q"]), ("dq", dq_m), ("tau", sig["tau"]), ("i", i_m), ("u", u_m)):
        cols.update({f"{prefix}{j + 1}": arr[:, j] for j in range(robot.n)})
    options = ModelOptions("coulomb-viscous")
    base = base_parameters(robot, options)
    truth = {"drives": drives.to_dict(), "friction": np.asarray(friction).tolist(),
             "base_names": base.names}
    for signal in ("current", "voltage"):
        theta, gain = identification_truth(robot, drives, friction, signal)
        truth[signal] = {"base_parameters": base.to_base(theta).tolist(), "gains": gain.tolist()}
    truth["electrical_damping"] = drives.gains()[1].tolist()
    return cols, truth
