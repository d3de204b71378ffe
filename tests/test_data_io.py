"""Reading real-looking logs: each defect is handled or rejected with the row named."""

from __future__ import annotations

import numpy as np
import pytest

import dynid
from dynid.data.columns import ColumnMapping
from dynid.data.io import load_joint_data, write_columns
from dynid.data.stream import raw_chunks
from dynid.errors import DataError

ROBOT = dynid.load_robot("planar2")


def _csv(tmp_path, text, name="log.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


HEADER = "t,q1,q2,tau1,tau2\n"


def test_truncated_last_line_is_dropped_with_a_note(tmp_path):
    path = _csv(tmp_path, HEADER + "0,0,0,1,2\n0.01,0.1,0.2,1,2\n0.02,0.2,0.3,1,2\n0.03,0.3")
    data = load_joint_data(path, ROBOT)
    assert len(data) == 3 and any("truncated" in n for n in data.notes)


def test_short_line_in_the_middle_is_rejected_naming_the_row(tmp_path):
    path = _csv(tmp_path, HEADER + "0,0,0,1,2\n0.01,0.1\n0.02,0.2,0.3,1,2\n0.03,0.3,0.1,1,1\n")
    with pytest.raises(DataError, match="row 2"):
        load_joint_data(path, ROBOT)


def test_nan_rows_are_dropped_or_rejected(tmp_path):
    path = _csv(tmp_path, HEADER + "0,0,0,1,2\n0.01,nan,0,1,2\n0.02,0.2,,1,2\n0.03,0.3,0.1,1,1\n0.04,0.3,0.1,1,1\n")
    data = load_joint_data(path, ROBOT)
    np.testing.assert_allclose(data.t, [0, 0.03, 0.04])
    assert any("NaN" in n and "row 2" in n for n in data.notes)
    with pytest.raises(DataError, match="row 2"):
        load_joint_data(path, ROBOT, nan="reject")


def test_duplicated_time_stamps_are_dropped_and_backwards_time_rejected(tmp_path):
    path = _csv(tmp_path, HEADER + "0,0,0,1,2\n0.01,0.1,0,1,2\n0.01,0.1,0,1,2\n0.02,0.3,0.1,1,1\n")
    data = load_joint_data(path, ROBOT)
    np.testing.assert_allclose(data.t, [0, 0.01, 0.02])
    assert any("duplicated" in n and "row 3" in n for n in data.notes)
    path = _csv(tmp_path, HEADER + "0,0,0,1,2\n0.02,0.1,0,1,2\n0.01,0.1,0,1,2\n", "back.csv")
    with pytest.raises(DataError, match="row 3"):
        load_joint_data(path, ROBOT)


def test_headerless_degrees_ms_and_motor_side_are_mapped_to_si_joint_side(tmp_path):
    robot = dynid.load_robot("er3a")
    n = robot.n
    rows = [[k * 10.0] + [90.0 * (j + 1) for j in range(n)] + [2.0] * n for k in range(5)]
    path = _csv(tmp_path, "\n".join(",".join(str(v) for v in r) for r in rows) + "\n")
    names = ",".join(["t"] + [f"q{j}" for j in range(1, n + 1)] + [f"tau{j}" for j in range(1, n + 1)])
    data = load_joint_data(path, robot, ColumnMapping.from_options(names=names, time_unit="ms", degrees=True,
                                                                    motor_side=True))
    np.testing.assert_allclose(data.t, [0, 0.01, 0.02, 0.03, 0.04])
    np.testing.assert_allclose(data.q[0], np.radians(90.0 * np.arange(1, n + 1)) / robot.gear_ratios)
    np.testing.assert_allclose(data.tau[0], 2.0 * robot.gear_ratios)


def test_currents_become_torques_with_the_given_gains(tmp_path):
    path = _csv(tmp_path, "t,q1,q2,i1,i2\n0,0,0,1,2\n0.01,0,0,1,2\n0.02,0,0,1,2\n")
    with pytest.raises(DataError, match="--current-gain"):
        load_joint_data(path, ROBOT)
    data = load_joint_data(path, ROBOT, ColumnMapping(current_gain="3,5"))
    np.testing.assert_allclose(data.tau[0], [3.0, 10.0])


def test_parquet_and_csv_hold_the_same_numbers_and_chunks_reassemble_the_file(tmp_path):
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.009, 0.011, 1000))
    # positions within +-1 rad: steps beyond pi would be read as angles wrapped within one turn (data/angles.py)
    cols = {"t": t, "q1": rng.uniform(-1.0, 1.0, size=1000), "q2": rng.uniform(-1.0, 1.0, size=1000),
            "tau1": rng.normal(size=1000), "tau2": rng.normal(size=1000)}
    for name in ("a.csv", "a.parquet"):
        write_columns(tmp_path / name, cols)
        data = load_joint_data(tmp_path / name, ROBOT)
        np.testing.assert_array_equal(data.q[:, 1], cols["q2"])  # CSV text round-trips exactly
        chunks = list(raw_chunks(tmp_path / name, ROBOT, chunk_rows=128))
        assert len(chunks) >= 2
        np.testing.assert_array_equal(np.concatenate([c.t for c in chunks]), t)


def test_streaming_reader_reports_the_same_defects(tmp_path):
    rows = [f"{k * 0.01},{k},{k},1,2" for k in range(400)]
    rows[150] = "1.5,0.1"  # a short line in the middle
    path = _csv(tmp_path, HEADER + "\n".join(rows) + "\n")
    with pytest.raises(DataError, match="row 151"):
        list(raw_chunks(path, ROBOT, chunk_rows=100))
    rows[150] = f"{150 * 0.01},150,150,1,2"
    path = _csv(tmp_path, HEADER + "\n".join(rows) + "\n3.99,1", "tail.csv")
    chunks = list(raw_chunks(path, ROBOT, chunk_rows=100))
    assert sum(len(c) for c in chunks) == 400
    assert any("truncated" in n for c in chunks for n in c.notes)
