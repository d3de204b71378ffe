"""Geometric constraints of an excitation trajectory: clearance and workspace, as margins.

Every constraint k is a margin g_k(q) that must stay >= 0:

- capsule pair (two links, or a link and the floor or a box): g = distance - clearance;
- workspace face (six per workspace box): g = p_flange - low or high - p_flange (one axis).

Pairs: every two capsules of links more than ``exempt_apart`` joints apart (default 2:
adjacent links touch by construction, and capsules of links two joints apart both enclose the
joint housing between them), except pairs already closer than the clearance at the start
posture (they touch by design, the "default pose" rule of collision-matrix tools). An obstacle
closer than the clearance at the start posture is an error. The floor belongs to the base:
links at most ``exempt_apart`` joints from the base are exempt from it as they are from the
base (the capsule of the second link encloses the shoulder housing, which sits on the base;
its far end is the third link's near end, which is checked).

Gradients (``jacobian``): with witness points A (on link a) and B (on link b, or fixed) and
the unit direction n in which the margin grows, dg/dq_j = n . (v_j(A) - v_j(B)), where the
velocity of a point x of a link carried by joint j per unit joint rate is
v_j(x) = R_j s_v,j + (R_j s_w,j) x (x - o_j) (envelope theorem: the closest points may be
held fixed).

Guarantee between samples (``guaranteed_margins``): |dg/dt| <= L_k = sum_j max|dq_j| (c_j,a +
c_j,b), with c_j,l = |s_v,j| + |s_w,j| rho_j,l and rho_j,l >= |x - o_j| for every point of the
capsule (summed lengths of the joint placements from joint j to the capsule's link, a
prismatic joint's stroke included, plus the capsule end's distance from its link origin).
On an interval of width h between samples g_m and g_m+1, g(t) >= (g_m + g_m+1) / 2 - L_k h / 2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.dynamics import forward_kinematics
from dynid.errors import ModelError
from dynid.excite.geometry.distance import segment_box, segment_halfspace, segment_segment

UP = np.array([0.0, 0.0, 1.0])
CHUNK = 4096  # samples per block of distance computations (bounded memory)
# links at most this many joints apart are not checked against each other: adjacent links
# touch by construction, and the capsules of links two joints apart both enclose the joint
# housing between them (their real shapes are kept apart by the joint limits)
SELF_EXEMPT_APART = 2


def link_label(robot, link: int) -> str:
    return "base" if link < 0 else f"link {link + 1} ({robot.links[link].name})"


def joints_apart(robot, la: int, lb: int) -> int:
    """Number of joints between links la and lb along the tree (-1 = base); 1 = adjacent."""
    chain = lambda k: () if k < 0 else robot.ancestors[k]  # noqa: E731
    ca, cb = chain(la), chain(lb)
    common = 0
    while common < min(len(ca), len(cb)) and ca[common] == cb[common]:
        common += 1
    return len(ca) + len(cb) - 2 * common


@dataclass(frozen=True, eq=False)
class GeometricConstraints:
    """Pairs and workspace faces of one robot, capsule set, scene and clearance [m]."""

    robot: object
    capsules: object
    scene: object
    clearance: float
    workspace: object = None
    exempt: tuple = ()  # (capsule a, capsule b) pairs exempted at the start posture
    exempt_apart: int = SELF_EXEMPT_APART

    def __post_init__(self):
        robot, caps = self.robot, self.capsules
        exempt = {tuple(sorted(p)) for p in self.exempt}
        pairs = [(i, j) for i in range(len(caps)) for j in range(i + 1, len(caps))
                 if joints_apart(robot, caps.link[i], caps.link[j]) > self.exempt_apart and (i, j) not in exempt]
        on_base = {-1} | {k for k in range(robot.n_bodies) if joints_apart(robot, -1, k) <= self.exempt_apart}
        floor = [c for c in range(len(caps)) if caps.link[c] not in on_base] if self.scene.floor is not None else []
        boxes = [(b, c) for b in range(len(self.scene.boxes)) for c in range(len(caps)) if caps.link[c] >= 0]
        set_ = object.__setattr__
        set_(self, "self_pairs", np.array(pairs, dtype=np.int64).reshape(-1, 2))
        set_(self, "floor_capsules", np.array(floor, dtype=np.int64))
        set_(self, "box_pairs", np.array(boxes, dtype=np.int64).reshape(-1, 2))
        n_ws = 6 if self.workspace is not None else 0
        set_(self, "size", len(pairs) + len(floor) + len(boxes) + n_ws)
        link_a = np.r_[caps.link[self.self_pairs[:, 0]], caps.link[self.floor_capsules],
                       caps.link[self.box_pairs[:, 1]], [self.workspace.link] * n_ws if n_ws else []]
        link_b = np.r_[caps.link[self.self_pairs[:, 1]], -np.ones(len(floor) + len(boxes) + n_ws)]
        set_(self, "link_a", link_a.astype(np.int64))
        set_(self, "link_b", link_b.astype(np.int64))
        required = np.r_[np.full(len(pairs) + len(floor) + len(boxes), self.clearance), np.zeros(n_ws)]
        set_(self, "required", required)
        # ancestors mask, row link + 1 (row 0: the base, moved by no joint)
        anc = np.zeros((robot.n_bodies + 1, robot.n_bodies), dtype=bool)
        for k, chain in enumerate(robot.ancestors):
            anc[k + 1, list(chain)] = True
        set_(self, "ancestors", anc)
        from dynid.excite.geometry.kernels import BOX, FLOOR, SELF

        kind = np.r_[np.full(len(pairs), SELF), np.full(len(floor), FLOOR), np.full(len(boxes), BOX)]
        first = np.r_[self.self_pairs[:, 0], self.floor_capsules, self.box_pairs[:, 1]]
        second = np.r_[self.self_pairs[:, 1], np.zeros(len(floor)), self.box_pairs[:, 0]]
        set_(self, "kernel_table", (kind.astype(np.int64), first.astype(np.int64), second.astype(np.int64)))

    # -- labels -------------------------------------------------------------------------
    def labels(self) -> list[str]:
        robot, caps = self.robot, self.capsules
        out = [f"{link_label(robot, caps.link[i])} - {link_label(robot, caps.link[j])}" for i, j in self.self_pairs]
        out += [f"{link_label(robot, caps.link[c])} - floor" for c in self.floor_capsules]
        out += [f"{link_label(robot, caps.link[c])} - obstacle '{self.scene.boxes[b].name}'" for b, c in self.box_pairs]
        if self.workspace is not None:
            out += [f"flange '{self.workspace.name}' {axis} {side} workspace"
                    for side in ("above the lower bound of", "below the upper bound of") for axis in "xyz"]
        return out

    # -- margins and witnesses ----------------------------------------------------------
    def _witnesses(self, q: np.ndarray):
        """Margins, witness points A and B and growth directions n (N, K, 3), link poses."""
        rot, org = forward_kinematics(self.robot, q)
        p0, p1 = self.capsules.world_segments(rot, org)
        r = self.capsules.radius
        parts_g, parts_a, parts_b, parts_n = [], [], [], []
        if len(self.self_pairs):
            i, j = self.self_pairs[:, 0], self.self_pairs[:, 1]
            d, ca, cb = segment_segment(p0[:, i], p1[:, i], p0[:, j], p1[:, j])
            parts_g.append(d - r[i] - r[j])
            parts_a.append(ca)
            parts_b.append(cb)
            parts_n.append((ca - cb) / np.where(d > 1e-12, d, np.inf)[..., None])
        if len(self.floor_capsules):
            c = self.floor_capsules
            h, point, _ = segment_halfspace(p0[:, c], p1[:, c], UP, self.scene.floor)
            parts_g.append(h - r[c])
            parts_a.append(point)
            parts_b.append(point)
            parts_n.append(np.broadcast_to(UP, point.shape))
        for b, box in enumerate(self.scene.boxes):
            c = self.box_pairs[self.box_pairs[:, 0] == b, 1]
            d, point, closest = segment_box(p0[:, c], p1[:, c], box.rotation, box.center, box.half)
            parts_g.append(d - r[c])
            away = point - closest
            norm = np.linalg.norm(away, axis=-1)
            sign = np.where(d >= 0, 1.0, -1.0)
            parts_a.append(point)
            parts_b.append(point)
            parts_n.append(sign[..., None] * away / np.where(norm > 1e-12, norm, np.inf)[..., None])
        if self.workspace is not None:
            ws = self.workspace
            p = np.einsum("nij,j->ni", rot[:, ws.link], ws.point) + org[:, ws.link]
            parts_g.append(np.concatenate([p - ws.low, ws.high - p], axis=1))
            parts_a.append(np.repeat(p[:, None], 6, axis=1))
            parts_b.append(np.repeat(p[:, None], 6, axis=1))
            parts_n.append(np.broadcast_to(np.vstack([np.eye(3), -np.eye(3)]), (len(q), 6, 3)))
        g = np.concatenate(parts_g, axis=1) - self.required
        return g, np.concatenate(parts_a, 1), np.concatenate(parts_b, 1), np.concatenate(parts_n, 1), rot, org

    def _margin_block(self, q: np.ndarray) -> np.ndarray:
        from dynid.excite.geometry.distance import GOLDEN_STEPS
        from dynid.excite.geometry.kernels import pair_margins, world_segments

        caps, ws = self.capsules, self.workspace
        link, a, b = caps.link, caps.a, caps.b
        if ws is not None:  # the flange point rides along as a last, zero-length segment
            link, a, b = np.r_[link, ws.link], np.vstack([a, ws.point]), np.vstack([b, ws.point])
        p0, p1 = world_segments(self.robot, q, link, a, b)
        n_pairs = self.size - (6 if ws is not None else 0)
        g = pair_margins(p0, p1, caps.radius, self.kernel_table, self.required[:n_pairs],
                         self.scene.floor, self.scene.boxes, GOLDEN_STEPS)
        if ws is None:
            return g
        p = p0[:, -1]
        return np.concatenate([g, p - ws.low, ws.high - p], axis=1)

    def margins(self, q: np.ndarray) -> np.ndarray:
        """(N, K) margins at configurations q (N, n) (>= 0: satisfied); compiled loop
        (``kernels``), the same numbers as the witnesses' NumPy path of ``jacobian``."""
        from dynid.excite.deadline import check_time

        q = np.atleast_2d(q)
        if self.size == 0:
            return np.zeros((len(q), 0))
        blocks = []
        for s in range(0, len(q), CHUNK):
            check_time()  # --max-seconds holds inside a generation too (excite/deadline.py)
            blocks.append(self._margin_block(q[s:s + CHUNK]))
        return np.concatenate(blocks)

    def jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Margins (N, K) and their gradients dg/dq (N, K, n) at q (N, n)."""
        q = np.atleast_2d(q)
        g, a, b, direction, rot, org = self._witnesses(q)  # frames of the tree's bodies
        w = np.einsum("nkij,kj->nki", rot, self.robot.screw_axes[:, :3])  # joint axes (world)
        v = np.einsum("nkij,kj->nki", rot, self.robot.screw_axes[:, 3:])

        def side(points, links):  # n . v_j(x) for x on links (N, K, n)
            rel = points[:, :, None, :] - org[:, None, :, :]  # (N, K, n, 3)
            lin = np.einsum("nki,nji->nkj", direction, v)
            ang = np.einsum("nji,nkji->nkj", w, np.cross(rel, direction[:, :, None, :]))
            return (lin + ang) * self.ancestors[links + 1][None]

        # dq_tree/dq = G (mimic joints follow their leaders, q_tree = G q + o)
        return g, (side(a, self.link_a) - side(b, self.link_b)) @ self.robot.mimic_map[0]

    # -- bounds between samples ---------------------------------------------------------
    def speed_coefficients(self, q_min: np.ndarray, q_max: np.ndarray) -> np.ndarray:
        """(K, n) c such that |dg_k/dt| <= sum_j c_kj |dq_j| (module docstring)."""
        robot, caps = self.robot, self.capsules
        n = robot.n_bodies
        g_map, offset = robot.mimic_map
        revolute = np.array([j.type == "revolute" for j in robot.joints])
        reach = np.abs(g_map) @ np.maximum(np.abs(q_min), np.abs(q_max)) + np.abs(offset)
        stroke = np.where(revolute, 0.0, reach)
        step = np.array([np.linalg.norm(j.placement_translation) + np.linalg.norm(j.offset_translation)
                         for j in robot.joints]) + stroke
        # chain[j, l]: summed step lengths from joint j (exclusive) to link l (inclusive)
        chain = np.zeros((n, n))
        for link, path in enumerate(robot.ancestors):
            for pos, j in enumerate(path):
                chain[j, link] = step[list(path[pos + 1:])].sum()
        sw = np.linalg.norm(robot.screw_axes[:, :3], axis=1)
        sv = np.linalg.norm(robot.screw_axes[:, 3:], axis=1)
        extent = np.maximum(np.linalg.norm(caps.a, axis=1), np.linalg.norm(caps.b, axis=1))

        def side(links, extents):  # (K, n)
            out = np.zeros((len(links), n))
            moving = links >= 0
            rho = chain[:, links[moving]].T + extents[moving, None]
            out[moving] = (sv + sw * rho) * self.ancestors[links[moving] + 1]
            return out

        ext_a = np.r_[extent[self.self_pairs[:, 0]], extent[self.floor_capsules], extent[self.box_pairs[:, 1]],
                      [np.linalg.norm(self.workspace.point)] * 6 if self.workspace is not None else []]
        ext_b = np.r_[extent[self.self_pairs[:, 1]], np.zeros(self.size - len(self.self_pairs))]
        # |dq_tree_j| <= sum_i |G_ji| |dq_i|
        return (side(self.link_a, ext_a) + side(self.link_b, ext_b)) @ np.abs(g_map)

    def guaranteed_margins(self, trajectory, limits, samples: int) -> dict:
        """Over one period of a periodic trajectory: per constraint the sampled minimum margin,
        its time, and a guaranteed lower bound between samples (module docstring)."""
        from dynid.excite.limits import periodic_extrema

        h = trajectory.period / samples
        t = np.arange(samples) * h
        q = trajectory.derivative(t, 0)
        g = self.margins(q)
        hi, lo = periodic_extrema(trajectory, 1, samples)
        speed = np.maximum(np.abs(hi), np.abs(lo))
        lipschitz = self.speed_coefficients(limits.q_min, limits.q_max) @ speed
        between = 0.5 * (g + np.roll(g, -1, axis=0)) - 0.5 * h * lipschitz
        at = np.argmin(g, axis=0) if g.size else np.zeros(0, dtype=int)
        return {"sampled": g.min(axis=0) if g.size else np.zeros(0), "time": t[at],
                "guaranteed": between.min(axis=0) if g.size else np.zeros(0), "lipschitz": lipschitz,
                "samples": samples, "q_at": q[at] if g.size else np.zeros((0, self.robot.n))}


def build_constraints(robot, capsules, scene, clearance: float, q_start, workspace=None,
                      exempt_apart: int = SELF_EXEMPT_APART) -> GeometricConstraints:
    """Constraints with the start-posture rules: pairs of links already closer than the
    clearance there are exempt; an obstacle, the floor or the workspace violated there is an
    error naming the link and the obstacle."""
    if not (np.isfinite(clearance) and clearance >= 0):
        raise ModelError(f"--clearance must be a distance >= 0 [m], got {clearance}")
    if exempt_apart < 1:
        raise ModelError(f"--self-exempt must be >= 1 (adjacent links always touch), got {exempt_apart}")
    full = GeometricConstraints(robot, capsules, scene, float(clearance), workspace, (), int(exempt_apart))
    g = full.margins(np.asarray(q_start, dtype=float)[None, :])[0]
    n_self = len(full.self_pairs)
    exempt = tuple(tuple(int(v) for v in full.self_pairs[k]) for k in np.flatnonzero(g[:n_self] < 0))
    labels = full.labels()
    bad = [k for k in range(n_self, full.size) if g[k] < 0]
    if bad:
        k = min(bad, key=lambda k: g[k])
        distance = g[k] + full.required[k]
        if k >= full.size - (6 if workspace is not None else 0):
            raise ModelError(f"the start posture puts the {labels[k]} by {-g[k]:.3f} m "
                             "(give --start-posture or widen --workspace)")
        raise ModelError(f"{labels[k]}: {distance:.3f} m apart at the start posture, less than the clearance "
                         f"{clearance:g} m (move the obstacle, lower --clearance or give --start-posture)")
    return GeometricConstraints(robot, capsules, scene, float(clearance), workspace, exempt, int(exempt_apart))
