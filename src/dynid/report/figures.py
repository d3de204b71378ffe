"""Figures of the report, drawn with matplotlib's Agg backend and returned as PNG data URIs."""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

DPI = 90


def data_uri(fig) -> str:
    """PNG of ``fig`` as a data URI (the figure is closed)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _thin(count: int, limit: int = 4000) -> slice:
    return slice(None, None, max(1, count // limit))


def torque_figure(t, tau, predictions: dict, title: str) -> str:
    """Per joint: measured torque and each model's prediction (left), residuals (right).

    t: (N,) [s]; tau: (N, n) measured [N m]; predictions: label -> (N, n)."""
    n = tau.shape[1]
    s = _thin(t.size)
    fig, axes = plt.subplots(n, 2, figsize=(13, 1.9 * n + 0.6), sharex=True, squeeze=False,
                             gridspec_kw={"width_ratios": [3, 2]})
    for j in range(n):
        ax, res = axes[j]
        ax.plot(t[s], tau[s, j], color="0.55", lw=0.8, label="measured")
        for k, (label, pred) in enumerate(predictions.items()):
            ax.plot(t[s], pred[s, j], lw=0.8, color=f"C{k}", label=label)
            res.plot(t[s], tau[s, j] - pred[s, j], lw=0.6, color=f"C{k}", label=label)
        ax.set_ylabel(f"tau{j + 1} [N m]")
        res.set_ylabel("residual [N m]")
        res.axhline(0.0, color="k", lw=0.5)
    axes[0, 0].legend(loc="upper right", fontsize=8, ncol=3)
    axes[0, 0].set_title(title, fontsize=10)
    axes[0, 1].set_title("measured - predicted", fontsize=10)
    axes[-1, 0].set_xlabel("t [s]")
    axes[-1, 1].set_xlabel("t [s]")
    fig.tight_layout()
    return data_uri(fig)


def trajectory_figure(t, q, dq, limits_q, limits_dq, title: str) -> str:
    """Positions and velocities over one period, as shares of the limits (1 = on the limit)."""
    n = q.shape[1]
    lo, hi = limits_q
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 3.6))
    for j in range(n):
        a.plot(t, (q[:, j] - mid[j]) / half[j], lw=1, label=f"q{j + 1}")
        b.plot(t, dq[:, j] / limits_dq[j], lw=1, label=f"dq{j + 1}")
    for ax, what in ((a, "position: (q - middle) / half range"), (b, "velocity: dq / dq_max")):
        ax.axhline(1.0, color="k", lw=0.5, ls="--")
        ax.axhline(-1.0, color="k", lw=0.5, ls="--")
        ax.set_xlabel("t [s]")
        ax.set_title(what, fontsize=10)
    a.legend(fontsize=8, ncol=3)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return data_uri(fig)


def evolution_figure(labels, values, mean, names, title: str) -> str:
    """Each parameter over the cycles, relative to its cross-cycle mean [%]."""
    fig, ax = plt.subplots(figsize=(13, 4))
    x = np.arange(1, len(labels) + 1)
    for k, name in enumerate(names):
        ax.plot(x, 100.0 * (values[:, k] - mean[k]) / abs(mean[k]), marker="o", ms=3, lw=1, label=name)
    ax.set_xticks(x, labels)
    ax.set_xlabel("cycle")
    ax.set_ylabel("deviation from the mean [%]")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, ncol=6)
    fig.tight_layout()
    return data_uri(fig)


def friction_velocity_figure(curves: list, title: str) -> str:
    """One panel per joint: points (speed, friction) per group and optional model lines.

    curves: per joint a dict {"joint", "groups": [(label, v, f)], "lines": [(label, v, f)]}."""
    n = len(curves)
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(13, 3.2 * rows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    for ax, c in zip(axes.ravel(), curves):
        for k, (label, v, f) in enumerate(c["groups"]):
            ax.plot(v, f, ".", ms=3, alpha=0.6, color=f"C{k}", label=label)
        for k, (label, v, f) in enumerate(c["lines"]):
            ax.plot(v, f, "-", lw=1.2, color="k" if k == 0 else f"C{k + 3}", label=label)
        ax.set_title(f"joint {c['joint']}", fontsize=10)
        ax.set_xlabel("dq [rad/s]")
        ax.set_ylabel("friction [N m]")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return data_uri(fig)


def drift_figure(panels: list, title: str) -> str:
    """Friction over operating time with the fitted eq. 5.4 curve: panels of (label, t, f, t_fit, f_fit)."""
    n = len(panels)
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(13, 3.0 * rows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    for ax, (label, t, f, tf, ff) in zip(axes.ravel(), panels):
        ax.plot(t, f, "o", ms=4, label="measured")
        if tf is not None:
            ax.plot(tf, ff, "-", lw=1.2, label="eq. 5.4 fit")
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("operating time [s]")
        ax.set_ylabel("friction [N m]")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return data_uri(fig)
