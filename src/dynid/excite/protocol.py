"""The thesis' test cycle (chapter 4): excitation, friction measurement, warming; K cycles.

One cycle, from and back to rest at the home pose (middle of every range):

1. ``excitation``: the periodic excitation trajectory (eq. 4.19) for whole periods, entered
   at its calmest phase (``calm_phase``), then ``additional``: the cycloid of eq. 4.22-4.24 forward and backward (thesis 4.3);
2. ``friction``: joint by joint, from a rest pose that keeps its axis vertical where the
   kinematics allow (``rest_pose``), strokes at 5, 20, 40, 60, 80, 100 % of its maximum
   speed, the same duration for every level (thesis 4.4); a level the default stroke and
   acceleration cannot reach gets a longer stroke and ramps with a constant-acceleration
   phase (``plan_stroke``): every level of the er3a is reached;
3. ``warming``: all joints together between the ends of 80 % of their range at 80 % of
   their maximum speed (thesis 4.5; about 3 minutes in the thesis).

``transition`` segments (quintic blends, ``timeline``) join the stages with continuous
position, velocity and acceleration. The thesis runs 24 cycles of about 5 minutes (two
hours); with 4 s per level and 180 s of warming the er3a's cycle lasts 5.8 minutes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynid.errors import DataError
from dynid.excite.limits import KinematicLimits, periodic_ratio_bounds, sample_ratios
from dynid.excite.motion import Cycloid, Hold, Oscillation, PeriodicSegment
from dynid.excite.rest_pose import vertical_axis_pose
from dynid.excite.timeline import Timeline

FRICTION_LEVELS = (0.05, 0.20, 0.40, 0.60, 0.80, 1.00)  # thesis 4.4


@dataclass(frozen=True)
class ProtocolSettings:
    """excitation_periods: whole periods of the excitation trajectory per cycle;
    cycloid: add the additional segment (eq. 4.22-4.24); cycloid_fraction: share of range,
    speed and acceleration it may use; friction_levels: speed shares of dq_max;
    level_duration [s]: duration of every speed level; stroke_fraction: share of the range
    a friction stroke may cover; warming_duration [s]; warming_range, warming_speed:
    shares of range and speed in the warming stage (0.8, 0.8 in the thesis);
    acceleration_fraction: share of ddq_max for ramps; min_ramp [s]: shortest speed ramp
    (bounds the jerk); wide_stroke_fraction: share of the range a friction stroke may cover
    when a level cannot be reached within stroke_fraction; jerk_time [s]: jerk phase of ramps
    with a constant-acceleration phase; min_cruise [s]: least time at constant speed per
    stroke of such a level; blend_fraction: share of all limits
    for blends; seed: random candidates of the vertical-axis search (``plan_stroke``)."""

    excitation_periods: int = 1
    cycloid: bool = True
    cycloid_fraction: float = 0.9
    friction_levels: tuple = FRICTION_LEVELS
    level_duration: float = 4.0
    stroke_fraction: float = 0.8
    warming_duration: float = 180.0
    warming_range: float = 0.8
    warming_speed: float = 0.8
    acceleration_fraction: float = 0.8
    min_ramp: float = 0.3
    wide_stroke_fraction: float = 0.98
    jerk_time: float = 0.05
    min_cruise: float = 0.12
    blend_fraction: float = 0.9
    seed: int = 0


def _rest(q):
    z = np.zeros_like(np.asarray(q, dtype=float))
    return (np.asarray(q, dtype=float), z, z)


def calm_phase(excitation, limits: KinematicLimits, samples: int = 1000) -> float:
    """Start time in [0, period) where the excitation is calmest: least
    sum_j (dq_j/dq_max_j)^2 + (ddq_j/ddq_max_j)^2, so the blend from rest into it is short.
    Whole periods from any phase contain the same motion."""
    t = np.arange(samples) * (excitation.period / samples)
    _, dq, ddq = excitation.evaluate(t)
    effort = np.sum((dq / limits.dq_max) ** 2 + (ddq / limits.ddq_max) ** 2, axis=1)
    return float(t[int(np.argmin(effort))])


def additional_segments(limits: KinematicLimits, fraction: float):
    """Cycloid forward then backward (eq. 4.22-4.24) for all joints with one duration T.

    T = max_j pi dq_max_j / ddq_max_j lets every joint reach fraction * dq_max at
    fraction * ddq_max (peak speed 2 D / T, peak acceleration 2 pi D / T^2); the stroke D_j
    is the largest that respects range, speed and acceleration. Starts at the low end.
    """
    t = float(np.max(np.pi * limits.dq_max / limits.ddq_max))
    width = 2 * fraction * limits.half_range
    delta = np.minimum.reduce([width, fraction * limits.dq_max * t / 2,
                               fraction * limits.ddq_max * t**2 / (2 * np.pi)])
    low = limits.center - delta / 2
    return [Cycloid(low, delta, t), Cycloid(low + delta, -delta, t)]


@dataclass(frozen=True)
class StrokePlan:
    """How one speed level (or the warming stage) of a joint is run: the cruise ``speed`` used,
    the longest ``stroke`` allowed, the ``ramp`` time, its jerk phase ``jerk`` (ramp/2 =
    cycloidal ramp) and the peak acceleration ``accel``."""

    speed: float
    stroke: float
    ramp: float
    jerk: float
    accel: float

    @property
    def cruise(self) -> float:
        """Time at constant speed in a full-length stroke [s]."""
        return self.stroke / self.speed - self.ramp


def plan_stroke(speed: float, stroke: float, wide_stroke: float, accel: float, accel_max: float,
                min_ramp: float, jerk_time: float, min_cruise: float, stroke_time: float = np.inf,
                cruise_target: float = 0.5) -> StrokePlan:
    """The gentlest way to run strokes at ``speed`` (thesis 4.4, 4.5), a stroke lasting at most
    ``stroke_time`` [s] (half a level: there and back), in this order:

    1. cycloidal ramps (acceleration 1 - cos, peak ``accel``, at least ``min_ramp`` s) over
       ``stroke``, ramps taking at most two thirds of it (2 speed^2 / accel <= 2 stroke / 3):
       the protocol's default;
    2. ramps with a constant-acceleration phase (jerk phases ``jerk_time``, travel speed^2/a +
       speed tj for both), first at ``accel`` over ``stroke``, then over ``wide_stroke``,
       then at ``accel_max`` (the joint's ddq_max): the first that keeps ``cruise_target`` s
       at constant speed per stroke, else the one with the longest cruise if it reaches
       ``min_cruise`` s (plateaus shorter than that are lost to filters);
    3. the highest speed that 2. allows over ``wide_stroke`` at ``accel_max`` (the level is
       then slower than asked: the summary and the CLI say so).
    """

    def cruise(d, ramp):  # time at constant speed of the longest stroke that fits in stroke_time
        return min(d, speed * (stroke_time - ramp)) / speed - ramp

    ramp = max(2.0 * speed / accel, min_ramp)
    if speed * speed <= stroke * accel / 3.0 and cruise(stroke, ramp) >= min_cruise:
        return StrokePlan(speed, stroke, ramp, 0.5 * ramp, accel)
    options = []
    for d, a in ((stroke, accel), (wide_stroke, accel), (wide_stroke, accel_max)):
        tj = min(jerk_time, speed / a)  # the constant phase needs speed / a >= tj
        plan = StrokePlan(speed, d, speed / a + tj, tj, a)
        options.append((cruise(d, plan.ramp), plan))
        if options[-1][0] >= cruise_target:
            return plan
    best_cruise, best = max(options, key=lambda o: o[0])
    if best_cruise >= min_cruise:
        return best
    a, d, c = accel_max, min(wide_stroke, 0.5 * accel_max * stroke_time ** 2), jerk_time + min_cruise
    v = 0.5 * a * (-c + np.sqrt(c * c + 4.0 * d / a))  # v^2/a + v (tj + cruise) = d
    tj = min(jerk_time, v / a)
    return StrokePlan(float(v), d, v / a + tj, tj, a)


def friction_level(joint: int, pose: np.ndarray, plan: StrokePlan, duration: float, low: float) -> Oscillation:
    """One speed level of one joint: an even number m of equal strokes within ``duration``.

    m = 2 floor(duration / (2 t_max)) (at least 2), t_max the time of a full-length stroke;
    stroke = min(plan.stroke, speed (duration/m - ramp)); the rest of the level, if any, is
    spent at rest. The strokes start at ``low`` and return there, so every level lasts
    ``duration`` exactly.
    """
    speed, ramp = plan.speed, plan.ramp
    m = 2 * max(1, int(np.floor(duration / (2.0 * (plan.stroke / speed + ramp)))))
    stroke = min(plan.stroke, speed * (duration / m - ramp))
    if stroke < speed * ramp - 1e-12:
        raise DataError(f"friction level of joint {joint + 1} at {speed:.3g}/s: {duration:g} s per level "
                        "is too short to ramp up and down twice; use a longer level duration")
    n = pose.size
    start = pose.copy()
    start[joint] = low
    strokes = np.zeros(n, dtype=int)
    strokes[joint] = m
    one = lambda v: np.where(np.arange(n) == joint, v, 0.0)  # noqa: E731
    return Oscillation(start, one(stroke), np.where(np.arange(n) == joint, speed, 1.0), one(ramp),
                       strokes, duration, one(plan.jerk))


def friction_levels(limits: KinematicLimits, joint: int, pose: np.ndarray, settings: "ProtocolSettings"):
    """The six levels of one joint (``settings.friction_levels`` x dq_max, ``plan_stroke``) and
    what each used: [{target, share (of dq_max), stroke [rad | m], strokes, accel_share (peak
    of ddq_max), cruise (time at constant speed per stroke [s])}]."""
    j = joint
    half = limits.half_range[j]
    stroke, wide = 2 * settings.stroke_fraction * half, 2 * settings.wide_stroke_fraction * half
    accel, accel_max = settings.acceleration_fraction * limits.ddq_max[j], limits.ddq_max[j]
    plans = [plan_stroke(share * limits.dq_max[j], stroke, wide, accel, accel_max, settings.min_ramp,
                         settings.jerk_time, settings.min_cruise, settings.level_duration / 2)
             for share in settings.friction_levels]
    low = limits.center[j] - max(p.stroke for p in plans) / 2  # one start for all levels: continuous
    levels = [friction_level(j, pose, plan, settings.level_duration, low) for plan in plans]
    used = [{"target": float(share), "share": float(plan.speed / limits.dq_max[j]),
             "stroke": float(level.stroke[j]), "strokes": int(level.strokes[j]),
             "accel_share": float(plan.accel / limits.ddq_max[j]),
             "cruise": float(level.stroke[j] / plan.speed - plan.ramp)}
            for share, plan, level in zip(settings.friction_levels, plans, levels)]
    return levels, used


def warming_segment(limits: KinematicLimits, settings: ProtocolSettings) -> Oscillation:
    """All joints between the ends of ``warming_range`` of their range at ``warming_speed``
    (``plan_stroke`` per joint: a joint whose range is short for its speed gets ramps with a
    constant-acceleration phase, up to its ddq_max)."""
    stroke = 2 * settings.warming_range * limits.half_range
    plans = [plan_stroke(settings.warming_speed * v, d, d, settings.acceleration_fraction * a, a,
                         settings.min_ramp, settings.jerk_time, 0.0)
             for v, d, a in zip(limits.dq_max, stroke, limits.ddq_max)]
    speed = np.array([p.speed for p in plans])
    ramp = np.array([p.ramp for p in plans])
    jerk = np.array([p.jerk for p in plans])
    speed = np.minimum(speed, stroke / ramp)
    stroke_time = stroke / speed + ramp
    strokes = 2 * np.floor(settings.warming_duration / (2 * stroke_time)).astype(int)
    if np.any(strokes < 2):
        raise DataError(f"warming stage of {settings.warming_duration:g} s is shorter than one "
                        f"round trip ({2 * stroke_time.max():.2f} s)")
    return Oscillation(limits.center - stroke / 2, stroke, speed, ramp, strokes, settings.warming_duration, jerk)


def cycle_timeline(robot, excitation, settings: ProtocolSettings = ProtocolSettings(),
                   rate: float | None = None) -> tuple[Timeline, dict]:
    """One cycle of the protocol as a ``Timeline``, and a summary (durations, alignments).

    With ``rate`` [Hz], the final rest is lengthened so that the cycle lasts a whole number
    of sample periods (repeated cycles then keep a uniform time grid)."""
    limits = KinematicLimits.of(robot)
    limits.require_finite(robot.name)
    if excitation.n != robot.n:
        raise DataError(f"excitation trajectory has {excitation.n} joints, robot '{robot.name}' has {robot.n}")
    ratios = periodic_ratio_bounds(excitation, limits)
    worst = {k: float(v.max()) for k, v in ratios.items()}
    if max(worst.values()) > 1.0:
        raise DataError(f"the excitation trajectory exceeds the limits of '{robot.name}' (largest ratios "
                        f"{ {k: round(v, 3) for k, v in worst.items()} })")
    blend_limits = limits.scaled(settings.blend_fraction)
    home = limits.center
    tl = Timeline()
    tl.append(Hold(home, 0.5), "transition")
    exc = PeriodicSegment(excitation, settings.excitation_periods * excitation.period,
                          calm_phase(excitation, limits))
    tl.blend_to(exc.start_state, blend_limits, fallback=limits)
    tl.append(exc, "excitation")
    if settings.cycloid:
        forward, backward = additional_segments(limits, settings.cycloid_fraction)
        tl.blend_to(forward.start_state, blend_limits, fallback=limits)
        tl.append(forward, "additional")
        tl.append(backward, "additional")
    stroke_limits = limits.scaled(settings.stroke_fraction)
    alignment, speeds, level_table, poses = [], [], [], []
    for j in range(robot.n):
        pose, cos = vertical_axis_pose(robot, j, home, stroke_limits.q_min, stroke_limits.q_max, seed=settings.seed)
        alignment.append(cos)
        poses.append(pose.tolist())
        levels, used = friction_levels(limits, j, pose, settings)
        speeds.append([u["share"] for u in used])
        level_table.append(used)
        tl.blend_to(levels[0].start_state, blend_limits, fallback=limits)
        for level in levels:
            tl.append(level, "friction")
    warming = warming_segment(limits, settings)
    tl.blend_to(warming.start_state, blend_limits, fallback=limits)
    tl.append(warming, "warming")
    tl.blend_to(_rest(home), blend_limits, fallback=limits)
    rest = 0.5
    if rate is not None:
        rest += np.ceil((tl.duration + rest) * rate - 1e-9) / rate - (tl.duration + rest)
    tl.append(Hold(home, rest), "transition")
    durations: dict[str, float] = {}
    for seg, stage in zip(tl.segments, tl.stages):
        durations[stage] = durations.get(stage, 0.0) + seg.duration
    w = warming.speed / limits.dq_max
    summary = {"cycle_duration": tl.duration, "stage_durations": durations,
               "vertical_axis_cos": alignment, "friction_speed_shares": speeds, "friction_levels": level_table,
               "friction_poses": poses,
               "warming": {"range_share": settings.warming_range, "speed_shares": w.tolist(),
                           "ends": [(limits.center - s * settings.warming_range * limits.half_range).tolist()
                                    for s in (1.0, -1.0)]},
               "excitation_ratio_bounds": worst}
    return tl, summary


def sample_protocol(robot, excitation, cycles: int, rate: float,
                    settings: ProtocolSettings = ProtocolSettings()):
    """Samples of ``cycles`` repetitions at ``rate`` Hz.

    Returns dict with t (M,), q, dq, ddq (M, n), cycle (M,) 1-based, stage (M,) labels, and
    the summary of ``cycle_timeline``. Raises if any sample exceeds a limit (it never should).
    """
    if cycles < 1 or not rate > 0:
        raise DataError("need at least one cycle and a positive rate")
    tl, summary = cycle_timeline(robot, excitation, settings, rate)
    per_cycle = int(round(tl.duration * rate))  # samples [0, duration) of each cycle
    local = np.arange(per_cycle) / rate
    q, dq, ddq, stage = tl.evaluate(local)
    t = np.arange(cycles * per_cycle) / rate
    out = {"t": t, "q": np.tile(q, (cycles, 1)), "dq": np.tile(dq, (cycles, 1)),
           "ddq": np.tile(ddq, (cycles, 1)), "cycle": np.repeat(np.arange(1, cycles + 1), per_cycle),
           "stage": np.tile(stage, cycles), "summary": summary}
    ratios = sample_ratios(q, dq, ddq, KinematicLimits.of(robot))
    if any(np.any(r > 1.0 + 1e-9) for r in ratios.values()):
        raise DataError("internal error: protocol samples exceed the limits "
                        f"{ {k: float(v.max()) for k, v in ratios.items()} }")
    summary["max_ratio"] = {k: float(v.max()) for k, v in ratios.items()}
    return out
