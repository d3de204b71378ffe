"""Malformed inputs for every reader, made from a valid file by a seeded mutation.

``READERS`` maps a reader name to (file suffix, valid content maker, read function). ``case(name,
seed, base)`` returns (mutation name, bytes): one of the generic byte mutations (random bytes,
truncation, flipped or inserted bytes, UTF-16 or Latin-1 text, empty file, a very long line) or a
mutation that knows the format (CSV columns missing, duplicated or extra and cells NaN, inf, huge
or text; JSON/YAML values of the wrong type, short lists, deep nesting, YAML alias bombs; XML
attributes). The property checked by tests/test_fuzz_readers.py and bench/fuzz.py: a reader
either reads the file or raises ``dynid.errors.DynidError`` (FileNotFoundError never applies:
the file exists). Everything is seeded: the same seed gives the same case.

Inputs that every reader accepts but that cannot be right together (an option naming one thing
twice, an output inside an input, a covariance with a negative variance...) are the kinds of
tests/fuzz_kinds.py (issue 26); nonsense inside logs and results, tests/plausibility_inputs.py.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import numpy as np

SPECIAL = ["nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e999", "", "abc", "0x10", "true", "null", "1,5",
           "9" * 400, "-0", "1e-320", "\u00e9", " ", "\"q\""]
JSON_SPECIAL = [None, True, False, 0, -1, 2**70, 1e308, float("nan"), float("inf"), "", "x", [], {}, [1.0],
                {"a": 1}, "NaN", -1e-320]


# -- valid contents ----------------------------------------------------------------------------

def valid_csv(n: int = 2, rows: int = 60) -> bytes:
    t = np.arange(rows) * 0.01
    cols = {"t": t}
    for j in range(n):
        cols[f"q{j + 1}"] = 0.5 * np.sin((j + 1) * 2 * np.pi * t)
        cols[f"tau{j + 1}"] = np.cos((j + 1) * 2 * np.pi * t)
    text = ",".join(cols) + "\n" + "\n".join(",".join(repr(float(cols[k][i])) for k in cols) for i in range(rows))
    return (text + "\n").encode()


def valid_parquet() -> bytes:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    table = pacsv.read_csv(io.BytesIO(valid_csv()))
    sink = io.BytesIO()
    pq.write_table(table, sink)
    del pa
    return sink.getvalue()


URDF = """<?xml version="1.0"?>
<robot name="fuzz">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.1 0 0" rpy="0 0 0"/><mass value="2"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/></inertial></link>
  <link name="l2"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.005"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <origin xyz="0 0 0.3" rpy="0 0 0"/><limit lower="-2.9" upper="2.9" effort="50" velocity="2"/></joint>
  <joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/><axis xyz="1 0 0"/>
    <origin xyz="0.4 0 0" rpy="1.5708 0 0"/><limit lower="0" upper="0.5" effort="100" velocity="1"/></joint>
</robot>
"""

YAML = """name: fuzz
convention: mdh
gravity: [0.0, 0.0, -9.81]
joints:
  - {type: revolute, a: 0.0, alpha: 0.0, d: 0.3, theta: 0.0}
  - {type: prismatic, a: 0.4, alpha: -1.5707963267948966, d: 0.0, theta: 0.0}
links:
  - {mass: 2.0, com: [0.1, 0.0, 0.0], inertia: [0.02, 0.0, 0.0, 0.02, 0.0, 0.01]}
  - {mass: 1.0, com: [0.0, 0.0, 0.05], inertia: [0.01, 0.0, 0.0, 0.01, 0.0, 0.005]}
limits:
  - {q_min: -2.9, q_max: 2.9, dq_max: 2.2, ddq_max: 15.0, tau_max: 87.0}
  - {q_min: 0.0, q_max: 0.5}
drives:
  - {gear_ratio: 100.0, rotor_inertia: 0.0001}
  - {gear_ratio: 50.0}
"""


def valid_body_csv(n: int = 2, rows: int = 12) -> bytes:
    from dynid.multibody.bodydata import columns

    rng = np.random.default_rng(0)
    names = columns(n)
    values = rng.normal(size=(rows, len(names)))
    values[:, 0] = np.arange(rows) * 0.01
    for i in range(n):
        k = names.index(f"b{i + 1}_qw")
        q = rng.normal(size=(rows, 4))
        values[:, k:k + 4] = q / np.linalg.norm(q, axis=1, keepdims=True)
    text = ",".join(names) + "\n" + "\n".join(",".join(repr(float(v)) for v in row) for row in values)
    return (text + "\n").encode()


def valid_friction() -> bytes:
    cycles = np.repeat(np.arange(1, 7), 2)
    level = np.tile([1, 2], 6)
    time = cycles * 300.0
    friction = 2.0 + level * 0.5 + 1.5 * np.exp(-time / 600.0)
    return json.dumps({"format": "dynid-friction-analysis", "version": 1, "robot": "planar2", "n": 1,
                       "levels": [{"joint": 1, "speeds": [0.5, 1.0]}], "vertical_cos": 0.99, "gravity_removed": [],
                       "points": {}, "friction": {"joint": [1] * 12, "level": level.tolist(), "cycle": cycles.tolist(),
                                                   "time": time.tolist(), "friction": friction.tolist()},
                       "drift": [], "notes": []}).encode()


def valid_trajectory() -> bytes:
    from dynid.excite.builtin import builtin_trajectory
    from dynid.excite.fileio import trajectory_to_dict

    return json.dumps(trajectory_to_dict(builtin_trajectory("thesis-table-4.1", 6), "er3a")).encode()


# -- generic byte mutations ---------------------------------------------------------------------

def _random_bytes(rng, data):
    return bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 10, 200, 3000])))


def _truncate(rng, data):
    return data[:rng.randrange(len(data) + 1)]


def _flip(rng, data):
    b = bytearray(data)
    for _ in range(rng.choice([1, 3, 20])):
        if b:
            b[rng.randrange(len(b))] = rng.getrandbits(8)
    return bytes(b)


def _insert(rng, data):
    k = rng.randrange(len(data) + 1)
    return data[:k] + bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 40))) + data[k:]


def _utf16(rng, data):
    return data.decode("utf-8", "replace").encode("utf-16")


def _latin1(rng, data):
    text = data.decode("utf-8", "replace")
    k = rng.randrange(len(text) + 1)
    return (text[:k] + "\u00e9\u00df\u00b0" + text[k:]).encode("latin-1", "replace")


def _empty(rng, data):
    return b"" if rng.random() < 0.7 else b"\n" * rng.randrange(1, 5)


def _long_line(rng, data):
    return data + b"9" * 200_000 + b"\n"


def _nul(rng, data):
    k = rng.randrange(len(data) + 1)
    return data[:k] + b"\x00" * rng.randrange(1, 10) + data[k:]


BYTE_MUTATIONS = [_random_bytes, _truncate, _flip, _insert, _utf16, _latin1, _empty, _long_line, _nul]


# -- CSV mutations --------------------------------------------------------------------------------

def _csv_table(data: bytes) -> tuple[list[str], list[list[str]]]:
    lines = data.decode().strip().split("\n")
    return lines[0].split(","), [ln.split(",") for ln in lines[1:]]


def _csv_bytes(header, rows) -> bytes:
    return ("\n".join([",".join(header)] + [",".join(r) for r in rows]) + "\n").encode()


def _csv_columns(rng, data):
    header, rows = _csv_table(data)
    k = rng.randrange(len(header))
    action = rng.choice(["drop", "duplicate", "extra", "rename", "swap", "reorder", "no-header"])
    if action == "drop":
        header.pop(k)
        for r in rows:
            r.pop(k)
    elif action == "duplicate":
        header.append(header[k])
        for r in rows:
            r.append(r[k])
    elif action == "extra":
        header.append(rng.choice(["q9", "dq1", "ddq2", "i1", "u2", "temp1", "cycle", "stage", "tau3", "x", ""]))
        for r in rows:
            r.append(rng.choice(SPECIAL + ["1.0", "2", "warm"]))
    elif action == "rename":
        header[k] = rng.choice(["", "T", "q 1", "q1 ", "Q1", "tau_1", "t", "q2", "\u00e9"])
    elif action == "swap":
        j = rng.randrange(len(header))
        header[k], header[j] = header[j], header[k]
    elif action == "reorder":
        rng.shuffle(rows)
    else:
        rows.insert(0, header)
        header = [str(v) for v in rows.pop(1)]
    return _csv_bytes(header, rows)


def _csv_cells(rng, data):
    header, rows = _csv_table(data)
    for _ in range(rng.choice([1, 2, 10, 100])):
        r = rng.randrange(len(rows))
        c = rng.randrange(len(header))
        rows[r][c] = rng.choice(SPECIAL)
    return _csv_bytes(header, rows)


def _csv_rows(rng, data):
    header, rows = _csv_table(data)
    action = rng.choice(["one", "two", "none", "same-time", "short-row", "long-row", "backwards"])
    if action in ("one", "two", "none"):
        rows = rows[:{"one": 1, "two": 2, "none": 0}[action]]
    elif action == "same-time":
        for r in rows:
            r[0] = "0.5"
    elif action == "short-row":
        rows[rng.randrange(len(rows))].pop()
    elif action == "long-row":
        rows[rng.randrange(len(rows))].append("1")
    else:
        rows.reverse()
    return _csv_bytes(header, rows)


# -- JSON / YAML / XML mutations -----------------------------------------------------------------

def _paths(value, prefix=()):
    yield prefix
    if len(prefix) > 8:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:5]):
            yield from _paths(v, prefix + (i,))


def _json_tree(rng, data):
    doc = json.loads(data)
    for _ in range(rng.choice([1, 1, 2, 5])):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            return json.dumps(rng.choice(JSON_SPECIAL)).encode()
        path = rng.choice(paths)
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        action = rng.choice(["replace", "delete", "shorten", "nest"])
        if action == "delete":
            del parent[key]
        elif action == "shorten" and isinstance(parent[key], list) and parent[key]:
            parent[key] = parent[key][:rng.randrange(len(parent[key]))]
        elif action == "nest":
            deep = 0
            for _ in range(rng.choice([3, 100, 5000])):
                deep = [deep]
            parent[key] = deep
        else:
            parent[key] = rng.choice(JSON_SPECIAL)
    try:
        return json.dumps(doc).encode()
    except (RecursionError, ValueError):
        return b"[" * 5000 + b"]" * 5000


def _deep(rng, data):
    depth = rng.choice([100, 10_000, 100_000])
    return rng.choice([b"[" * depth + b"]" * depth, b"{\"a\":" * depth + b"1" + b"}" * depth])


def _yaml_values(rng, data):
    text = data.decode()
    tokens = ["0.0", "0.3", "2.0", "revolute", "mdh", "-2.9", "2.9", "100.0", "[0.1, 0.0, 0.0]", "fuzz"]
    for _ in range(rng.choice([1, 2, 4])):
        tok = rng.choice(tokens)
        text = text.replace(tok, rng.choice(["", "~", ".nan", ".inf", "-.inf", "1e999", "'x'", "[1, 2]",
                                             "{a: 1}", "yes", "1.0e308", "*nope", "!!python/name:os.system",
                                             "90", "-1.0", "[]", "&a 1"]), 1)
    return text.encode()


def _yaml_bomb(rng, data):
    lines = ["a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]"]
    prev = "a"
    for k in "bcdefghi":
        lines.append(f"{k}: &{k} [" + ", ".join([f"*{prev}"] * 9) + "]")
        prev = k
    field = rng.choice(["name", "description", "convention"])
    return (data.decode() + "\n".join(lines) + f"\n").replace(f"{field}:", f"x_{field}:", 1).encode() \
        + f"{field}: *{prev}\n".encode()


def _yaml_duplicate_key(rng, data):
    return data + rng.choice([b"name: again\n", b"convention: dh\n", b"joints: []\n"])


def _xml_attributes(rng, data):
    text = data.decode()
    for _ in range(rng.choice([1, 2, 4])):
        tok = rng.choice(["\"2\"", "\"0.02\"", "\"0 0 1\"", "\"-2.9\"", "\"2.9\"", "\"revolute\"", "\"l1\"",
                          "\"0.1 0 0\"", "\"50\"", "\"1 0 0\""])
        text = text.replace(tok, rng.choice(["\"\"", "\"nan\"", "\"inf\"", "\"-1\"", "\"x\"", "\"1e999\"",
                                             "\"0 0 0\"", "\"1 2\"", "\"1e308 0 0\"", "\"floating\"", "\"nope\"",
                                             "\"3 -3\""]), 1)
    return text.encode()


def _xml_structure(rng, data):
    text = data.decode()
    action = rng.choice(["entity", "drop-element", "deep", "cycle", "root"])
    if action == "entity":
        return ("<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;\">"
                "<!ENTITY c \"&b;&b;&b;&b;&b;&b;\">]>" + text.split("?>", 1)[1].replace("fuzz", "&c;")).encode()
    if action == "drop-element":
        for tag in ("<limit", "<axis", "<parent", "<child", "<inertia ", "<mass"):
            if tag in text and rng.random() < 0.5:
                start = text.index(tag)
                text = text[:start] + text[text.index("/>", start) + 2:]
        return text.encode()
    if action == "deep":
        depth = rng.choice([100, 5000])
        return text.replace("<link name=\"base\"/>", "<link name=\"base\">" + "<a>" * depth + "</a>" * depth
                            + "</link>").encode()
    if action == "cycle":
        return text.replace("<parent link=\"base\"/>", "<parent link=\"l2\"/>").encode()
    return text.replace("<robot", "<robut").replace("</robot>", "</robut>").encode()


FORMAT_MUTATIONS = {
    "csv": [_csv_columns, _csv_cells, _csv_rows] * 3,
    "body": [_csv_columns, _csv_cells, _csv_rows] * 3,
    "parquet": [],
    "bag": [],
    "mcap": [],
    "urdf": [_xml_attributes, _xml_structure] * 3,
    "yaml": [_yaml_values, _yaml_bomb, _yaml_duplicate_key, _yaml_values] * 2,
    "result": [_json_tree, _deep] * 4 + [_json_tree] * 4,
    "trajectory": [_json_tree, _deep] * 4 + [_json_tree] * 4,
    "friction": [_json_tree, _deep] * 4 + [_json_tree] * 4,
    "limits": [_yaml_values, _yaml_bomb, _yaml_duplicate_key, _yaml_values] * 2,
}


def _parquet_mutation(rng, data):
    """A valid Parquet file of a mutated CSV (types, columns, values), or its bytes mutated."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    csv = valid_csv()
    csv = rng.choice([_csv_columns, _csv_cells, _csv_rows])(rng, csv)
    try:
        table = pacsv.read_csv(io.BytesIO(csv))
    except Exception:  # noqa: BLE001 - an unreadable mutation: fall back to byte mutations
        return rng.choice(BYTE_MUTATIONS)(rng, data)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


FORMAT_MUTATIONS["parquet"] = [_parquet_mutation] * 6


def case(reader: str, seed: int, base: bytes) -> tuple[str, bytes]:
    """(mutation name, content) of case ``seed`` for ``reader`` made from the valid ``base``."""
    rng = random.Random(f"{reader}:{seed}")
    mutation = rng.choice(BYTE_MUTATIONS + FORMAT_MUTATIONS[reader])
    try:
        return mutation.__name__.lstrip("_"), mutation(rng, base)
    except (ValueError, IndexError, UnicodeDecodeError, json.JSONDecodeError):
        return "random_bytes", _random_bytes(rng, base)


# -- the readers ----------------------------------------------------------------------------------

def _read_csv(path):
    import dynid
    from dynid.data.io import load_joint_data
    from dynid.data.stream import raw_chunks

    robot = dynid.load_robot("planar2")
    load_joint_data(path, robot)
    list(raw_chunks(path, robot, chunk_rows=17))


def valid_bag(kind: str = "ros1") -> bytes:
    """A ROS 1 bag (or a plain MCAP file) of 40 JointState messages of planar2's two joints."""
    import tempfile

    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS1_NOETIC if kind == "ros1" else Stores.ROS2_HUMBLE)
    joint_state, header, time = (store.types[k] for k in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header",
                                                         "builtin_interfaces/msg/Time"))
    with tempfile.TemporaryDirectory() as tmp:
        if kind == "ros1":
            from rosbags.rosbag1 import Writer
            path, writer, serialize = Path(tmp) / "b.bag", Writer(Path(tmp) / "b.bag"), store.serialize_ros1
        else:
            from rosbags.rosbag2 import Writer
            from rosbags.rosbag2.enums import StoragePlugin
            writer = Writer(Path(tmp) / "b", version=9, storage_plugin=StoragePlugin.MCAP)
            path, serialize = None, store.serialize_cdr
        with writer:
            conn = writer.add_connection("/joint_states", joint_state.__msgtype__, typestore=store)
            for k in range(40):
                extra = {"seq": k} if kind == "ros1" else {}
                stamp = time(sec=10, nanosec=k * 10_000_000)
                msg = joint_state(header=header(stamp=stamp, frame_id="", **extra), name=["joint2", "joint1"],
                                  position=np.array([np.sin(k / 7), np.cos(k / 5)]),
                                  velocity=np.zeros(2), effort=np.array([1.0 + k, 2.0 - k]))
                writer.write(conn, 10**10 + k * 10_000_000, serialize(msg, joint_state.__msgtype__))
        path = path or next((Path(tmp) / "b").glob("*.mcap"))
        return path.read_bytes()


def _read_robot(path):
    import dynid

    dynid.load_robot(path)


def _read_result(path):
    import dynid
    from dynid.identify.result import load_result, result_model

    result = load_result(path, dynid.load_robot("planar2"), force=True)
    result_model(result)


def _read_trajectory(path):
    from dynid.excite.fileio import load_trajectory

    traj = load_trajectory(str(path), 6, "er3a")
    traj.evaluate(np.linspace(0.0, 1.0, 5))


def _read_body(path):
    from dynid.multibody.bodydata import read_body_data

    read_body_data(path)


LIMITS = """all: {dq_max: 2.0, ddq_max: 10.0}
joints:
  joint1: {q_min: -1.0, q_max: 1.0, tau_max: 40.0}
  joint2: {dq_max: 1.5}
"""


def _read_limits(path):
    import dynid
    from dynid.excite.limit_sources import read_limits_file

    read_limits_file(dynid.load_robot("planar2"), path)


def _read_friction(path):
    from dynid.friction.compare import compare_robots
    from dynid.friction.io import read_friction_analysis

    d = read_friction_analysis(path)
    compare_robots([d], [d])


READERS = {
    "csv": (".csv", valid_csv, _read_csv),
    "parquet": (".parquet", valid_parquet, _read_csv),
    "urdf": (".urdf", lambda: URDF.encode(), _read_robot),
    "yaml": (".yaml", lambda: YAML.encode(), _read_robot),
    "result": (".json", None, _read_result),  # base: a result identify wrote (test fixture / bench)
    "trajectory": (".json", valid_trajectory, _read_trajectory),
    "body": (".csv", valid_body_csv, _read_body),
    "friction": (".json", valid_friction, _read_friction),
    "bag": (".bag", valid_bag, _read_csv),  # the joint data readers dispatch ROS logs by suffix
    "mcap": (".mcap", lambda: valid_bag("mcap"), _read_csv),
    "limits": (".yaml", lambda: LIMITS.encode(), _read_limits),  # dynid excite --limits
}


def write_case(directory: Path, reader: str, seed: int, base: bytes) -> tuple[str, Path]:
    suffix = READERS[reader][0]
    mutation, content = case(reader, seed, base)
    path = Path(directory) / f"{reader}-{seed}{suffix}"
    path.write_bytes(content)
    return mutation, path


def cli_command(name: str, path, log, out) -> list[str]:
    """The dynid command line that reads a file of reader ``name`` (``log``: a valid joint data file)."""
    args = {
        "csv": ["identify", "-r", "planar2", "--data", path, "--out", out],
        "parquet": ["identify", "-r", "planar2", "--data", path, "--out", out],
        "bag": ["identify", "-r", "planar2", "--data", path, "--out", out],
        "mcap": ["convert", path, "-r", "planar2", "--out", Path(out).with_suffix(".csv")],
        "urdf": ["robot", "show", path],
        "yaml": ["base-params", path],
        "result": ["predict", "-r", "planar2", "--params", path, "--data", log, "--out", out],
        "trajectory": ["excite", "evaluate", "-r", "er3a", "--trajectory", path],
        "body": ["multibody", "identify", "-r", "planar2", "--body-data", path, "--out", out],
        "friction": ["friction", "compare", "--first", path, "--second", path, "--out", out],
        "limits": ["excite", "evaluate", "-r", "er3a", "--trajectory", "thesis-table-4.1", "--limits", path],
    }[name]
    return [str(a) for a in args]
