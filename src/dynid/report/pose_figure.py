"""Robot postures as pictures: a stick figure with the link frames (thesis Figs 4.6 and 4.9,
seed 000 Figs 9-11, seed 001 Fig. 2), from forward kinematics only, so any robot dynid loads.

Each link frame origin is joined to its parent's (the base at the world origin); every frame
is drawn as three short axes (x red, y green, z blue); each link's centre of mass is a dot,
and a link without children is drawn on to twice its centre of mass offset (the far end of a
homogeneous link such as the seeds' cylinders). Agg backend (``report.figures``).
"""

from __future__ import annotations

import numpy as np

from dynid.report.figures import plt

AXIS_COLORS = ("tab:red", "tab:green", "tab:blue")


def posture_points(robot, q) -> dict:
    """World geometry of a posture: origin (n, 3), rotation (n, 3, 3), com (n, 3), segments
    [(start (3,), end (3,))], tips [(start, end)] of the leaf links."""
    from dynid.dynamics import forward_kinematics
    from dynid.robot.inertia import to_mass_com_inertia

    q = np.asarray(q, dtype=float)
    rotation, origin = forward_kinematics(robot, q)
    com = np.empty_like(origin)
    for i, link in enumerate(robot.links):  # loop over links: their COM in world coordinates
        m, c, _ = to_mass_com_inertia(link.inertial)
        com[i] = origin[i] + rotation[i] @ (np.asarray(c, dtype=float) if m > 0 else np.zeros(3))
    parents = robot.parents
    segments = [(np.zeros(3) if p < 0 else origin[p], origin[i]) for i, p in enumerate(parents)]
    leaves = [i for i in range(origin.shape[0]) if i not in set(parents.tolist())]
    tips = [(origin[i], origin[i] + 2.0 * (com[i] - origin[i])) for i in leaves]
    return {"origin": origin, "rotation": rotation, "com": com, "segments": segments, "tips": tips}


def draw_posture(ax, robot, q, title: str = "", frames: bool = True, frame_scale: float | None = None) -> None:
    """Draw one posture on a 3D axes."""
    g = posture_points(robot, q)
    pts = np.vstack([np.zeros((1, 3)), g["origin"], g["com"]] + [np.vstack(t) for t in g["tips"]])
    size = float(np.max(np.ptp(pts, axis=0))) or 1.0
    scale = frame_scale or 0.12 * size
    for a, b in g["segments"] + g["tips"]:
        ax.plot(*np.column_stack([a, b]), color="0.2", lw=2.5, solid_capstyle="round")
    ax.scatter(*g["origin"].T, color="0.2", s=18, depthshade=False)
    ax.scatter(*g["com"].T, color="tab:orange", s=14, depthshade=False)
    ax.scatter([0], [0], [0], color="k", marker="s", s=30, depthshade=False)
    if frames:
        for o, r in zip(g["origin"], g["rotation"]):
            for k in range(3):
                ax.plot(*np.column_stack([o, o + scale * r[:, k]]), color=AXIS_COLORS[k], lw=1.0)
    center = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
    half = 0.55 * size
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    ax.set_zlim(center[2] - half, center[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x [m]", fontsize=7)
    ax.set_ylabel("y [m]", fontsize=7)
    ax.set_zlabel("z [m]", fontsize=7)
    ax.tick_params(labelsize=6)
    if title:
        ax.set_title(title, fontsize=9)


def postures_figure(robot, poses: list, title: str = "", frames: bool = True, cols: int = 3):
    """A grid of postures: poses [(label, q (n,))]."""
    count = max(len(poses), 1)
    cols = min(cols, count)
    rows = (count + cols - 1) // cols
    fig = plt.figure(figsize=(4.2 * cols, 4.0 * rows + 0.4))
    for k, (label, q) in enumerate(poses):
        ax = fig.add_subplot(rows, cols, k + 1, projection="3d")
        draw_posture(ax, robot, q, label, frames)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
