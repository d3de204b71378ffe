"""Plausibility of joint data and of fits: a confident number from nonsense is a defect (issue 18
section 3). What cannot be right is refused (``DataError``); what is almost surely wrong warns
(``DynidWarning``, one line in the CLI) with its likely cause.

``LogChecks`` follows a log chunk by chunk as it is read (``data.io.load_joint_data`` and
``data.stream.raw_chunks`` call ``update`` on every cleaned chunk and ``finish`` at the end), in
O(chunk) memory:

- a value beyond ``ABSURD`` (1e9 rad, m, rad/s, N m...) cannot be a sample of a robot: refused
  (a corrupt sample such as 1e300 would otherwise spread through the filter into every number);
- positions far outside the joint limits (beyond a limit by more than half the range and 0.2
  rad or m), and typical speeds (the 90th percentile of |dq| from position differences) above
  3 x dq_max (or 50 rad/s, 10 m/s without a limit): degrees given as radians (x 57), millimetres
  as metres, motor-side angles, or a log of another robot;
- a logged velocity column of the opposite sign, or 3 times larger or smaller, than the velocity
  the positions show (deg/s, motor-side speeds, another signal: ``--ignore dq``);
- a median time step of 0.5 s or more (a robot log at 2 Hz or less): time in ms or us read as s;
  a step below 5 us: the time unit option is wrong the other way;
- jumps: a position step far larger than the joint's usual step (50 x its median and 0.1 rad or
  0.01 m, and beyond 1.5 x the joint's speed limit x the time step) inside a segment: an isolated
  spike (a corrupt sample), a jump of one turn (an angle wrapped to +-pi: the readers undo a
  revolute joint's steps of one turn before these checks, ``data.angles``), or a glitch;
- a torque that is one number in every sample while its joint moves (a placeholder column:
  a moving joint feels friction at least);
- a filled stretch: ``FILL_SAMPLES`` samples or more (and ``FILL_SECONDS``) over which every
  position and every torque changes exactly linearly while the robot moves: a gap filled by
  interpolation, fitted as if it were motion (a gap left as a gap splits the log, ``data.segments``).

``column_messages`` names log columns of joints the robot does not have (a warning: a log of
another robot, or a joint selection that drops joints inside the column order) and columns dynid
does not read (a note). The plausibility of fits and identified parameters is
``identify/plausibility.py``.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np

from dynid.errors import DataError, DynidWarning

ABSURD = 1e9  # no position [rad, m], speed, acceleration or torque [N m, N] of a robot reaches this
SPEED_FACTOR = 3.0  # typical speed above this multiple of dq_max: units
SPEED_WITHOUT_LIMIT = {True: 50.0, False: 10.0}  # rad/s (revolute), m/s (prismatic) when dq_max is unknown
SLOW_STEP, FAST_STEP = 0.5, 5e-6  # s: median time steps beyond these are a wrong time unit
VELOCITY_RATIO = 3.0  # a logged |dq| this many times larger or smaller than the positions' own: units
JUMP_FACTOR = 50.0
JUMP_FLOOR = {True: 0.1, False: 0.01}  # rad, m
JUMP_SPEED_MARGIN = 1.5  # x dq_max x time step: a fast joint of a slowly logged robot does not jump
FILL_SAMPLES, FILL_SECONDS = 1000, 5.0
FLAT_TOLERANCE = 1e-6  # |second difference| below this fraction of the column's magnitude: exactly linear
SUBSAMPLE = 4096  # steps per chunk used for the robust scales (medians, percentiles)
CONTRACT = re.compile(r"(q|dq|ddq|tau|i|u|temp)(\d+)|t|cycle|stage|segment|since_cold")


class PositionRange:
    """Running per-joint min and max of the positions read so far."""

    def __init__(self, n: int):
        self.low = np.full(n, np.inf)
        self.high = np.full(n, -np.inf)

    def update(self, q: np.ndarray) -> None:
        if q is None or q.shape[0] == 0:
            return
        columns = np.ascontiguousarray(q.T)  # reductions along contiguous rows: ~6x faster than axis 0
        if np.isfinite(columns).any():
            self.low = np.fmin(self.low, np.fmin.reduce(columns, axis=1))  # fmin/fmax skip NaN
            self.high = np.fmax(self.high, np.fmax.reduce(columns, axis=1))

    def outside(self, robot) -> dict[int, str]:
        """{joint index: 'q2 spans [..] rad, far outside the joint limits [..]'} of joints far outside."""
        out = {}
        lo, hi = robot.limit_array("q_min"), robot.limit_array("q_max")
        for j in range(robot.n):
            if not (math.isfinite(lo[j]) and math.isfinite(hi[j])) or not self.high[j] >= self.low[j]:
                continue
            excess = max(self.high[j] - hi[j], lo[j] - self.low[j])
            if excess > max(0.5 * (hi[j] - lo[j]), 0.2):
                unit = "rad" if robot.is_revolute[j] else "m"
                out[j] = (f"q{j + 1} spans [{self.low[j]:.4g}, {self.high[j]:.4g}] {unit}, far outside the joint "
                          f"limits [{lo[j]:.4g}, {hi[j]:.4g}] of '{robot.name}'")
        return out

    def messages(self, robot, source: str) -> list[str]:
        return [f"{source}: {text}: {unit_cause(robot, j)}" for j, text in self.outside(robot).items()]


def unit_cause(robot, j: int) -> str:
    """The likely cause of positions or speeds of joint j far beyond what the robot does."""
    if robot.is_revolute[j]:
        return "degrees given as radians (add --degrees)? motor-side angles (--motor-side)? or a log of another robot"
    return "millimetres given as metres? motor-side positions (--motor-side)? or a log of another robot"


def _subsample(a: np.ndarray) -> np.ndarray:
    step = max(1, a.shape[0] // SUBSAMPLE)
    return a[::step]


class LogChecks:
    """The plausibility of one log, chunk by chunk (module docstring)."""

    def __init__(self, robot, source: str):
        self.robot, self.source, self.n = robot, source, robot.n
        self.positions = PositionRange(robot.n)
        self.revolute = np.asarray(robot.is_revolute, dtype=bool)
        self.step: float | None = None
        self.speeds: list[np.ndarray] = []  # per chunk: 90th percentile of |dq| per joint
        self.logged: list[np.ndarray] = []  # per chunk: (2, n) sum dq_logged v, sum v^2 (v from the positions)
        self.carry = None  # (t, q, tau, segment) of the last two rows of the previous chunk
        self.jumps: list[tuple[float, int, float, str]] = []  # (t, joint, size, kind), first few
        self.jump_count = 0
        self.run, self.run_start, self.run_end = 0, math.nan, math.nan  # current filled stretch (triples, times)
        self.torques = PositionRange(robot.n)  # running min and max of each joint's torque
        self.fill = (0, math.nan, math.nan)  # longest filled stretch: steps, t_start, t_end

    # -- per chunk --------------------------------------------------------------------------

    def update(self, data) -> None:
        """Take a cleaned chunk (``data.columns.JointData`` in SI): refuse absurd values, follow
        ranges, speeds, jumps and filled stretches."""
        if len(data) == 0:
            return
        self._refuse_absurd(data)
        self.positions.update(data.q)
        self.torques.update(data.tau)
        segment = data.segment if data.segment is not None else np.zeros(len(data), dtype=np.int64)
        rows = {"t": data.t, "q": data.q, "tau": data.tau, "dq": data.dq, "segment": segment}
        if self.carry is not None and all((rows[k] is None) == (self.carry[k] is None) for k in rows):
            rows = {k: None if v is None else np.concatenate([self.carry[k], v]) for k, v in rows.items()}
        self.carry = {k: None if v is None else v[-2:] for k, v in rows.items()}  # the next chunk's context
        t, q, tau, logged, segment = rows["t"], rows["q"], rows["tau"], rows["dq"], rows["segment"]
        if t.shape[0] < 3:
            return
        dt = np.diff(t)
        if self.step is None:
            positive = dt[dt > 0]
            if positive.size:
                self.step = float(np.median(_subsample(positive)))
        if not self.step:
            return
        valid = (dt > 0) & (dt <= 2.0 * self.step) & (segment[1:] == segment[:-1])  # steps inside segments
        dq = np.diff(q, axis=0)
        steps = np.flatnonzero(valid)
        sample = _subsample(steps)  # the valid steps the robust scales use
        if steps.size >= 10:
            self.speeds.append(np.percentile(np.abs(dq[sample] / dt[sample, None]), 90, axis=0))
            if logged is not None:  # a logged velocity against the positions' own (midpoints of the steps)
                v = dq[valid] / dt[valid, None]
                mid = 0.5 * (logged[1:] + logged[:-1])[valid]
                self.logged.append(np.stack([np.sum(mid * v, axis=0), np.sum(v * v, axis=0)]))
        self._jumps(t, dq, valid, sample)
        if tau is not None:
            self._filled(t, q, tau, valid)

    def _refuse_absurd(self, data) -> None:
        for name, unit, a in (("q", "position", data.q), ("dq", "velocity", data.dq), ("ddq", "acceleration", data.ddq),
                              ("tau", "torque or force", data.tau)):
            if a is None or not a.size or not np.max(np.abs(a)) >= ABSURD:
                continue
            k, j = np.unravel_index(int(np.argmax(np.abs(a) >= ABSURD)), a.shape)
            raise DataError(f"{self.source}: {name}{j + 1} = {a[k, j]:.6g} at t = {data.t[k]:.6g} s cannot be a "
                            f"joint {unit} (expected |{name}| < {ABSURD:.0e} in SI units); a corrupt sample? "
                            "remove or repair the row")

    def _jumps(self, t: np.ndarray, dq: np.ndarray, valid: np.ndarray, sample: np.ndarray) -> None:
        """Position steps dq (N - 1, n) far beyond the usual ones (the median over the valid steps
        ``sample``, a subsample of them) on valid steps."""
        from dynid.data.plausibility_kernel import any_jump

        steps = np.abs(dq[sample])
        if steps.shape[0] < 10:
            return
        threshold = np.maximum(JUMP_FACTOR * np.median(steps, axis=0), np.where(self.revolute, JUMP_FLOOR[True],
                                                                                 JUMP_FLOOR[False]))
        reach = self.robot.limit_array("dq_max") * self.step  # a step within the speed limit is motion
        threshold = np.maximum(threshold, JUMP_SPEED_MARGIN * np.where(np.isfinite(reach), reach, 0.0))
        if not any_jump(dq, valid, threshold):  # one compiled pass; the rows are found only when there are some
            return
        big = (np.abs(dq) > threshold) & valid[:, None]
        rows, joints = np.nonzero(big)
        self.jump_count += rows.size
        for k, j in zip(rows[:5], joints[:5]):
            if len(self.jumps) >= 5:
                break
            size = float(dq[k, j])
            back = k + 1 < dq.shape[0] and valid[k + 1] and abs(dq[k + 1, j] + size) < 0.5 * abs(size)
            wrap = self.revolute[j] and abs(abs(size) - 2 * math.pi) < 0.5
            kind = "spike" if back else "wrap" if wrap else "jump"
            self.jumps.append((float(t[k + 1]), int(j), size, kind))

    def _filled(self, t: np.ndarray, q: np.ndarray, tau: np.ndarray, valid: np.ndarray) -> None:
        """Steps k (between rows k and k+1) inside a stretch where q and tau change exactly linearly."""
        from dynid.data.plausibility_kernel import filled_steps

        good = filled_steps(q, tau, valid, FLAT_TOLERANCE)  # (N-2,): rows k, k+1, k+2 collinear while moving
        if self.run and not (good.size and good[0]):  # the stretch ended at the chunk boundary
            self._record()
        edges = np.diff(np.concatenate([[0], good.astype(np.int8), [0]]))
        for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):  # good[a:b]
            if a == 0 and self.run:  # continues the stretch of the previous chunk
                self.run, self.run_end = self.run + int(b - a), float(t[b + 1])
            else:
                self.run, self.run_start, self.run_end = int(b - a), float(t[a]), float(t[b + 1])
            if b < good.size:
                self._record()

    def _record(self) -> None:
        """Close the current filled stretch (``run`` triples of collinear samples), keeping the longest."""
        if self.run > self.fill[0]:
            self.fill = (self.run, self.run_start, self.run_end)
        self.run = 0

    # -- at the end -------------------------------------------------------------------------

    def messages(self) -> list[str]:
        """The warnings about the whole log (``finish`` issues them)."""
        if self.run:
            self._record()
        robot, out = self.robot, []
        outside = self.positions.outside(robot)
        fast = self._fast_joints()
        for j in sorted(set(outside) | set(fast)):
            parts = [p for p in (outside.get(j), fast.get(j)) if p]
            out.append(f"{self.source}: {'; '.join(parts)}: {unit_cause(robot, j)}")
        if self.step is not None and self.step >= SLOW_STEP:
            out.append(f"{self.source}: the median time step is {self.step:.6g} s (a robot log at "
                       f"{1.0 / self.step:.3g} Hz): is the time in ms or us? (--time-unit ms); velocities and "
                       "accelerations would be 1e3 / 1e6 times too small")
        elif self.step is not None and 0 < self.step < FAST_STEP:
            out.append(f"{self.source}: the median time step is {self.step:.3g} s (a log at {1.0 / self.step:.3g} Hz): "
                       "is the time unit right? (--time-unit)")
        out += self._velocity_column()
        still_torque = [j for j in range(self.n) if self.torques.high[j] == self.torques.low[j]
                        and self.positions.high[j] > self.positions.low[j]]
        if still_torque:
            out.append(f"{self.source}: the torque of joint(s) {[j + 1 for j in still_torque]} is the same number in "
                       f"every sample ({[float(self.torques.low[j]) for j in still_torque][:4]}) while the joint moves: "
                       "no torque logged (a placeholder column)? A moving joint feels friction at least")
        if self.jumps:
            out.append(self._jump_message())
        steps, t0, t1 = self.fill
        if steps >= FILL_SAMPLES and t1 - t0 >= FILL_SECONDS:
            out.append(f"{self.source}: from t = {t0:.6g} to {t1:.6g} s ({steps + 2} samples) every position and "
                       "torque changes exactly linearly while the robot moves: a gap filled by interpolation? Those "
                       "samples are fitted as real motion; remove them (a gap splits the log into segments)")
        return out

    def _fast_joints(self) -> dict[int, str]:
        if not self.speeds:
            return {}
        typical = np.median(np.array(self.speeds), axis=0)
        dq_max = self.robot.limit_array("dq_max")
        out = {}
        for j in range(self.n):
            unit = "rad/s" if self.revolute[j] else "m/s"
            if math.isfinite(dq_max[j]) and typical[j] > SPEED_FACTOR * dq_max[j]:
                out[j] = (f"q{j + 1} moves typically at {typical[j]:.4g} {unit} (90th percentile), "
                          f"{typical[j] / dq_max[j]:.3g} x its speed limit {dq_max[j]:.4g} {unit}")
            elif not math.isfinite(dq_max[j]) and typical[j] > SPEED_WITHOUT_LIMIT[bool(self.revolute[j])]:
                out[j] = f"q{j + 1} moves typically at {typical[j]:.4g} {unit} (90th percentile), faster than robot joints"
        return out

    def _velocity_column(self) -> list[str]:
        """A logged dq whose least-squares scale against the positions' own velocity, c = sum dq v /
        sum v^2 over the steps, is negative or beyond ``VELOCITY_RATIO`` (noise in the logged column
        leaves c unbiased; a lag of a few samples lowers it little)."""
        if not self.logged or not self.speeds:
            return []
        agree, norm = np.sum(np.array(self.logged), axis=0)
        own = np.median(np.array(self.speeds), axis=0)
        out = []
        for j in range(self.n):
            if not (own[j] > 1e-3 and norm[j] > 0):  # a joint (nearly) held still: nothing to compare
                continue
            c = agree[j] / norm[j]
            if c < 0:
                out.append(f"{self.source}: the logged dq{j + 1} has the opposite sign of the velocity its positions "
                           f"show (scale {c:.3g}): a velocity of the other sign convention (--negate dq{j + 1}), or "
                           "another signal? (--ignore dq estimates it from q)")
            elif not 1.0 / VELOCITY_RATIO <= c <= VELOCITY_RATIO:
                out.append(f"{self.source}: the logged dq{j + 1} is {c:.3g} x the velocity its positions show (least "
                           "squares): deg/s, motor-side speeds, or another signal? (--ignore dq estimates it from q)")
        return out

    def _jump_message(self) -> str:
        t, j, size, kind = self.jumps[0]
        unit = "rad" if self.revolute[j] else "m"
        cause = {"spike": "and back at the next sample: a corrupt sample? remove or repair it",
                 "wrap": "(one turn): an angle wrapped to +-pi? dynid reads continuous angles: unwrap them",
                 "jump": "in one time step: a glitch, or samples missing without a time gap?"}[kind]
        more = f" ({self.jump_count} such steps in the log)" if self.jump_count > 1 else ""
        return f"{self.source}: q{j + 1} jumps by {size:.4g} {unit} at t = {t:.6g} s {cause}{more}"

    def finish(self) -> None:
        """Warn (``DynidWarning``) about what the whole log shows."""
        for text in self.messages():
            warnings.warn(DynidWarning(text), stacklevel=2)


def column_messages(names, robot, source: str) -> tuple[list[str], list[str]]:
    """(warnings, notes) about a log's columns (contract names, after renaming): joints beyond the
    robot's, and columns dynid does not read."""
    beyond, unread = {}, []
    for name in names:
        m = CONTRACT.fullmatch(str(name))
        if m is None:
            unread.append(str(name))
        elif m.group(2) is not None and int(m.group(2)) > robot.n:
            beyond.setdefault(int(m.group(2)), []).append(str(name))
    warns, notes = [], []
    if beyond:
        cols = [c for k in sorted(beyond) for c in beyond[k]]
        warns.append(f"{source}: columns {cols[:8]}{' ...' if len(cols) > 8 else ''} belong to joint(s) "
                     f"{sorted(beyond)[:6]} that robot '{robot.name}' ({robot.n} joints) does not have; they are not "
                     "read: a log of another robot, or a --joints/--lock selection that does not match the columns?")
    if unread:
        notes.append(f"columns not read (not in the joint data format): {unread[:10]}{' ...' if len(unread) > 10 else ''}")
    return warns, notes

