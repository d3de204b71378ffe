"""What a new user stumbled on (issue 22 item 6): reading a part of a log (--time-range, --rows),
a CSV without a header, joint zero offsets of a motor-side log."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from cli_helpers import failing, run_ok
from realistic_logs import realistic_log

import dynid
from dynid.data.io import write_joint_data

ROBOT = "planar2"


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    d = tmp_path_factory.mktemp("parts")
    robot = dynid.load_robot(ROBOT)
    data, _, _ = realistic_log(robot, 200.0, 40.0, seed=11, encoder_counts=2**16, drop=0.0)
    write_joint_data(d / "log.csv", data)
    return d, data


def test_a_time_range_or_rows_fit_equals_the_fit_of_that_part_cut_out(log, tmp_path):
    """identify --time-range 10:30 and --rows 2001:6001 (t = 10..30 s at 200 Hz, rows numbered
    from 1) give the base parameters of the same rows cut into their own file; predict and
    validate read the same part of their own log."""
    d, data = log
    keep = (data.t >= 10.0) & (data.t <= 30.0)
    write_joint_data(tmp_path / "cut.csv", data.select(keep))
    common = ["-r", ROBOT, "--lowpass", "10", "--rest", "off"]
    values = {}
    for name, part in (("cut", []), ("range", ["--time-range", "10:30"]), ("rows", ["--rows", "2001:6001"])):
        source = tmp_path / "cut.csv" if name == "cut" else d / "log.csv"
        out = run_ok("identify", "-d", source, "-o", tmp_path / f"{name}.json", *common, *part)
        result = json.loads((tmp_path / f"{name}.json").read_text())
        values[name] = np.array([p["value"] for p in result["base_parameters"]])
        if part:
            assert f"4001 rows within {' '.join(part)} read" in out
            assert "time_range" not in json.dumps(result["column_mapping"])  # predict on other logs reads all
    np.testing.assert_allclose(values["range"], values["cut"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(values["rows"], values["cut"], rtol=1e-9, atol=1e-12)
    run_ok("predict", "-r", ROBOT, "-p", tmp_path / "cut.json", "-d", d / "log.csv", "-o", tmp_path / "p.csv",
           "--time-range", "10:30")
    t = np.loadtxt(tmp_path / "p.csv", delimiter=",", skiprows=1)[:, 0]
    assert t[0] == pytest.approx(10.0) and t[-1] == pytest.approx(30.0) and len(t) == 4001
    run_ok("validate", "-r", ROBOT, "-p", tmp_path / "cut.json", "-d", d / "log.csv", "--rows", ":2000", "--json",
           tmp_path / "v.json")
    report = json.loads((tmp_path / "v.json").read_text())[str(d / "log.csv")]
    assert any("2000 rows within --rows :2000 read" in n for n in report["notes"])
    line = failing("identify", "-d", d / "log.csv", "-o", tmp_path / "x.json", *common, "--time-range", "50:60")
    assert "no data row within --time-range 50:60" in line
    assert "FIRST <= LAST" in failing("identify", "-d", d / "log.csv", "-o", tmp_path / "x.json", *common,
                                      "--rows", "9:3")


def test_a_csv_without_a_header_is_refused_with_the_columns_to_give(log, tmp_path):
    """Before: "no time column 't' (found ['-0.0888', '0', ...]); map one with --rename" (the first
    data line read as names). Now the error says the first line holds numbers and gives the
    --columns of a log of t, q and tau of the robot's 2 joints (its 5 columns)."""
    d, data = log
    text = (d / "log.csv").read_text().split("\n", 1)[1]  # the log without its header line
    (tmp_path / "bare.csv").write_text(text)
    line = failing("identify", "-r", ROBOT, "-d", tmp_path / "bare.csv", "-o", tmp_path / "x.json")
    assert "the first line holds numbers" in line and "--columns t,q1,q2,tau1,tau2" in line
    run_ok("identify", "-r", ROBOT, "-d", tmp_path / "bare.csv", "-o", tmp_path / "x.json", "--lowpass", "10",
           "--columns", "t,q1,q2,tau1,tau2")


def test_zero_offsets_of_the_drives_apply_to_a_motor_side_log(tmp_path):
    """A robot YAML whose drives give each motor encoder's zero (``zero_offset``: the joint position
    where the encoder reads 0) and gear ratios: a log of motor angles from those encoders,
    identified with --motor-side, gives the parameters of the joint-side log; robot show prints
    the offsets (the builtin tx40's are 0)."""
    yaml = tmp_path / "arm.yaml"
    yaml.write_text("""name: arm
convention: mdh
joints:
  - {type: revolute, a: 0.0, alpha: 0.0, d: 0.0, theta: 0.0}
  - {type: revolute, a: 0.5, alpha: 0.0, d: 0.0, theta: 0.0}
links:
  - {mass: 2.0, com: [0.25, 0.0, 0.0], inertia: [0.001, 0.0, 0.0, 0.04, 0.0, 0.04]}
  - {mass: 1.5, com: [0.2, 0.0, 0.0], inertia: [0.001, 0.0, 0.0, 0.02, 0.0, 0.02]}
gravity: [0.0, -9.81, 0.0]
drives:
  - {gear_ratio: 50, zero_offset: -1.5707963267948966}
  - {gear_ratio: 30, zero_offset: 0.25}
""")
    robot = dynid.load_robot(str(yaml))
    np.testing.assert_array_equal(robot.zero_offsets, [-np.pi / 2, 0.25])
    def show(name) -> str:  # as a user's wide terminal prints it (an in-process console keeps the width it
        # was made with: another test's narrow one would elide the last column)
        return subprocess.run([sys.executable, "-m", "dynid.cli.main", "robot", "show", str(name)], check=True,
                              capture_output=True, text=True, env=dict(os.environ, COLUMNS="250")).stdout

    out = show(yaml)
    assert "-1.571" in out and "0.25" in out and "zero" in out
    assert "zero" in show("tx40") and np.all(dynid.load_robot("tx40").zero_offsets == 0)
    data, _, _ = realistic_log(robot, 200.0, 30.0, seed=3, encoder_counts=0, drop=0.0, noise=0.0, ripple=0.0)
    write_joint_data(tmp_path / "joint.csv", data)
    n = robot.gear_ratios  # the encoders' angles q_m = N (q - zero), their rates, the motors' torques
    motor = type(data)(data.t, (data.q - robot.zero_offsets) * n, data.dq * n, data.ddq * n, data.tau / n)
    write_joint_data(tmp_path / "motor.csv", motor)
    common = ["-r", yaml, "--lowpass", "0", "--rest", "off"]
    run_ok("identify", "-d", tmp_path / "joint.csv", "-o", tmp_path / "joint.json", *common)
    run_ok("identify", "-d", tmp_path / "motor.csv", "-o", tmp_path / "motor.json", *common, "--motor-side")
    values = [np.array([p["value"] for p in json.loads((tmp_path / f"{k}.json").read_text())["base_parameters"]])
              for k in ("joint", "motor")]
    np.testing.assert_allclose(values[1], values[0], rtol=1e-6, atol=1e-9)
