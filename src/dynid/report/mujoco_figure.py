"""Figure of ``dynid replay`` (simulate/mujoco_check.py): per joint, the logged position beside
MuJoCo's simulation of the exported model (restarted from the log every window, dotted lines),
and the logged torque beside dynid's model and MuJoCo's inverse dynamics of the export."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynid.data.io import atomic_write_bytes
from dynid.report.figures import plt


def replay_figure(check, path: str | Path, title: str = "") -> None:
    """Write the PNG of a ``MujocoCheck`` to ``path`` (atomically)."""
    n = check.q.shape[1]
    t = check.t
    fig, axes = plt.subplots(n, 2, figsize=(13, 1.8 * n + 0.8), sharex=True, squeeze=False)
    for j in range(n):
        pos, tor = axes[j]
        pos.plot(t, check.q[:, j], color="0.25", lw=1.6, label="logged")
        if check.q_logged_torques is not None:
            pos.plot(t, check.q_logged_torques[:, j], color="C0", lw=0.9, label="MuJoCo, logged torques")
        pos.plot(t, check.q_model_torques[:, j], color="C1", lw=0.9, ls="--", label="MuJoCo, model torques")
        for s in check.starts:
            pos.axvline(t[s], color="0.8", lw=0.5, ls=":")
        pos.set_ylabel(f"q{j + 1}")
        if check.tau is not None:
            tor.plot(t, check.tau[:, j], color="0.6", lw=0.8, label="logged")
        tor.plot(t, check.tau_hat[:, j], color="C2", lw=1.0, label="dynid predict")
        tor.plot(t, check.tau_mujoco[:, j], color="C3", lw=0.8, ls="--", label="MuJoCo inverse dynamics")
        tor.set_ylabel(f"tau{j + 1}")
    axes[0, 0].legend(loc="upper right", fontsize=7, ncol=3)
    axes[0, 1].legend(loc="upper right", fontsize=7, ncol=3)
    agree = float(np.max(check.agreement()))
    axes[0, 0].set_title(f"positions: logged vs simulated (restart every {check.window:g} s)", fontsize=9)
    axes[0, 1].set_title(f"torques: MuJoCo vs dynid differ by <= {agree:.1e} of the RMS torque", fontsize=9)
    axes[-1, 0].set_xlabel("t [s]")
    axes[-1, 1].set_xlabel("t [s]")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    atomic_write_bytes(path, lambda tmp: fig.savefig(tmp, dpi=90, format="png"))
    plt.close(fig)
