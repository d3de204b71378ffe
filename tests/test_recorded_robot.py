"""A log recorded on another robot (its Parquet 'dynid' metadata, docs/formats.md) warns when it
is read, by every command that reads joint data (data.provenance); a robot joint whose position
range is zero warns when the description is loaded (robot.validation.check_limits)."""

import warnings

import numpy as np
import pytest

import dynid
from cli_helpers import run_ok
from dynid.data.columns import ColumnMapping
from dynid.data.io import file_metadata, load_joint_data, read_table, table_to_columns, write_columns
from dynid.data.stream import raw_chunks
from dynid.errors import DynidWarning


def recorded(call) -> list[str]:
    """The DynidWarning texts about a log's recorded robot that ``call()`` issues."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught
            if issubclass(w.category, DynidWarning) and "'dynid' metadata" in str(w.message)]


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """3 s logs of kr500 and er3a (both 6R, joints named joint1..joint6) from dynid simulate."""
    d = tmp_path_factory.mktemp("logs")
    for name in ("kr500", "er3a"):
        run_ok("simulate", "-r", name, "--out", d / f"{name}.parquet", "--duration", "3")
    return d


def test_a_log_of_another_robot_warns_in_identify_predict_and_validate(logs, tmp_path):
    kr500 = logs / "kr500.parquet"
    assert file_metadata(kr500)["robot"] == "kr500"
    out = run_ok("identify", "-r", "er3a", "--data", kr500, "--out", tmp_path / "r.json", "--lowpass", "10")
    line = next(x for x in out.splitlines() if "'dynid' metadata" in x)
    assert line.startswith(f"warning: {kr500}: ") and "'kr500'" in line and "'er3a'" in line
    assert "--force" not in line
    for command in (["predict", "-r", "er3a", "--params", tmp_path / "r.json", "--data", kr500,
                     "--out", tmp_path / "p.csv"],
                    ["validate", "-r", "er3a", "--params", tmp_path / "r.json", "--data", kr500]):
        assert line in run_ok(*command).splitlines()
    er3a = logs / "er3a.parquet"  # the robot it was recorded on: no warning
    assert "'dynid' metadata" not in run_ok("identify", "-r", "er3a", "--data", er3a, "--out",
                                            tmp_path / "r.json", "--lowpass", "10")


def test_both_readers_warn_and_csv_logs_carry_nothing(logs, tmp_path):
    er3a, kr500 = dynid.load_robot("er3a"), logs / "kr500.parquet"
    whole = recorded(lambda: load_joint_data(kr500, er3a))
    streamed = recorded(lambda: list(raw_chunks(kr500, er3a)))
    assert len(whole) == 1 and whole == streamed
    assert recorded(lambda: load_joint_data(kr500, dynid.load_robot("kr500"))) == []
    table, _ = read_table(kr500)  # the same samples as CSV: no metadata, nothing to compare
    write_columns(tmp_path / "kr500.csv", table_to_columns(table, ColumnMapping(), "kr500"))
    assert recorded(lambda: load_joint_data(tmp_path / "kr500.csv", er3a)) == []
    assert recorded(lambda: list(raw_chunks(tmp_path / "kr500.csv", er3a))) == []


def _planar2_log(path, metadata):
    t = np.arange(200) * 0.01
    q = np.column_stack([np.sin(t), np.cos(t)])
    write_columns(path, {"t": t, "q1": q[:, 0], "q2": q[:, 1], "tau1": q[:, 0], "tau2": q[:, 1]}, metadata)


def test_joint_names_are_the_stronger_evidence(tmp_path):
    """Same robot name, joints in another order: the columns would swap joints; other joint names:
    another robot; robot name differing in case or blanks only: the same robot."""
    robot = dynid.load_robot("planar2")
    a, b = robot.joint_names
    cases = {"swapped": {"robot": robot.name, "joints": [b, a]},
             "other": {"robot": robot.name, "joints": ["shoulder", "elbow", "wrist"]},
             "same": {"robot": f" {robot.name.upper()} ", "joints": [a, b]}}
    for name, meta in cases.items():
        _planar2_log(tmp_path / f"{name}.parquet", meta)
    swapped = recorded(lambda: load_joint_data(tmp_path / "swapped.parquet", robot))
    assert len(swapped) == 1 and f"[{b}, {a}]" in swapped[0] and "swapped" in swapped[0]
    other = recorded(lambda: load_joint_data(tmp_path / "other.parquet", robot))
    assert len(other) == 1 and "3 joints [shoulder, elbow, wrist]" in other[0] and f"[{a}, {b}]" in other[0]
    assert recorded(lambda: load_joint_data(tmp_path / "same.parquet", robot)) == []
    # --rename chooses which log column is which joint: the recorded order no longer applies
    renamed = ColumnMapping(rename=(("q1", "q2"), ("q2", "q1"), ("tau1", "tau2"), ("tau2", "tau1")))
    assert recorded(lambda: load_joint_data(tmp_path / "swapped.parquet", robot, renamed)) == []


YAML = """
name: two
convention: mdh
joints:
  - {type: revolute, a: 0.0, alpha: 0.0, d: 0.3, theta: 0.0, name: shoulder}
  - {type: prismatic, a: 0.1, alpha: -1.5707963267948966, d: 0.0, theta: 0.0, name: slide}
links:
  - {mass: 2.0, com: [0.0, 0.0, -0.1], inertia: [0.02, 0.0, 0.0, 0.02, 0.0, 0.01]}
  - {mass: 1.0, com: [0.0, 0.0, 0.05], inertia: [0.01, 0.0, 0.0, 0.01, 0.0, 0.005]}
limits:
  - {q_min: -2.9, q_max: 2.9}
  - {q_min: 0.25, q_max: 0.5}
"""

URDF = """<robot name="r"><link name="base"/>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
  </inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="{lo}" upper="{hi}" effort="10" velocity="1"/></joint></robot>"""


def zero_range(path) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dynid.load_robot(path)
    return [str(w.message) for w in caught if "zero range" in str(w.message)]


def test_a_joint_that_cannot_move_warns_at_load(tmp_path):
    (tmp_path / "ok.yaml").write_text(YAML)
    assert zero_range(tmp_path / "ok.yaml") == []
    (tmp_path / "stuck.yaml").write_text(YAML.replace("q_min: 0.25, q_max: 0.5", "q_min: 0.25, q_max: 0.25"))
    (message,) = zero_range(tmp_path / "stuck.yaml")
    assert message.startswith(f"{tmp_path / 'stuck.yaml'}: joint 'slide' limits[1]: position limits [0.25, 0.25] m")
    (tmp_path / "stuck.urdf").write_text(URDF.format(lo=0.3, hi=0.3))
    (message,) = zero_range(tmp_path / "stuck.urdf")
    assert message.startswith(f"{tmp_path / 'stuck.urdf'}: joint 'j1' <limit>: position limits [0.3, 0.3] rad")
    (tmp_path / "free.urdf").write_text(URDF.format(lo=0, hi=0))  # URDF's way of writing no limit
    assert zero_range(tmp_path / "free.urdf") == []
    # the commands that took such a robot silently now say so (excite optimize refuses it)
    assert "zero range" in run_ok("base-params", tmp_path / "stuck.yaml")
