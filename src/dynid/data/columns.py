"""Joint data in memory and the mapping of foreign log layouts onto docs/formats.md section 3.

A ``ColumnMapping`` says how a log differs from the contract: other column names (or no
header), time in ms, angles in degrees, positions and torques measured on the motor side
of the gears, motor currents instead of torques (tau = K i per joint). ``apply`` turns the
raw columns into a ``JointData`` in SI units on the joint side.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from dynid.errors import DataError, refuse_repeated

IGNORABLE = ("dq", "ddq")
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


@dataclass
class JointData:
    """Time-major joint data; arrays (N, n) unless noted, SI units, joint side.

    t (N,) [s]; q [rad | m]; dq, ddq: None when not measured; tau [N m | N]: None when absent;
    cycle (N,) ints and stage (N,) strings: None when absent; notes: what cleaning did;
    own: (N, n, e) regressor columns of each joint's own terms (friction...) when
    preprocessing computed them before decimation, else None; segment (N,): segment index of
    each row (``data.segments``; the raw labels of a ``segment`` column until cleaning), None
    for one segment; rate [Hz]: the uniform rate preprocessing put the samples on (after
    resampling and decimation; ``data.timing``), None before preprocessing; filled (N,) bool:
    True for a sample that resampling put where the log has none (rows dropped for NaN), None
    when every sample is a logged one or the whole log was resampled (``preprocess.resample``).
    """

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray | None = None
    ddq: np.ndarray | None = None
    tau: np.ndarray | None = None
    cycle: np.ndarray | None = None
    stage: np.ndarray | None = None
    source: str = "<memory>"
    notes: list[str] = field(default_factory=list)
    own: np.ndarray | None = None
    segment: np.ndarray | None = None
    rate: float | None = None
    filled: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.q.shape[1]

    def __len__(self) -> int:
        return self.t.shape[0]

    def select(self, index) -> "JointData":
        """The samples at ``index`` (boolean mask, slice or integer array)."""
        pick = lambda a: None if a is None else a[index]  # noqa: E731
        return JointData(self.t[index], self.q[index], pick(self.dq), pick(self.ddq), pick(self.tau),
                         pick(self.cycle), pick(self.stage), self.source, list(self.notes), pick(self.own),
                         pick(self.segment), self.rate, pick(self.filled))


def _parse_list(text: str | None, n: int, what: str) -> np.ndarray | None:
    if text is None or text == "":
        return None
    parts = [p for p in str(text).replace(";", ",").split(",") if p.strip()]
    try:
        values = np.array([float(p) for p in parts])
    except ValueError as exc:
        raise DataError(f"{what}: expected {n} comma-separated numbers, got '{text}'") from exc
    if values.size == 1:
        values = np.repeat(values, n)
    if values.size != n:
        raise DataError(f"{what}: expected {n} comma-separated numbers (one per joint), got {values.size}")
    return values


def parse_pairs(text: str | None, option: str, expected: str) -> list[tuple[str, str]]:
    """'a=b,c=d' -> [("a", "b"), ("c", "d")]; an item without '=' names the option, and so does a
    name given twice (``errors.refuse_repeated``)."""
    pairs = []
    for item in (text or "").split(","):
        if not item.strip():
            continue
        if "=" not in item:
            raise DataError(f"{option}: expected {expected}, got '{item}'")
        a, b = item.split("=", 1)
        pairs.append((a.strip(), b.strip()))
    refuse_repeated([a for a, _ in pairs], option)
    return pairs


def drive_gains_text(current_gain: str | None) -> tuple[str | None, tuple[float, ...]]:
    """(``--current-gain`` as given, ()), or, when it names a JSON file written by ``dynid drives
    gains``, (the gains it holds (its "current_gain", comma-separated), each gain's relative
    standard deviation (its "relative_std"; () when the file has none)): the mapping keeps the
    numbers, so a result.json does not depend on the file staying where it was."""
    if current_gain is None or not current_gain.strip().lower().endswith(".json"):
        return current_gain, ()
    import json
    from pathlib import Path

    path = Path(current_gain.strip())
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"--current-gain {current_gain}: cannot read the drive gains file ({exc.strerror})") from None
    except ValueError:
        raise DataError(f"--current-gain {current_gain}: not a JSON file; expected the output of 'dynid drives gains' "
                        "or comma-separated gains") from None
    if not isinstance(content, dict) or content.get("format") != "dynid-drive-gains" or not isinstance(
            content.get("current_gain"), str):
        raise DataError(f"--current-gain {current_gain}: not a drive gains file (expected the JSON of 'dynid drives "
                        "gains', with \"format\": \"dynid-drive-gains\" and \"current_gain\")")
    std = content.get("relative_std")
    if std is None:
        return content["current_gain"], ()
    if not (isinstance(std, list) and std and all(_is_number(v) and math.isfinite(float(v)) and float(v) >= 0
                                                  and not isinstance(v, bool) for v in std)):
        raise DataError(f"--current-gain {current_gain}: \"relative_std\" is {std!r}, expected one relative "
                        "standard deviation >= 0 per gain")
    return content["current_gain"], tuple(float(v) for v in std)


def _is_number(text) -> bool:
    try:
        float(str(text))
    except ValueError:
        return False
    return True


def check_header(names: list[str], mapping: "ColumnMapping", n: int, source: str) -> None:
    """A header of numbers is the first data line of a CSV without one: an error that names
    --columns (with the names a log of n joints most likely has) instead of a missing column."""
    if mapping.names is None and names and all(_is_number(c) for c in names):
        raise DataError(f"{source}: the first line holds numbers ({', '.join(names[:4])}, ...), not column names: "
                        f"a CSV without a header needs --columns with its {len(names)} names in file order, e.g. "
                        f"--columns {headerless_example(len(names), n)}")


def headerless_example(count: int, n: int) -> str:
    """A --columns value for a headerless CSV of ``count`` columns of an n-joint robot: t, then
    the blocks (q, tau), (q, dq, tau), (q, dq, ddq, tau) that fill it, else t, q1..qn and
    c1..; the user renames what differs."""
    for blocks in (("q", "tau"), ("q", "dq", "tau"), ("q", "dq", "ddq", "tau")):
        if count == 1 + n * len(blocks):
            return "t," + ",".join(f"{b}{j + 1}" for b in blocks for j in range(n))
    return "t," + ",".join([f"q{j + 1}" for j in range(n)] + [f"c{k + 1}" for k in range(max(count - 1 - n, 0))])


def parse_range(text: str | None, option: str, kind) -> tuple | None:
    """'A:B', 'A:' or ':B' -> (A, B) (open ends infinite); None for None or ''."""
    if text is None or not str(text).strip():
        return None
    parts = str(text).split(":")
    what = "seconds" if kind is float else "row numbers (the first data row is 1)"
    try:
        if len(parts) != 2:
            raise ValueError
        lo = kind(parts[0]) if parts[0].strip() else -math.inf
        hi = kind(parts[1]) if parts[1].strip() else math.inf
    except ValueError:
        raise DataError(f"{option} '{text}': expected FIRST:LAST in {what}, e.g. '10:60', '10:' or ':60'") from None
    if not (lo <= hi) or (kind is int and hi < 1):
        raise DataError(f"{option} '{text}': expected FIRST <= LAST in {what}")
    return (lo, hi)


@dataclass(frozen=True)
class ColumnMapping:
    """How a log maps onto the contract columns (all fields optional).

    rename: foreign name -> contract name, e.g. {"time": "t", "pos_1": "q1"}
    names: column names of a headerless CSV, in file order (contract names or foreign ones)
    time_unit: s | ms | us | ns
    degrees: positions/velocities/accelerations of revolute joints are in degrees
    motor_side: q, dq, ddq are motor angles (divided by the gear ratio) and tau, i are motor
      side (tau multiplied by the gear ratio); with a coupled transmission T (q_m = T q):
      q = T^-1 q_m (likewise dq, ddq) and tau = T^T tau_m (docs/transmissions.md); q then
      adds each drive's ``zero_offset`` (the joint position where its encoder reads 0)
    current_gain: "drive" (K = gear ratio x motor torque constant of each drive) or
      comma-separated joint-side gains K per joint [N m / A]; used when the file has
      motor currents i1..in and no tau1..taun (tau = K i)
    negate: logged signals whose sign is opposite to the robot description's convention,
      a whole block ("tau": every joint) or single columns ("tau2", "q5"); applied to the
      logged values first (a driver that reports the reaction torque, a flipped encoder)
    ignore: logged signal blocks not to read ("dq", "ddq"): estimated from q instead (a
      driver's velocity estimate that lags the positions)
    topic: the sensor_msgs/JointState topic of a ROS bag (None: /joint_states; data/bags.py)
    stamp: a bag's time: "header" (the messages' header stamps) or "receive" (recorder time)
    time_range: (first, last) [s] of the log's time column (after ``time_unit``; each segment's
      own clock where it restarts): only rows within it are read; None = all (``--time-range``)
    rows: (first, last) data rows, numbered from 1 as error messages name them, both kept:
      only rows within it are read; None = all (``--rows``). Neither is stored in result.json:
      a command given one reads that part of its own log.
    current_gain_std: relative standard deviation of each gain of ``current_gain`` (n,), read
      from a gains file of ``dynid drives gains`` (() when the gains came as numbers); result.json
      keeps it ("current_gain_relative_std") for payload identify's covariance
    """

    rename: tuple[tuple[str, str], ...] = ()
    names: tuple[str, ...] | None = None
    time_unit: str = "s"
    degrees: bool = False
    motor_side: bool = False
    current_gain: str | None = None
    negate: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    topic: str | None = None
    stamp: str = "header"
    time_range: tuple[float, float] | None = None
    rows: tuple[int, int] | None = None
    current_gain_std: tuple[float, ...] = ()

    def __post_init__(self):
        for option, part in (("--time-range", self.time_range), ("--rows", self.rows)):
            if part is not None and not (len(part) == 2 and part[0] <= part[1]):
                raise DataError(f"{option} {part}: expected FIRST:LAST with FIRST <= LAST")
        if self.time_unit not in TIME_UNITS:
            raise DataError(f"time unit '{self.time_unit}' unknown, expected one of {list(TIME_UNITS)}")
        for name in self.negate:
            if re.fullmatch(r"(q|dq|ddq|tau|i|u)([1-9]\d*)?", name) is None:
                raise DataError(f"--negate '{name}': expected a signal (q, dq, ddq, tau, i, u) or one of its "
                                "columns (tau3), comma-separated")
        # negated twice is not negated: 'tau,tau' and 'tau,tau2' are mistakes, never meant
        refuse_repeated(self.negate, "--negate", covers=lambda a, b: re.sub(r"\d+$", "", b) == a != b)
        refuse_repeated(self.ignore, "--ignore")
        if self.stamp not in ("header", "receive"):
            raise DataError(f"--stamp '{self.stamp}' unknown, expected header or receive")
        for name in self.ignore:
            if name not in IGNORABLE:
                raise DataError(f"--ignore '{name}': expected one of {list(IGNORABLE)} (estimated from q instead)")

    @classmethod
    def from_options(cls, rename: str | None = None, names: str | None = None, time_unit: str = "s",
                     degrees: bool = False, motor_side: bool = False,
                     current_gain: str | None = None, negate: str | None = None,
                     ignore: str | None = None, topic: str | None = None, stamp: str = "header",
                     time_range: str | None = None, rows: str | None = None) -> "ColumnMapping":
        """From CLI strings: rename 'time=t,pos1=q1', names 't,q1,q2,tau1,tau2', negate 'tau'
        or 'tau2,tau5', ignore 'dq,ddq', time_range '10:60' (or '10:', ':60'), rows '1001:5000'."""
        pairs = parse_pairs(rename, "--rename", "FOREIGN=CONTRACT pairs like 'time=t'")
        current_gain, gain_std = drive_gains_text(current_gain)
        cols = tuple(c.strip() for c in names.split(",")) if names else None
        split = lambda text: tuple(p.strip() for p in (text or "").split(",") if p.strip())  # noqa: E731
        return cls(tuple(pairs), cols, time_unit, degrees, motor_side, current_gain, split(negate), split(ignore),
                   topic, stamp, parse_range(time_range, "--time-range", float),
                   parse_range(rows, "--rows", int), gain_std)

    def to_dict(self) -> dict:
        return {"rename": [list(p) for p in self.rename], "names": list(self.names) if self.names else None,
                "time_unit": self.time_unit, "degrees": self.degrees, "motor_side": self.motor_side,
                "current_gain": self.current_gain, "negate": list(self.negate), "ignore": list(self.ignore),
                "topic": self.topic, "stamp": self.stamp,
                **({"current_gain_relative_std": list(self.current_gain_std)} if self.current_gain_std else {})}

    @classmethod
    def from_dict(cls, d: dict | None) -> "ColumnMapping":
        """From ``to_dict`` (a result's 'column_mapping'); a malformed entry is a DataError."""
        try:
            return cls._from_dict(d)
        except (TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, DataError):
                raise
            raise DataError(f"'column_mapping' is malformed ({exc}); expected the mapping dynid identify "
                            "stores") from None

    @classmethod
    def _from_dict(cls, d: dict | None) -> "ColumnMapping":
        d = d or {}
        return cls(tuple(tuple(p) for p in d.get("rename", [])),
                   tuple(d["names"]) if d.get("names") else None, d.get("time_unit", "s"),
                   bool(d.get("degrees", False)), bool(d.get("motor_side", False)), d.get("current_gain"),
                   tuple(d.get("negate") or ()), tuple(d.get("ignore") or ()), d.get("topic"),
                   d.get("stamp") or "header",
                   current_gain_std=tuple(float(v) for v in d.get("current_gain_relative_std") or ()))

    def keep_rows(self, first: int, count: int) -> slice:
        """Which of ``count`` data rows numbered from ``first`` (1-based) ``rows`` keeps (a slice)."""
        if self.rows is None:
            return slice(0, count)
        lo = min(max(self.rows[0] - first, 0), count)
        return slice(lo, max(min(self.rows[1] - first + 1, count), lo))

    def in_time_range(self, t: np.ndarray) -> np.ndarray | None:
        """(N,) True for the stamps t [s] within ``time_range``; None without one."""
        if self.time_range is None:
            return None
        return (t >= self.time_range[0]) & (t <= self.time_range[1])

    def part(self) -> str:
        """The options that read a part of a log, as typed ('' when the whole log is read)."""
        out = []
        for option, bounds in (("--time-range", self.time_range), ("--rows", self.rows)):
            if bounds is not None:
                out.append(f"{option} " + ":".join("" if not math.isfinite(b) else f"{b:g}" for b in bounds))
        return " ".join(out)

    def contract_name(self, name: str) -> str:
        return dict(self.rename).get(name, name)

    def gains(self, robot) -> np.ndarray:
        """Per-joint current gains K (n,) so that tau_joint = K i (i as logged)."""
        if self.current_gain is None:
            raise DataError("the data has currents i1..in but no torques: give --current-gain "
                            "(comma-separated N m/A per joint, or 'drive' to use the robot's drive data)")
        if self.current_gain.strip() == "drive":
            kt = np.array([j.drive.torque_constant for j in robot.joints])
            if not np.all(np.isfinite(kt)):
                missing = [robot.joints[i].name for i in np.flatnonzero(~np.isfinite(kt))]
                raise DataError(f"--current-gain drive: robot '{robot.name}' has no torque constant "
                                f"for joints {missing}; give the gains as numbers")
            return kt * robot.gear_ratios
        gains = _parse_list(self.current_gain, robot.n, "--current-gain")
        bad = [j + 1 for j in range(robot.n) if not (np.isfinite(gains[j]) and gains[j] != 0)]
        if bad:
            raise DataError(f"--current-gain {self.current_gain}: joint(s) {bad} have gain "
                            f"{[float(gains[j - 1]) for j in bad]}; expected finite, non-zero gains [N m/A] "
                            "(0 reads every torque of the joint as 0)")
        return gains

    def conventions(self, columns: dict[str, np.ndarray], n: int, source: str) -> dict[str, np.ndarray]:
        """``negate`` and ``ignore`` applied to raw columns (contract names after renaming)."""
        out = {k: v for k, v in columns.items() if re.sub(r"\d+$", "", k) not in self.ignore}
        for name in self.negate:
            block = re.sub(r"\d+$", "", name)
            targets = [f"{block}{j + 1}" for j in range(n)] if block == name else [name]
            if block != name and int(name[len(block):]) > n:
                raise DataError(f"--negate {name}: the robot has {n} joints")
            present = [c for c in targets if c in out]
            if not present:
                raise DataError(f"{source}: --negate {name}: no column {targets[0] if len(targets) == 1 else block + '1..'}"
                                f"{'' if len(targets) == 1 else str(n)} in the data (found {sorted(out)[:12]})")
            for c in present:
                out[c] = -np.asarray(out[c], dtype=float)
        return out

    def apply(self, robot, columns: dict[str, np.ndarray], source: str) -> JointData:
        """Raw columns (contract names after renaming) -> JointData in SI on the joint side."""
        n = robot.n
        if self.negate or self.ignore:
            columns = self.conventions(columns, n, source)

        def block(prefix: str, required: bool) -> np.ndarray | None:
            names = [f"{prefix}{j + 1}" for j in range(n)]
            have = [c for c in names if c in columns]
            if not have and not required:
                return None
            missing = [c for c in names if c not in columns]
            if missing:
                raise DataError(f"{source}: missing column(s) {missing} (robot '{robot.name}' has "
                                f"{n} joints; found columns {sorted(columns)[:20]})")
            return np.column_stack([columns[c] for c in names]).astype(float)

        if "t" not in columns:
            raise DataError(f"{source}: no time column 't' (found {sorted(columns)[:20]}); "
                            "map one with --rename NAME=t")
        t = np.asarray(columns["t"], dtype=float) * TIME_UNITS[self.time_unit]
        q, dq, ddq = block("q", True), block("dq", False), block("ddq", False)
        tau = block("tau", False)
        notes = []
        if tau is None:
            current = block("i", False)
            if current is not None:
                k = self.gains(robot)
                tau = current * k
                if robot.is_coupled:  # motor torques K_k / N_k i_k, joint torques T^T tau_m (docs/transmissions.md)
                    tau = current * (k / robot.gear_ratios) @ robot.transmission_matrix
                notes.append(f"torques from currents, tau = K i with K = {np.round(k, 6).tolist()}"
                             + (" through the coupled transmission, tau = T^T diag(K/N) i" if robot.is_coupled else ""))
        scale = np.ones(n)
        if self.degrees:
            scale = np.where(robot.is_revolute, math.pi / 180.0, 1.0)
        zero = np.zeros(n)
        if self.motor_side and robot.is_coupled:  # q = T^-1 q_m, tau = T^T tau_m (robot/transmission.py)
            from dynid.robot.transmission import joint_from_motor, joint_torques

            t_matrix = robot.transmission_matrix
            q, dq, ddq = (None if x is None else joint_from_motor(t_matrix, x * scale) for x in (q, dq, ddq))
            scale = np.ones(n)
            if tau is not None and "tau1" in columns:
                tau = joint_torques(t_matrix, tau)
        elif self.motor_side:
            scale = scale / robot.gear_ratios
            if tau is not None and "tau1" in columns:
                tau = tau * robot.gear_ratios
        if self.motor_side:  # the encoders' zero is the drives' zero_offset, not the description's zero
            zero = robot.zero_offsets
        q = q * scale + zero
        dq = None if dq is None else dq * scale
        ddq = None if ddq is None else ddq * scale
        cycle = np.asarray(columns["cycle"]).astype(np.int64) if "cycle" in columns else None
        stage = np.asarray(columns["stage"]).astype(str) if "stage" in columns else None
        segment = np.asarray(columns["segment"], dtype=object) if "segment" in columns else None
        return JointData(t, q, dq, ddq, tau, cycle, stage, source, notes, segment=segment)
