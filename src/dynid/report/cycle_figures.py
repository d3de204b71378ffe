"""Figures of the per-cycle studies: relative RMSD over the cycles (thesis Figs 5.4-5.7, F.1-F.10)
and per-cycle parameters with the identifications of selected groups of cycles (Figs 5.10-5.14).
Agg backend (``report.figures``); ``save_png`` writes a figure to a file atomically."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from dynid.report.figures import DPI, plt


def save_png(fig, path: str | Path) -> None:
    """Write ``fig`` as a PNG file (atomic: a partial file never replaces the target)."""
    from dynid.data.io import atomic_write_bytes

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    atomic_write_bytes(path, lambda tmp: Path(tmp).write_bytes(buf.getvalue()))


def _grid(n: int, width: float = 13.0, height: float = 2.6):
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(width, height * rows + 0.6), squeeze=False, sharex=True)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:n]


def _finish(fig, axes, title: str):
    for ax in axes[-min(3, len(axes)):]:
        ax.set_xlabel("cycle")
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def rmsd_cycles_figure(series: list, n: int, title: str, ylabel: str = "relative RMSD"):
    """One panel per joint, one line per series (label, cycles (C,), values (C, n)): the thesis
    plots every test of a robot in one panel per joint with the same y scale (Figs 5.4-5.7)."""
    fig, axes = _grid(n)
    finite = [v[np.isfinite(v)] for _, _, v in series]
    top = max((float(f.max()) for f in finite if f.size), default=1.0)
    for j, ax in enumerate(axes):
        for k, (label, cycles, values) in enumerate(series):
            ax.plot(cycles, values[:, j], marker="o", ms=3, lw=1, color=f"C{k}", label=label)
        ax.set_title(f"joint {j + 1}", fontsize=10)
        ax.set_ylim(0.0, 1.05 * top)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    return _finish(fig, axes, title)


def units_figure(cycles, values: np.ndarray, names: list[str], units: dict, title: str):
    """Per-cycle values of some parameters (C, p) with the values identified on groups of cycles
    as horizontal lines (thesis Figs 5.13-5.14); units: {name: (p,) values}."""
    p = len(names)
    fig, axes = _grid(p, height=2.8)
    for k, ax in enumerate(axes):
        ax.plot(cycles, values[:, k], marker="o", ms=3, lw=1, color="0.3", label="per cycle")
        for u, (unit, v) in enumerate(units.items()):
            ax.axhline(v[k], lw=1.2, ls="--", color=f"C{u}", label=unit)
        ax.set_title(names[k], fontsize=10)
        ax.grid(alpha=0.3)
    return _finish(fig, axes, title)


def start_end_figure(errors: dict, n: int, title: str):
    """Thesis Fig. 5.15: one row per joint, the start and the end window of a stage
    (``identify.cycle_validation.stage_start_end``): measured torque minus each model's."""
    fig, axes = plt.subplots(n, 2, figsize=(11.0, 1.7 * n + 0.8), squeeze=False, sharey="row")
    for c, name in enumerate(("start", "end")):
        w = errors["windows"][name]
        t = np.asarray(w["t"]) - w["t"][0]
        tau = np.asarray(w["tau"])
        for j in range(n):
            ax = axes[j, c]
            for k, (kind, label) in enumerate((("own", f"cycle {errors['cycle']}'s own parameters"),
                                               ("whole", "the result's model"))):
                err = tau[:, j] - np.asarray(w[kind])[:, j]
                rmsd = errors["rmsd"][name][kind][j]
                ax.plot(t, err, lw=0.9, color=f"C{k}", label=f"{label} (RMSD {rmsd:.3g})")
            ax.axhline(0.0, color="0.6", lw=0.6)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6, loc="upper right")
            if c == 0:
                ax.set_ylabel(f"joint {j + 1}\nerror")
        axes[0, c].set_title(f"{name} of the {errors['stage']} stage", fontsize=10)
        axes[-1, c].set_xlabel("time in the window [s]")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
