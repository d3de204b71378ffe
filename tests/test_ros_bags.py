"""ROS logs (issue 10 section 3): ROS 1 bags, ROS 2 bags (sqlite3 and MCAP storage) and plain
MCAP files, written here with rosbags' own writers, read back by name-matched joints."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from dynid.cli.main import app
from dynid.simulate import random_multisine, simulate_joint_data

from cli_helpers import read_columns, run_ok, runner

FS = 200.0
DROPPED = 57  # this message's effort array is empty


@pytest.fixture(scope="module")
def log():
    robot = dynid.load_robot("planar2")
    t = np.arange(0.0, 6.0, 1.0 / FS)
    q, dq, ddq = random_multisine(robot, seed=3).sample(t)
    data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, seed=3)
    return data


def write_bag(path, kind: str, data, receive_delay: float = 0.0, bare: int = 0):
    """JointState messages of ``data``: joint order shuffled per message, an extra 'gripper'
    joint, message DROPPED without effort, the first ``bare`` ones with positions only; header
    stamps start at 1.7e9 s (epoch-like)."""
    from rosbags.typesys import Stores, get_typestore

    rng = np.random.default_rng(0)
    store = get_typestore(Stores.ROS1_NOETIC if kind == "ros1" else Stores.ROS2_HUMBLE)
    joint_state, header, time = (store.types[k] for k in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header",
                                                         "builtin_interfaces/msg/Time"))
    if kind == "ros1":
        from rosbags.rosbag1 import Writer
        writer, serialize = Writer(path), store.serialize_ros1
    else:
        from rosbags.rosbag2 import Writer
        from rosbags.rosbag2.enums import StoragePlugin
        plugin = StoragePlugin.SQLITE3 if kind == "sqlite3" else StoragePlugin.MCAP
        writer, serialize = Writer(path, version=9, storage_plugin=plugin), store.serialize_cdr
    start = 1_700_000_000 * 10**9
    with writer:
        conn = writer.add_connection("/joint_states", joint_state.__msgtype__, typestore=store)
        other = writer.add_connection("/tf_dummy", "std_msgs/msg/Header", typestore=store)
        for k in range(len(data)):
            ns = start + int(round(data.t[k] * 1e9))
            stamp = time(sec=ns // 10**9, nanosec=ns % 10**9)
            fields = {"stamp": stamp, "frame_id": ""} | ({"seq": k} if kind == "ros1" else {})
            order = rng.permutation(3)  # joint1, joint2, gripper in a random order
            names = np.array(["joint1", "joint2", "gripper"])[order]
            pos = np.append(data.q[k], 0.01)[order]
            vel = np.append(data.dq[k], 0.0)[order]
            eff = np.append(data.tau[k], 5.0)[order] if k != DROPPED else np.array([], dtype=float)
            if k < bare:
                vel = eff = np.array([], dtype=float)
            message = joint_state(header=header(**fields), name=list(names), position=pos, velocity=vel, effort=eff)
            received = ns + int(receive_delay * 1e9 * (1 + k % 3))
            writer.write(conn, received, serialize(message, joint_state.__msgtype__))
            if k % 100 == 0:
                writer.write(other, received, serialize(header(**fields), "std_msgs/msg/Header"))
    return path


KINDS = {"ros1": "run.bag", "sqlite3": "run_sqlite", "mcap": "run_mcap"}


@pytest.mark.parametrize("kind", list(KINDS))
def test_bag_round_trip_by_joint_name(tmp_path, log, kind):
    bag = write_bag(tmp_path / KINDS[kind], kind, log)
    sources = [bag] if kind != "mcap" else [bag, next(bag.glob("*.mcap"))]  # the bag, and its plain MCAP file
    for source in sources:
        out = run_ok("convert", source, "--robot", "planar2", "--out", tmp_path / "log.csv")
        assert "1 message(s)" in out and "gripper" in out
        cols = read_columns(tmp_path / "log.csv")
        keep = np.arange(len(log)) != DROPPED  # dropped, never zero-filled
        np.testing.assert_allclose(cols["t"], log.t[keep] - log.t[0], atol=1e-9)
        for j in (1, 2):
            np.testing.assert_array_equal(cols[f"q{j}"], log.q[keep, j - 1])
            np.testing.assert_array_equal(cols[f"dq{j}"], log.dq[keep, j - 1])
            np.testing.assert_array_equal(cols[f"tau{j}"], log.tau[keep, j - 1])
    if kind == "mcap":  # identify reads the bag itself: the same numbers as from the converted file
        run_ok("convert", bag, "-r", "planar2", "--out", tmp_path / "log.parquet")
        run_ok("identify", "-r", "planar2", "--data", bag, "--out", tmp_path / "a.json")
        run_ok("identify", "-r", "planar2", "--data", tmp_path / "log.parquet", "--out", tmp_path / "b.json")
        a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
        # the same numbers up to rounding (a bag's streaming windows start after its first steps: data.timing)
        pa_, pb = (np.array([p["value"] for p in r["base_parameters"]]) for r in (a, b))
        np.testing.assert_allclose(pa_, pb, rtol=0, atol=1e-12 * np.abs(pb).max())
        assert any("message" in n and "dropped" in n for n in a["data_notes"])
        run_ok("validate", "-r", "planar2", "--params", tmp_path / "a.json", "--data", bag)


def test_receive_time_and_bag_errors(tmp_path, log):
    bag = write_bag(tmp_path / "late.bag", "ros1", log.select(slice(0, 400)), receive_delay=0.001)
    run_ok("convert", bag, "-r", "planar2", "--stamp", "receive", "--out", tmp_path / "r.csv")
    t = read_columns(tmp_path / "r.csv")["t"]
    k = np.flatnonzero(np.arange(400) != DROPPED)
    np.testing.assert_allclose(t, log.t[k] + 0.001 * (1 + k % 3) - 0.001, atol=1e-9)
    # a topic the bag does not have: the topics it has, nothing written
    r = runner.invoke(app, ["convert", str(bag), "--topic", "/joints", "-r", "planar2", "--out", str(tmp_path / "x.csv")])
    assert r.exit_code == 2 and "/joint_states" in r.output and "/tf_dummy" in r.output
    assert not (tmp_path / "x.csv").exists()
    # a robot whose joints the messages do not name: which are missing
    r = runner.invoke(app, ["identify", "-r", "er3a", "--data", str(bag), "--out", str(tmp_path / "x.json")])
    assert r.exit_code == 2 and "joint3" in r.output and not (tmp_path / "x.json").exists()
    r = runner.invoke(app, ["convert", str(bag), "--topic", "/tf_dummy", "--out", str(tmp_path / "x.csv")])
    assert r.exit_code == 2 and "JointState" in r.output
    (tmp_path / "broken.bag").write_bytes(b"#ROSBAG V2.0\n" + bytes(range(256)))
    r = runner.invoke(app, ["identify", "-r", "planar2", "--data", str(tmp_path / "broken.bag"),
                            "--out", str(tmp_path / "x.json")])
    assert r.exit_code == 2 and "broken.bag" in r.output and "Traceback" not in r.output


def test_first_messages_incomplete_rest_complete(tmp_path, log):
    """A publisher whose first messages carry positions only (drives not up yet): velocity and
    effort are still read from the rest; the incomplete messages are dropped with a note."""
    bare = 3
    bag = write_bag(tmp_path / "start.bag", "ros1", log.select(slice(0, 400)), bare=bare)
    out = run_ok("convert", bag, "-r", "planar2", "--out", tmp_path / "s.csv")
    assert f"{bare + 1} message(s)" in out and "message 1 " in out
    cols = read_columns(tmp_path / "s.csv")
    k = np.flatnonzero((np.arange(400) >= bare) & (np.arange(400) != DROPPED))
    np.testing.assert_allclose(cols["t"], log.t[k] - log.t[0], atol=1e-9)  # time still from the first message
    for j in (1, 2):
        np.testing.assert_array_equal(cols[f"dq{j}"], log.dq[k, j - 1])
        np.testing.assert_array_equal(cols[f"tau{j}"], log.tau[k, j - 1])


def _values(path) -> np.ndarray:
    return np.array([p["value"] for p in json.loads(path.read_text())["base_parameters"]])


def test_bag_effort_as_currents_becomes_k_times_i(tmp_path, log):
    """--current-gain K: a bag whose effort holds motor currents i = tau / K gives tau = K i, as a CSV
    log's i1..in columns do (the same identification as from the torque bag)."""
    from dataclasses import replace

    from dynid.data.columns import ColumnMapping
    from dynid.data.io import load_joint_data

    gains = np.array([3.0, 5.0])
    torques = write_bag(tmp_path / "tau.bag", "ros1", log)
    currents = write_bag(tmp_path / "i.bag", "ros1", replace(log, tau=log.tau / gains))
    robot = dynid.load_robot("planar2")
    data = load_joint_data(currents, robot, ColumnMapping(current_gain="3,5"))
    keep = np.arange(len(log)) != DROPPED
    np.testing.assert_allclose(data.tau, log.tau[keep], rtol=1e-15, atol=1e-15 * np.abs(log.tau).max())
    # the streaming path (identify): the same parameters as from the torque bag
    run_ok("identify", "-r", "planar2", "--data", torques, "--lowpass", "20", "--out", tmp_path / "tau.json")
    run_ok("identify", "-r", "planar2", "--data", currents, "--current-gain", "3,5", "--lowpass", "20",
           "--out", tmp_path / "i.json")
    a, b = _values(tmp_path / "i.json"), _values(tmp_path / "tau.json")
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
    assert json.loads((tmp_path / "i.json").read_text())["column_mapping"]["current_gain"] == "3,5"


def test_irregular_bag_is_resampled_as_csv_logs_are(tmp_path, log):
    """Header stamps with jitter (+-20 % of the step) and four messages missing: the bag is resampled
    as the same samples in a CSV log are (identical identification), and the model identified on it
    stays within 1 % (of the largest base parameter) of the one identified on the regular bag."""
    robot = dynid.load_robot("planar2")
    rng = np.random.default_rng(1)
    t = log.t + np.r_[0.0, rng.uniform(-0.2, 0.2, len(log) - 1)] / FS
    t = t[np.isin(np.arange(len(log)), [300, 301, 700, 950], invert=True)]
    t = np.round(t * 1e9) * 1e-9  # the bag's nanosecond stamps, so that the CSV holds the same times
    q, dq, ddq = random_multisine(robot, seed=3).sample(t)
    jittered, _, _ = simulate_joint_data(robot, t, q, dq, ddq, seed=3)
    bag = write_bag(tmp_path / "jitter.bag", "ros1", jittered)
    keep = np.arange(len(t)) != DROPPED  # the message write_bag sends without effort
    from dynid.data.io import write_columns
    write_columns(tmp_path / "jitter.csv", {"t": t[keep]} | {f"{c}{j + 1}": a[keep, j] for c, a in
                                                             (("q", q), ("dq", dq), ("tau", jittered.tau))
                                                             for j in range(2)})
    regular = write_bag(tmp_path / "regular.bag", "ros1", log)
    for name, source in (("bag", bag), ("csv", tmp_path / "jitter.csv"), ("regular", regular)):
        out = run_ok("identify", "-r", "planar2", "--data", source, "--lowpass", "20", "--out", tmp_path / f"{name}.json")
        assert "resampled to a uniform" in out or name == "regular"
    a, b, c = (_values(tmp_path / f"{n}.json") for n in ("bag", "csv", "regular"))
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
    np.testing.assert_allclose(a, c, rtol=0, atol=1e-2 * np.abs(c).max())


def test_predict_reads_a_bag_as_its_parquet_conversion(tmp_path, log):
    bag = write_bag(tmp_path / "run.bag", "ros1", log)
    run_ok("convert", bag, "-r", "planar2", "--out", tmp_path / "run.parquet")
    run_ok("identify", "-r", "planar2", "--data", tmp_path / "run.parquet", "--lowpass", "20",
           "--out", tmp_path / "r.json")
    for source, out in ((bag, "bag.csv"), (tmp_path / "run.parquet", "parquet.csv")):
        run_ok("predict", "-r", "planar2", "-p", tmp_path / "r.json", "--data", source, "--out", tmp_path / out)
    a, b = read_columns(tmp_path / "bag.csv"), read_columns(tmp_path / "parquet.csv")
    assert a.keys() == b.keys() and len(a["t"]) > 0.9 * len(log)
    np.testing.assert_array_equal(a["t"], b["t"])
    for j in (1, 2):
        np.testing.assert_allclose(a[f"tau{j}"], b[f"tau{j}"], rtol=0, atol=1e-10 * np.abs(b[f"tau{j}"]).max())


def test_fields_decided_on_the_first_messages_naming_the_joints():
    """Messages that never name the robot's joints (another arm's, PROBE and more of them) decide
    nothing: the first window of messages that name them decides velocity/effort, so a first
    such message without velocities does not remove the column the others carry."""
    from types import SimpleNamespace

    from dynid.data.bags import PROBE, _Rows

    def message(names, velocity=True):
        return SimpleNamespace(name=list(names), position=[1.0, 2.0][:len(names)],
                               velocity=[3.0, 4.0][:len(names)] if velocity else [], effort=[])

    others = [message(["a1", "a2"]) for _ in range(PROBE + 5)]
    ours = [message(["j2", "j1"], velocity=False)] + [message(["j2", "j1"]) for _ in range(10)]
    rows = _Rows(["j1", "j2"], "test.bag", "/joint_states", "tau", "drop")
    stream = rows.decided((k, 0.01 * k, m) for k, m in enumerate(others + ours, start=1))
    kept = [r for r in (rows.row(k, t, m) for k, t, m in stream) if r is not None]
    assert rows.fields == (True, False)
    assert rows.names() == ["q1", "q2", "dq1", "dq2"]
    assert len(kept) == 10 and rows.dropped == PROBE + 6
    assert np.array_equal(np.concatenate(kept[0]), [2.0, 1.0, 4.0, 3.0])  # matched by name, not by place
