"""The body data file of docs/formats.md section 5 and the `dynid multibody` commands."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import dynid
from dynid.cli.main import app
from dynid.errors import DataError
from dynid.multibody.bodydata import columns, read_body_data, round_significant
from dynid.multibody.experiment import experiment_body_data, write_experiment_body_data

runner = CliRunner()


def test_header_follows_the_contract_and_round_trip_is_exact(tmp_path):
    robot = dynid.load_robot("kr500")
    path = tmp_path / "body.csv"
    summary = write_experiment_body_data(robot, "seed-kr500", path)
    assert summary["samples"] == 101 and summary["bodies"] == 6
    header = path.read_text().splitlines()[0].split(",")
    assert header == columns(6)
    assert header[:8] == ["t", "b1_x", "b1_y", "b1_z", "b1_qw", "b1_qx", "b1_qy", "b1_qz"]
    assert header[-9:] == ["j6_px", "j6_py", "j6_pz", "j6_fx", "j6_fy", "j6_fz", "j6_mx", "j6_my", "j6_mz"]
    back, original = read_body_data(path), experiment_body_data(robot)
    np.testing.assert_array_equal(back.t, original.t)
    for field in ("r", "a", "w", "dw", "joint_point", "force", "moment"):
        np.testing.assert_array_equal(getattr(back, field), getattr(original, field))
    assert list(tmp_path.iterdir()) == [path]  # written atomically: no temporary file left


def test_seven_significant_digits():
    values = np.array([1932889.1439554, -0.000123456789, 0.0, 9.80665])
    rounded = round_significant(values, 7)
    np.testing.assert_array_equal(rounded, [1932889.0, -0.0001234568, 0.0, 9.80665])


def test_bad_files_raise_data_errors_naming_file_and_column(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_body_data(tmp_path / "missing.csv")
    path = tmp_path / "body.csv"
    write_experiment_body_data(dynid.load_robot("kr500"), "seed-kr500", path)
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    drop = header.index("j3_my")
    cut = "\n".join(",".join(v for c, v in enumerate(line.split(",")) if c != drop) for line in lines)
    bad = tmp_path / "cut.csv"
    bad.write_text(cut + "\n")
    with pytest.raises(DataError, match=r"cut\.csv.*'j3_my'"):
        read_body_data(bad)
    joint_file = tmp_path / "joints.csv"
    joint_file.write_text("t,q1,tau1\n0,0,0\n")
    with pytest.raises(DataError, match="joints.csv"):
        read_body_data(joint_file)


def test_identify_command_writes_the_contract_json(tmp_path):
    path, out = tmp_path / "body.csv", tmp_path / "result.json"
    write_experiment_body_data(dynid.load_robot("kr500"), "seed-kr500", path, significant_digits=7)
    result = runner.invoke(app, ["multibody", "identify", "--robot", "kr500", "--body-data", str(path),
                                 "--out", str(out), "--times", "0.3,0.6,0.9,1.2,1.5",
                                 "--coordinates", "cardan"])
    assert result.exit_code == 0, result.output
    assert "Lagrange multipliers" in result.output
    bodies = json.loads(out.read_text())["bodies"]
    assert [b["body"] for b in bodies] == [1, 2, 3, 4, 5, 6]
    keys = {"body", "mass_x", "mass_y", "mass_z", "J11", "J22", "J33", "notes"}
    assert all(keys <= set(b) for b in bodies)
    assert bodies[0]["mass_x"] is None and bodies[0]["J22"] is None and len(bodies[0]["notes"]) == 4
    assert abs(bodies[2]["mass_y"] - 1186.1661) < 0.01  # seed 000 Table 2, B3


def test_commands_fail_with_one_line_on_bad_input(tmp_path):
    result = runner.invoke(app, ["multibody", "identify", "--robot", "kr500", "--body-data",
                                 str(tmp_path / "nope.csv"), "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 2 and "nope.csv" in result.output
    graph = runner.invoke(app, ["multibody", "graph", "kr500-rail"])
    assert graph.exit_code == 0 and "incidence matrix" in graph.output


@pytest.mark.parametrize("name", ["kr500", "kr500-rail"])
def test_multipliers_at_1_5_s_are_the_joint_forces_of_the_file(name):
    """Seed 000 section 3.2: the multipliers of eq. 111 are the ideal constraint forces and
    moments; with the drive efforts they give back the joint wrenches recorded in the file."""
    from dynid.multibody.coordinates import angular_form
    from dynid.multibody.multipliers import multipliers_at

    robot = dynid.load_robot(name)
    data = experiment_body_data(robot)
    for form in ("cardan", "quaternion"):
        m = multipliers_at(robot, data, angular_form(form), 1.5)
        assert m.t == pytest.approx(1.5)
        assert np.max(np.abs(m.force - m.measured_force)) < 1e-9 * np.max(np.abs(m.measured_force))
        assert np.max(np.abs(m.moment - m.measured_moment)) < 1e-9 * np.max(np.abs(m.measured_moment))
        revolute = np.array([j.type == "revolute" for j in robot.joints])
        # rows 1-3 of a revolute joint (eq. 66) carry exactly its force on the outside body
        np.testing.assert_allclose(m.lam[revolute, :3], m.force[revolute], rtol=0,
                                   atol=1e-12 * np.max(np.abs(m.force)))
