"""Joint limits for excitation design, from wherever the user has them.

A robot description rarely carries every limit an excitation needs: a URDF has no
acceleration limit, a continuous joint has no position range, a DH table may have none at
all. ``resolve_limits`` fills each limit of each joint from the first source that gives it:

    1. an option (``LimitOptions``: the command line's ``--q-range``, ``--dq-max``, ...);
    2. a limits file (YAML, below);
    3. the robot description (URDF ``<limit>``, DH/MDH YAML ``limits:``);
    4. a documented default:
       - position range of a joint without one (continuous or unlimited revolute): one turn
         centred on zero, [-pi, pi] (``continuous_range`` sets the width);
       - acceleration: ddq_max = min(ACCEL_EFFORT_SHARE * tau_max / max_q (M_jj(q) + I_a,j),
         ACCEL_PER_SPEED * dq_max): the acceleration half the effort limit gives against the
         largest inertia the joint sees (M(q) over ``INERTIA_SAMPLES`` seeded configurations
         in the position ranges, rotor inertia included), capped at full speed reached in
         1 / ACCEL_PER_SPEED = 0.2 s. The other half of the effort is left for gravity,
         coupling and friction.
       A velocity limit and a prismatic joint's range have no default (an error says which
       joint and which option gives it); a torque limit is only needed with torque limits.

Then the scales (``dq_scale``, ``ddq_scale``, ``tau_scale``, per joint or for all) multiply
the chosen values. Every value keeps the text of its source, which is printed and stored in
the trajectory file.

Limits file (``--limits limits.yaml``)::

    all: {ddq_max: 10.0}                          # every joint (optional)
    joints:                                       # by name or 1-based index (optional)
      iiwa_joint_1: {q_min: -2.9, q_max: 2.9, dq_max: 1.48, ddq_max: 8.0, tau_max: 320.0}
      7: {ddq_max: 20.0}

(``joints`` may also be a list with one mapping per joint.) Entries for a joint win over
``all``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from dynid.errors import ModelError
from dynid.excite.limits import KinematicLimits

KEYS = ("q_min", "q_max", "dq_max", "ddq_max", "tau_max")
ACCEL_EFFORT_SHARE = 0.5
ACCEL_PER_SPEED = 5.0  # [1/s]
INERTIA_SAMPLES = 256
ONE_TURN = 2.0 * math.pi


def joint_label(robot, i: int) -> str:
    """'joint 4 (iiwa_joint_4)': 1-based number and name, for messages."""
    return f"joint {int(i) + 1} ({robot.joint_names[int(i)]})"


def joint_index(robot, key, where: str) -> int:
    """0-based index of a joint given by 1-based number or name."""
    names = robot.joint_names
    text = str(key).strip()
    if text in names:
        return names.index(text)
    try:
        number = int(text)
    except ValueError:
        raise ModelError(f"{where}: no joint '{text}'; joints are 1..{robot.n} or {', '.join(names)}") from None
    if not 1 <= number <= robot.n:
        raise ModelError(f"{where}: joint number {number} out of range 1..{robot.n}")
    return number - 1


def per_joint(robot, value, where: str, pair: bool = False) -> dict[int, object]:
    """{joint index: value} from a scalar (every joint), a sequence of n values, or a mapping
    {joint number or name: value}; ``pair``: values are (low, high)."""
    if value is None:
        return {}
    if isinstance(value, dict):
        out: dict[int, object] = {}
        for k, v in value.items():
            i = joint_index(robot, k, where)
            if i in out:
                raise ModelError(f"{where}: {joint_label(robot, i)} is given twice (by name and by number?); "
                                 "give each joint once")
            out[i] = _checked(v, where, pair)
        return out
    if pair and _is_pair(value):
        return {i: _checked(value, where, pair) for i in range(robot.n)}
    if not pair and np.ndim(value) == 0:
        return {i: _checked(value, where, pair) for i in range(robot.n)}
    values = list(value)
    if len(values) != robot.n:
        raise ModelError(f"{where}: expected one value for every joint or {robot.n} values, got {len(values)}")
    return {i: _checked(v, where, pair) for i, v in enumerate(values)}


def _is_pair(value) -> bool:
    return np.ndim(value) == 1 and len(value) == 2 and all(np.ndim(v) == 0 for v in value)


def _checked(value, where: str, pair: bool):
    try:
        out = (float(value[0]), float(value[1])) if pair else float(value)
    except (TypeError, ValueError, IndexError):
        expected = "a pair low, high" if pair else "a number"
        raise ModelError(f"{where}: expected {expected}, got {value!r}") from None
    if any(math.isnan(v) for v in np.atleast_1d(out)):
        raise ModelError(f"{where}: NaN is not a limit")
    return out


@dataclass(frozen=True)
class LimitOptions:
    """Limits given by the user. Values: a scalar for every joint, n values, or a mapping
    {joint number (1-based) or name: value}. q_range values are (low, high) pairs [rad | m].
    Scales multiply the resolved limit. file: a limits YAML (module docstring)."""

    q_range: object = None
    dq_max: object = None
    ddq_max: object = None
    tau_max: object = None
    dq_scale: object = None
    ddq_scale: object = None
    tau_scale: object = None
    continuous_range: float = ONE_TURN
    file: str | Path | None = None

    def describe(self) -> dict:
        """The options as given (JSON-safe), for the trajectory file."""
        out = {k: v for k, v in self.__dict__.items() if v is not None and k != "file"}
        if self.file is not None:
            out["file"] = str(self.file)
        return out


@dataclass(frozen=True, eq=False)
class ResolvedLimits:
    """The limits used and where each came from (per key, per joint)."""

    limits: KinematicLimits
    sources: dict
    notes: tuple = ()

    def to_dict(self, robot) -> dict:
        """JSON-ready: every limit per joint (None = not given) and its source."""
        out = {"joints": list(robot.joint_names)}
        for key in KEYS:
            out[key] = [float(v) if math.isfinite(v) else None for v in getattr(self.limits, key)]
        out["source"] = {k: list(v) for k, v in self.sources.items()}
        out["notes"] = list(self.notes)
        return out


def read_yaml(path, what: str):
    """The parsed YAML document of a user file (bounded, duplicate keys refused:
    ``dynid.files.inputs``); one-line errors naming the file."""
    from dynid.files.inputs import read_yaml_document

    return read_yaml_document(path, f"{what} file", ModelError)


def read_limits_file(robot, path) -> dict[str, dict[int, float]]:
    """{key: {joint index: value}} from a limits YAML (module docstring)."""
    path = Path(path)
    doc = read_yaml(path, "limits")
    if not isinstance(doc, dict) or not set(doc) <= {"all", "joints"}:
        raise ModelError(f"{path}: expected a mapping with 'all' and/or 'joints', got "
                         f"{sorted(doc) if isinstance(doc, dict) else type(doc).__name__}")
    out: dict[str, dict[int, float]] = {k: {} for k in KEYS}

    def take(entry, indices, where):
        if not isinstance(entry, dict) or not set(entry) <= set(KEYS):
            raise ModelError(f"{where}: expected a mapping with some of {list(KEYS)}, got {entry!r}")
        for key, value in entry.items():
            for i in indices:
                out[key][i] = _checked(value, f"{where}: {key}", False)

    if doc.get("all") is not None:
        take(doc["all"], range(robot.n), f"{path}: all")
    joints = doc.get("joints")
    if isinstance(joints, list):
        if len(joints) != robot.n:
            raise ModelError(f"{path}: joints: a list needs one entry per joint ({robot.n}), got {len(joints)}")
        for i, entry in enumerate(joints):
            take(entry or {}, [i], f"{path}: joints[{i + 1}]")
    elif isinstance(joints, dict):
        named: dict[int, object] = {}
        for key, entry in joints.items():
            i = joint_index(robot, key, f"{path}: joints")
            if i in named:  # by name and by number: the later entry would silently win
                raise ModelError(f"{path}: joints: '{named[i]}' and '{key}' both name {joint_label(robot, i)}; "
                                 "give each joint once")
            named[i] = key
            take(entry or {}, [i], f"{path}: joints: {key}")
    elif joints is not None:
        raise ModelError(f"{path}: joints: expected a mapping by joint name/number or a list")
    return out


def default_accelerations(robot, q_min, q_max, dq_max, tau_max, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(n,) default ddq_max (module docstring) and (n,) the largest diagonal inertia used."""
    from dynid.dynamics import mass_matrix

    rng = np.random.default_rng(seed)
    q = q_min + rng.random((INERTIA_SAMPLES, robot.n)) * (q_max - q_min)
    diag = np.einsum("sjj->sj", mass_matrix(robot.physical, q)).max(axis=0) + robot.rotor_inertias
    with np.errstate(divide="ignore", invalid="ignore"):
        effort = np.where(diag > 0, ACCEL_EFFORT_SHARE * tau_max / diag, np.inf)
    return np.minimum(effort, ACCEL_PER_SPEED * dq_max), diag


def resolve_limits(robot, options: LimitOptions = LimitOptions()) -> ResolvedLimits:
    """Every limit for every joint from options > file > description > default (module doc)."""
    n = robot.n
    values = {k: robot.limit_array(k).copy() for k in KEYS}
    sources = {k: ["description" if math.isfinite(v) else "none" for v in values[k]] for k in KEYS}
    notes = []
    given: list[tuple[str, dict[str, dict[int, float]]]] = []
    if options.file is not None:
        given.append((Path(options.file).name, read_limits_file(robot, options.file)))
    from_options = {k: {} for k in KEYS}
    for i, (lo, hi) in per_joint(robot, options.q_range, "--q-range", pair=True).items():
        from_options["q_min"][i], from_options["q_max"][i] = lo, hi
    for key in ("dq_max", "ddq_max", "tau_max"):
        from_options[key] = per_joint(robot, getattr(options, key), f"--{key.replace('_', '-')}")
    given.append(("option", from_options))
    for label, table in given:
        for key, entries in table.items():
            for i, v in entries.items():
                values[key][i] = v
                sources[key][i] = label if label == "option" else f"file {label}"
    # position ranges: joints without one get one turn (revolute); prismatic ones need one
    width = float(options.continuous_range)
    if not (math.isfinite(width) and width > 0):
        raise ModelError(f"--continuous-range must be a positive width [rad], got {width}")
    for i in range(n):
        if math.isfinite(values["q_min"][i]) and math.isfinite(values["q_max"][i]):
            continue
        if not robot.is_revolute[i]:
            raise ModelError(f"{robot.name}: {joint_label(robot, i)} is prismatic without a position range; "
                             "give it with --q-range J:LOW,HIGH or a limits file")
        values["q_min"][i], values["q_max"][i] = -0.5 * width, 0.5 * width
        sources["q_min"][i] = sources["q_max"][i] = f"default: {width / ONE_TURN:g} turn centred on 0"
        notes.append(f"{joint_label(robot, i)} has no position range (continuous): excited within "
                     f"[{-0.5 * width:.4g}, {0.5 * width:.4g}] rad ({width / ONE_TURN:g} turn, --continuous-range)")
    _check_consistent(robot, values, sources, ("q_min", "q_max", "dq_max"))
    missing = [i for i in range(n) if not math.isfinite(values["dq_max"][i])]
    if missing:
        raise ModelError(f"{robot.name}: no velocity limit for {', '.join(joint_label(robot, i) for i in missing)}; "
                         "give --dq-max (one value or one per joint) or a limits file")
    def scale(key, option):
        for i, s in per_joint(robot, getattr(options, option), f"--{option.replace('_', '-')}").items():
            if not (math.isfinite(s) and s > 0):
                raise ModelError(f"--{option.replace('_', '-')}: {joint_label(robot, i)} needs a positive "
                                 f"scale, got {s:g}")
            if s != 1.0:
                values[key][i] *= s
                sources[key][i] += f" x {s:g}"

    scale("dq_max", "dq_scale")
    scale("tau_max", "tau_scale")
    no_accel = [i for i in range(n) if not math.isfinite(values["ddq_max"][i])]
    if no_accel:
        _check_consistent(robot, values, sources, ("tau_max",))
        default, _ = default_accelerations(robot, values["q_min"], values["q_max"], values["dq_max"],
                                           values["tau_max"])
        for i in no_accel:
            values["ddq_max"][i] = default[i]
            by_effort = math.isfinite(values["tau_max"][i]) and default[i] < ACCEL_PER_SPEED * values["dq_max"][i]
            sources["ddq_max"][i] = ("default: " + (f"{ACCEL_EFFORT_SHARE:g} tau_max / max M_jj" if by_effort
                                                    else f"{ACCEL_PER_SPEED:g}/s x dq_max"))
        notes.append("no acceleration limit for joint(s) " + ", ".join(str(i + 1) for i in no_accel)
                     + f": default ddq_max = min({ACCEL_EFFORT_SHARE:g} tau_max / max_q(M_jj + I_a), "
                     f"{ACCEL_PER_SPEED:g}/s x dq_max) (--ddq-max sets it)")
    scale("ddq_max", "ddq_scale")
    _check_consistent(robot, values, sources, KEYS)
    _warn_beyond_description(robot, values, sources)
    limits = KinematicLimits(*(values[k] for k in KEYS))
    return ResolvedLimits(limits, {k: tuple(v) for k, v in sources.items()}, tuple(notes))


def _warn_beyond_description(robot, values, sources) -> None:
    """Warn when a limit given by an option or a file lets a joint go beyond the robot description's
    own limit (the excitation would drive the real robot past it), and when a revolute range given
    so reaches beyond two turns (degrees?)."""
    import warnings

    from dynid.errors import DynidWarning
    from dynid.robot.validation import TURNS

    own = {k: robot.limit_array(k) for k in KEYS}
    for i in range(robot.n):
        given = [k for k in KEYS if not sources[k][i].startswith(("description", "default", "none"))]
        wider = [k for k in given if math.isfinite(own[k][i]) and
                 (values[k][i] < own[k][i] if k == "q_min" else values[k][i] > own[k][i])]
        if wider:
            text = ", ".join(f"{k} {values[k][i]:g} (description {own[k][i]:g}, from {sources[k][i]})" for k in wider)
            warnings.warn(DynidWarning(f"{robot.name}: {joint_label(robot, i)}: {text}: beyond the robot's own "
                                       "limits; the excitation may drive the real robot past them"), stacklevel=3)
        bound = max(abs(values["q_min"][i]), abs(values["q_max"][i]))
        if robot.is_revolute[i] and ("q_min" in given or "q_max" in given) and bound > TURNS * 2 * math.pi:
            warnings.warn(DynidWarning(f"{robot.name}: {joint_label(robot, i)}: position range "
                                       f"[{values['q_min'][i]:g}, {values['q_max'][i]:g}] rad reaches beyond {TURNS} "
                                       "turns: dynid reads radians; degrees?"), stacklevel=3)


def _check_consistent(robot, values, sources, keys) -> None:
    for i in range(robot.n):
        where = f"{robot.name}: {joint_label(robot, i)}"
        lo, hi = values["q_min"][i], values["q_max"][i]
        if "q_min" in keys and not lo < hi:
            raise ModelError(f"{where}: q_min {lo:g} is not below q_max {hi:g} "
                             f"(from {sources['q_min'][i]} / {sources['q_max'][i]})")
        for key in keys:
            if key in ("q_min", "q_max"):
                continue
            v = values[key][i]
            if not v > 0:
                raise ModelError(f"{where}: {key} must be positive, got {v:g} (from {sources[key][i]})")


def robot_with_limits(robot, limits: KinematicLimits):
    """A copy of the robot whose joints carry these limits (everything else unchanged)."""
    from dynid.robot.model import JointLimits

    column = {int(tree): c for c, tree in enumerate(robot.actuated)}
    joints = tuple(replace(j, limits=JointLimits(*(float(getattr(limits, k)[column[i]]) for k in KEYS)))
                   if i in column else j for i, j in enumerate(robot.joints))
    return replace(robot, joints=joints)


def limits_from_dict(robot, d: dict, source: str) -> KinematicLimits:
    """The limits stored in a trajectory file (``ResolvedLimits.to_dict``); None = not given."""
    if not isinstance(d, dict):
        raise ModelError(f"{source}: 'limits' must be a mapping of per-joint lists")
    try:
        arrays = [np.array([math.inf if v is None else float(v) for v in d[k]]) for k in KEYS]
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{source}: malformed 'limits' section ({exc})") from None
    if any(a.size != robot.n for a in arrays):
        raise ModelError(f"{source}: 'limits' has {arrays[0].size} joints, the robot has {robot.n}")
    arrays[0] = np.where(np.isfinite(arrays[0]), arrays[0], -np.inf)
    return KinematicLimits(*arrays)
