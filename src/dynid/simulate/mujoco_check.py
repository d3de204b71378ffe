"""An exported MuJoCo model against the identification it came from and the log it explains
(``dynid replay``): one call for the command, the tests and the figure in the docs.

1. ``dynid predict``'s torques on the log (preprocessed as in training): tau_hat;
2. MuJoCo's inverse dynamics of the exported model along the same motion, with its damping and
   frictionloss terms (``mujoco_bridge.inverse_torques``), plus the identified torque offsets
   MuJoCo cannot hold (export/mjcf.py): tau_mujoco. The two agree to rounding when the export
   is faithful (``agreement``: the largest difference over the RMS torque of each joint);
3. MuJoCo's forward simulation from the logged states under the logged torques (minus the
   offsets) and under the identified torques, restarted every ``window`` seconds and at every
   segment, over the samples away from the filter edges (``mujoco_bridge.replay``): how far the
   simulated robot drifts from the logged one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.data.columns import ColumnMapping
from dynid.identify.prediction import predict_file
from dynid.simulate.mujoco_bridge import inverse_torques, load_model, replay

WINDOW = 1.0  # s between restarts of the replay from the logged state


@dataclass
class MujocoCheck:
    """t (N,); q (N, n) logged (preprocessed); tau (N, n) logged or None; tau_hat (N, n) dynid's
    model; tau_mujoco (N, n) MuJoCo's inverse dynamics (+ offsets); q_logged_torques,
    q_model_torques (N, n) MuJoCo's simulation under the logged / the model's torques (None
    without logged torques); starts: restart indices; window [s]; interior (N,) samples away
    from the filter edges."""

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray | None
    tau_hat: np.ndarray
    tau_mujoco: np.ndarray
    q_logged_torques: np.ndarray | None
    q_model_torques: np.ndarray
    starts: np.ndarray
    window: float
    interior: np.ndarray

    def agreement(self) -> np.ndarray:
        """(n,) max |tau_mujoco - tau_hat| / RMS(tau_hat) per joint over the interior samples."""
        k = self.interior
        rms = np.sqrt(np.mean(self.tau_hat[k] ** 2, axis=0))
        return np.max(np.abs(self.tau_mujoco[k] - self.tau_hat[k]), axis=0) / np.where(rms > 0, rms, 1.0)

    def tracking(self, logged: bool = True) -> dict[str, list[float]]:
        """{"rms", "max"} (n,) of the simulated minus logged positions [rad | m], interior samples;
        ``logged``: under the logged torques (else the model's)."""
        q_sim = self.q_logged_torques if logged else self.q_model_torques
        if q_sim is None:
            return {"rms": None, "max": None}
        err = (q_sim - self.q)[self.interior]
        err = err[np.all(np.isfinite(err), axis=1)]  # samples no window covers (a lone sample) are NaN
        return {"rms": np.sqrt(np.mean(err**2, axis=0)).tolist(), "max": np.max(np.abs(err), axis=0).tolist()}

    def summary(self) -> dict:
        """What ``dynid replay --json`` writes (docs/formats.md)."""
        return {"window_s": self.window, "restarts": int(self.starts.size), "samples": int(self.t.size),
                "inverse_dynamics_agreement": self.agreement().tolist(),
                "tracking_logged_torques": self.tracking(True), "tracking_model_torques": self.tracking(False)}


def mujoco_check(robot, result: dict, model, mjcf_path, data_path, window: float = WINDOW,
                 mapping: ColumnMapping | None = None, step: float = 1e-3) -> MujocoCheck:
    """The three comparisons of the module docstring; ``model``: the ``export.IdentifiedModel``
    of ``result`` (its offsets), ``mjcf_path``: its MJCF export."""
    pred = predict_file(robot, result, data_path, mapping)
    offsets = np.zeros(robot.n) if model.offsets is None else np.asarray(model.offsets, dtype=float)
    names = robot.joint_names
    mj = load_model(mjcf_path)
    tau_mujoco = inverse_torques(mj, names, pred["q"], pred["dq"], pred["ddq"], model.options.smooth_sign) + offsets
    breaks = np.flatnonzero(np.diff(pred["segment"]) != 0) + 1
    interior = np.asarray(pred["interior"], dtype=bool)
    sim = {}
    for key, tau in (("model", pred["tau_hat"]), ("logged", pred["tau"])):
        if tau is not None:
            sim[key] = replay(load_model(mjcf_path), names, pred["t"], pred["q"], pred["dq"], tau - offsets, window,
                              step, breaks, interior)
    return MujocoCheck(pred["t"], pred["q"], pred["tau"], pred["tau_hat"], tau_mujoco,
                       sim["logged"][0] if "logged" in sim else None, sim["model"][0], sim["model"][2], window,
                       interior)
