"""Joint data from ROS logs: ROS 1 bags, ROS 2 bags (sqlite3 or MCAP storage) and MCAP files.

Read with the ``rosbags`` package (pure Python; no ROS installation). A source is a bag when
it is a ``.bag`` file (ROS 1), a directory holding ``metadata.yaml`` (ROS 2), or a ``.db3``
or ``.mcap`` storage file. One topic of type ``sensor_msgs/JointState`` (``--topic``,
default ``/joint_states``) becomes the contract's joint data (docs/formats.md section 3):

- joints are matched **by name** with the robot's actuated joints (``robot.joint_names``):
  the messages may list them in any order, and extra joints (a gripper, a second arm) are
  left out. A joint of the robot that the messages never name is an error naming it;
- ``position`` -> q, ``velocity`` -> dq (when at least half of the first ``PROBE`` messages that
  name the robot's joints have velocities; likewise effort: a first message published before
  the drives filled every field does not decide it),
  ``effort`` -> tau, or the currents i when the column mapping has a ``current_gain``
  (``--current-gain``: effort holds motor currents);
- time: the header stamp (``stamp="header"``, default) or the time the recorder received
  the message (``stamp="receive"``), in s from the first message's (nanoseconds are exact);
  header stamps that are all zero (a publisher that never fills them) are an error that
  suggests ``--stamp receive``;
- a message that lacks a field the others have (an empty ``effort``, a joint missing from
  ``name``, arrays shorter than ``name``) is dropped and counted in a note naming the first
  one (``nan="reject"``: an error), never zero-filled.

``bag_tables`` streams ``chunk_rows`` messages at a time as Arrow tables with contract
column names, so the rest of the data layer (column mapping, cleaning, segments,
preprocessing) treats a bag like a CSV file. Irregular publishing rates are resampled there.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path, PurePath

import numpy as np

from dynid.errors import DataError, DynidError

DEFAULT_TOPIC = "/joint_states"
JOINT_STATE = "sensor_msgs/msg/JointState"
STAMPS = ("header", "receive")
PROBE = 64  # messages that decide which fields (velocity, effort) the topic carries


def is_bag(path) -> bool:
    """A ROS 1 bag, a ROS 2 bag directory (metadata.yaml) or a .db3 / .mcap storage file."""
    if not isinstance(path, (str, PurePath)):  # an in-memory log (data/arrays.py)
        return False
    path = Path(path)
    if path.is_dir():
        return (path / "metadata.yaml").is_file()
    return path.suffix.lower() in (".bag", ".db3", ".mcap")


def _register_inputs(path: Path) -> None:
    """Note the bag's files as inputs of the running command (outputs may never overwrite them)."""
    from dynid.files.inputs import input_file

    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    for file in files:
        input_file(file, "ROS bag")


@contextlib.contextmanager
def _bag_errors(path: Path, what: str):
    """Whatever a malformed bag makes rosbags (or the storage libraries below it: sqlite3,
    zstd, lz4, struct) raise, as one DataError naming the bag; missing files and permissions
    stay what they are."""
    try:
        yield
    except (DynidError, FileNotFoundError, PermissionError):
        raise
    except Exception as exc:  # noqa: BLE001 - a third-party parser of untrusted bytes
        detail = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise DataError(f"{path}: {what} ({detail})") from None


class _Reader:
    """An open rosbags AnyReader with one-line errors naming the bag."""

    def __init__(self, path: Path):
        from rosbags.highlevel import AnyReader
        from rosbags.typesys import Stores, get_typestore

        self.path = path
        if not os.path.lexists(path):  # rosbags would say "The following paths are missing: [PosixPath(...)]"
            raise FileNotFoundError(f"ROS bag not found: {path}")
        store = get_typestore(Stores.ROS1_NOETIC if path.suffix.lower() == ".bag" else Stores.ROS2_HUMBLE)
        with _bag_errors(path, "not a readable ROS bag"):
            self.reader = AnyReader([path], default_typestore=store)
            self.reader.open()

    def close(self) -> None:
        try:
            self.reader.close()
        except Exception:  # noqa: BLE001 - closing a broken bag must not hide the first error
            pass

    def topics(self) -> dict[str, str]:
        return {c.topic: c.msgtype for c in self.reader.connections}

    def connections(self, topic: str) -> list:
        topics = self.topics()
        if topic not in topics:
            listed = ", ".join(f"{t} ({m})" for t, m in sorted(topics.items())) or "none"
            raise DataError(f"{self.path}: no topic '{topic}'; the bag has: {listed}")
        if topics[topic] != JOINT_STATE:
            raise DataError(f"{self.path}: topic '{topic}' holds {topics[topic]}, expected {JOINT_STATE}")
        return [c for c in self.reader.connections if c.topic == topic]

    def messages(self, topic: str) -> Iterator[tuple[int, object]]:
        """(receive time [ns], JointState message) in receive order."""
        connections = self.connections(topic)
        with _bag_errors(self.path, f"a message on '{topic}' cannot be read"):
            for connection, received, raw in self.reader.messages(connections=connections):
                yield received, self.reader.deserialize(raw, connection.msgtype)


def message_count(path, topic: str | None = None) -> int:
    """Messages on ``topic`` (default /joint_states) from the bag's index, without reading them."""
    reader = _Reader(Path(path))
    try:
        return int(sum(c.msgcount for c in reader.connections(topic or DEFAULT_TOPIC)))
    finally:
        reader.close()


def bag_joint_names(path, topic: str = DEFAULT_TOPIC) -> list[str]:
    """The joint names of the first message on ``topic`` (for a conversion without a robot)."""
    reader = _Reader(Path(path))
    try:
        for _, message in reader.messages(topic):
            return list(message.name)
    finally:
        reader.close()
    raise DataError(f"{path}: no message on '{topic}'")


class _Rows:
    """Rows of one chunk being assembled (column lists), with the message checks."""

    def __init__(self, joints: list[str], source: str, topic: str, effort_as: str, nan: str):
        self.joints, self.source, self.topic, self.effort_as, self.nan = joints, source, topic, effort_as, nan
        self.index_of: dict[tuple, np.ndarray | None] = {}
        self.fields: tuple[bool, bool] | None = None  # (velocity, effort) carried: ``decide``
        self.dropped = 0
        self.first_drop: str | None = None
        self.seen: set[str] = set()

    def columns(self, names: tuple) -> np.ndarray | None:
        """Positions of the robot's joints in a message's name list (None when one is missing)."""
        if names not in self.index_of:
            where = {n: k for k, n in enumerate(names)}
            self.seen.update(names)
            self.index_of[names] = (np.array([where[j] for j in self.joints])
                                    if all(j in where for j in self.joints) else None)
        return self.index_of[names]

    def decide(self, messages: list) -> None:
        """Fields = velocity / effort when at least half of these messages naming the robot's joints
        carry them in full (a first message with empty arrays does not decide alone)."""
        full = [m for m in messages if self.columns(tuple(m.name)) is not None]
        if full:
            self.fields = tuple(2 * sum(len(getattr(m, f)) == len(m.name) for m in full) >= len(full)
                                for f in ("velocity", "effort"))

    def decided(self, stream: Iterator) -> Iterator:
        """The (number, t, message) stream, ``fields`` decided on its first ``PROBE`` messages (on
        the next ``PROBE`` while none of them names the robot's joints): ``row`` never sees a
        message naming them before ``fields`` is set."""
        pending = []
        for item in stream:
            if self.fields is None:
                pending.append(item)
                if len(pending) < PROBE:
                    continue
                self.decide([m for _, _, m in pending])
                yield from pending
                pending = []
                continue
            yield item
        if pending:
            self.decide([m for _, _, m in pending])
            yield from pending

    def drop(self, number: int, t: float, why: str) -> None:
        if self.nan == "reject":
            raise DataError(f"{self.source}: message {number} on '{self.topic}' (t = {t:.6g} s) {why}; "
                            "expected every message to carry the same fields (use --nan drop to skip it)")
        self.dropped += 1
        if self.first_drop is None:
            self.first_drop = f"message {number} (t = {t:.6g} s) {why}"

    def row(self, number: int, t: float, message) -> list | None:
        """[q..., dq..., effort...] of the robot's joints, or None (dropped) when a field is missing."""
        names = tuple(message.name)
        index = self.columns(names)
        if index is None:
            missing = [j for j in self.joints if j not in names]
            self.drop(number, t, f"does not name joint(s) {missing}")
            return None
        arrays = (message.position, message.velocity, message.effort)
        wanted = (True,) + self.fields
        for label, values, want in zip(("position", "velocity", "effort"), arrays, wanted):
            if want and len(values) != len(names):
                self.drop(number, t, f"has {len(values)} {label} value(s) for {len(names)} joint names")
                return None
        return [np.asarray(values, dtype=float)[index] for values, want in zip(arrays, wanted) if want]

    def names(self) -> list[str]:
        n = len(self.joints)
        out = [f"q{j + 1}" for j in range(n)]
        velocity, effort = self.fields or (False, False)
        if velocity:
            out += [f"dq{j + 1}" for j in range(n)]
        if effort:
            out += [f"{self.effort_as}{j + 1}" for j in range(n)]
        return out


def bag_tables(path, joints: list[str], topic: str = DEFAULT_TOPIC, stamp: str = "header",
               chunk_rows: int = 50_000, effort_as: str = "tau", nan: str = "drop",
               notes: list[str] | None = None) -> Iterator:
    """Arrow tables (t, q1..qn, dq1..dqn, tau1..taun or i1..in) of ``chunk_rows`` messages each
    (module docstring). ``joints``: the robot's joint names in data column order. Notes (dropped
    messages, the time origin, extra joints) are appended to ``notes`` when the bag is read."""
    import pyarrow as pa

    path = Path(path)
    if stamp not in STAMPS:
        raise DataError(f"--stamp '{stamp}' unknown, expected one of {list(STAMPS)}")
    if not path.exists():
        raise FileNotFoundError(f"ROS bag not found: {path}")
    _register_inputs(path)
    reader = _Reader(path)
    rows = _Rows(list(joints), str(path), topic, effort_as, nan)
    origin = {"t0": None, "count": 0}

    def timed():
        for number, (received, message) in enumerate(reader.messages(topic), start=1):
            origin["count"] = number
            ns = received if stamp == "receive" else message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
            if origin["t0"] is None:
                if stamp == "header" and ns == 0:
                    raise DataError(f"{path}: the header stamps on '{topic}' are zero (the publisher does not set "
                                    "them); use --stamp receive to take the recorder's receive times")
                origin["t0"] = ns
            yield number, (ns - origin["t0"]) * 1e-9, message

    block, times = [], []
    span = [np.inf, -np.inf]
    try:
        for number, t, message in rows.decided(timed()):
            values = rows.row(number, t, message)
            if values is None:
                continue
            span = [min(span[0], t), max(span[1], t)]
            times.append(t)
            block.append(np.concatenate(values))
            if len(block) >= chunk_rows:
                yield _table(pa, times, block, rows.names())
                times, block = [], []
        if block:
            yield _table(pa, times, block, rows.names())
    finally:
        reader.close()
    t0, count = origin["t0"], origin["count"]
    if count == 0:
        raise DataError(f"{path}: no message on '{topic}'")
    if count > 1 and span[1] == span[0]:
        which = ("receive time (the recorder stored them at once: use --stamp header)" if stamp == "receive"
                 else "header stamp (the publisher does not advance them: use --stamp receive)")
        raise DataError(f"{path}: all {count} messages on '{topic}' have the same {which}")
    if rows.fields is None:
        missing = [j for j in joints if j not in rows.seen]
        raise DataError(f"{path}: the messages on '{topic}' never name the robot's joint(s) {missing} "
                        f"(they name {sorted(rows.seen)[:12]}); expected the robot's joint names")
    if notes is not None:
        origin = "header stamps" if stamp == "header" else "receive times"
        notes.append(f"{topic}: time from the first message's {origin} ({t0 * 1e-9:.9f} s)")
        extra = sorted(rows.seen - set(joints))
        if extra:
            notes.append(f"{topic}: joint(s) {extra[:8]} not in the robot: not read")
        if rows.dropped:
            notes.append(f"{rows.dropped} message(s) on '{topic}' lacked a field and were dropped "
                         f"(first: {rows.first_drop})")


def _table(pa, times: list, block: list, names: list[str]):
    values = np.vstack(block)
    columns = {"t": pa.array(np.asarray(times))}
    columns.update({name: pa.array(values[:, k]) for k, name in enumerate(names)})
    return pa.table(columns)


def robot_tables(path, robot, mapping, chunk_rows: int = 50_000, nan: str = "drop",
                 notes: list[str] | None = None) -> Iterator:
    """``bag_tables`` for ``robot`` and a ``ColumnMapping`` (its ``topic``, ``stamp``; effort
    holds currents when it has a ``current_gain``)."""
    return bag_tables(path, robot.joint_names, mapping.topic or DEFAULT_TOPIC, mapping.stamp, chunk_rows,
                      "i" if mapping.current_gain else "tau", nan, notes)


def read_bag(path, robot, mapping, nan: str = "drop"):
    """(the whole topic as one Arrow table, notes) for the in-memory readers."""
    import pyarrow as pa

    notes: list[str] = []
    tables = list(robot_tables(path, robot, mapping, 1 << 30, nan, notes))
    return (tables[0] if len(tables) == 1 else pa.concat_tables(tables)), notes
