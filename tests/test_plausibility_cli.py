"""Issue 18 section 3 through the command line: each case the campaign found (it exited 0 with
numbers) now ends in one error line and exit code 2 (what cannot be right) or in the numbers and
one warning line naming the likely cause (what is almost surely wrong). The kinds behind these
cases are fuzzed in tests/test_plausibility_fuzz.py."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.csv as pacsv
import pytest

from cli_helpers import failing, read_columns, run_ok, runner
from dynid.cli.main import app
from plausibility_inputs import write_columns


def warned(*args) -> str:
    """Output of a command that succeeds with at least one warning line."""
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    assert "warning: " in result.output, result.output
    return result.output


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    d = tmp_path_factory.mktemp("plausibility-cli")
    run_ok("simulate", "-r", "planar2", "--out", d / "log.csv", "--duration", "8", "--tau-noise", "0.02")
    run_ok("simulate", "-r", "planar2", "--out", d / "val.csv", "--duration", "8", "--tau-noise", "0.02",
           "--seed", "4")
    run_ok("identify", "-r", "planar2", "--data", d / "log.csv", "--out", d / "r.json")
    return d


def edited(d, name, change) -> str:
    cols = {k: v.astype(float) for k, v in read_columns(d / "log.csv").items()}
    write_columns(d / name, change(cols))
    return d / name


def test_one_position_of_1e300_is_refused(d):
    def corrupt(cols):
        cols["q2"][300] = 1e300
        return cols

    line = failing("identify", "-r", "planar2", "--data", edited(d, "huge.csv", corrupt), "--out", d / "x.json")
    assert "q2 = 1e+300" in line and "cannot be a joint position" in line and not (d / "x.json").exists()


def test_a_gap_filled_by_interpolation_warns(d):
    def fill(cols):  # a 30 s gap after t = 4 s filled with linearly interpolated samples at the log's rate
        t, k, count = cols["t"], 400, 3000
        dt = t[1] - t[0]
        out = {}
        for key, v in cols.items():
            lin = v[k - 1] + (v[k] - v[k - 1]) * np.arange(1, count + 1) / (count + 1)
            out[key] = np.concatenate([v[:k], v[k - 1] + dt * np.arange(1, count + 1) if key == "t" else lin,
                                       v[k:] + (dt * count if key == "t" else 0)])
        return out

    out = warned("identify", "-r", "planar2", "--data", edited(d, "filled.csv", fill), "--out", d / "x.json")
    assert "a gap filled by interpolation" in out


@pytest.mark.parametrize("factor, unit", [(1e3, "ms"), (1e6, "us")])
def test_time_in_ms_or_us_without_the_option_warns(d, factor, unit):
    def scale(cols):
        cols["t"] = cols["t"] * factor
        return cols

    out = warned("identify", "-r", "planar2", "--data", edited(d, f"t_{unit}.csv", scale), "--out", d / "x.json")
    assert "--time-unit ms" in out
    with_option = runner.invoke(app, ["identify", "-r", "planar2", "--data", str(d / f"t_{unit}.csv"), "--out",
                                      str(d / "x.json"), "--time-unit", unit])
    assert with_option.exit_code == 0 and "--time-unit ms" not in with_option.output


def test_a_joint_the_robot_does_not_have_warns(d):
    def extra(cols):
        cols["q3"], cols["tau3"] = cols["q1"], cols["tau1"]
        return cols

    out = warned("predict", "-r", "planar2", "--params", d / "r.json", "--data", edited(d, "q3.csv", extra),
                 "--out", d / "p.csv")
    assert "['q3', 'tau3'] belong to joint(s) [3]" in out


def test_swapped_or_negated_torques_warn_in_validate(d):
    v = {k: x.astype(float) for k, x in read_columns(d / "val.csv").items()}
    v["tau1"], v["tau2"] = v["tau2"], v["tau1"]  # planar2: joint 1 carries both links' gravity
    write_columns(d / "swapped.csv", v)
    out = warned("validate", "-r", "planar2", "--params", d / "r.json", "--data", d / "swapped.csv",
                 "--json", d / "v.json")
    assert "torque columns swapped" in out
    assert json.loads((d / "v.json").read_text())[str(d / "swapped.csv")]["warnings"]
    v["tau1"], v["tau2"] = -v["tau2"], -v["tau1"]
    write_columns(d / "negated.csv", v)
    out = warned("validate", "-r", "planar2", "--params", d / "r.json", "--data", d / "negated.csv")
    assert "--negate tau" in out
    clean = runner.invoke(app, ["validate", "-r", "planar2", "--params", str(d / "r.json"), "--data", str(d / "val.csv")])
    assert clean.exit_code == 0 and "warning" not in clean.output, clean.output


def test_result_parameters_are_matched_by_name(d):
    """Two entries exchanged gave 14 N m errors: the values now follow their names."""
    result = json.loads((d / "r.json").read_text())
    result["base_parameters"][0], result["base_parameters"][3] = result["base_parameters"][3], result["base_parameters"][0]
    (d / "swapped.json").write_text(json.dumps(result))
    run_ok("predict", "-r", "planar2", "--params", d / "r.json", "--data", d / "val.csv", "--out", d / "p0.csv")
    run_ok("predict", "-r", "planar2", "--params", d / "swapped.json", "--data", d / "val.csv", "--out", d / "p1.csv")
    assert (d / "p0.csv").read_bytes() == (d / "p1.csv").read_bytes()


@pytest.mark.parametrize("value", ["1e308", "-1e13", "NaN", "null"])
@pytest.mark.parametrize("command", ["predict", "report --result", "report --pc-result"])
def test_absurd_result_parameters_are_refused(d, value, command):
    """predict wrote thousands of NaN/inf torques; report dropped a section and embedded a raw
    TypeError: both refuse the file, naming it and the parameter (result_schema.check_result)."""
    text = (d / "r.json").read_text()
    first = json.loads(text)["base_parameters"][0]
    (d / "bad.json").write_text(text.replace(f'"value": {first["value"]!r}', f'"value": {value}', 1))
    out = d / ("absurd.csv" if command == "predict" else "absurd.html")
    if command == "predict":
        line = failing("predict", "-r", "planar2", "--params", d / "bad.json", "--data", d / "val.csv", "--out", out)
    else:
        line = failing("report", command.split()[1], d / "bad.json", "--data", d / "val.csv", "--out", out)
    assert line.startswith(f"error: {d / 'bad.json'}: base parameter '{first['name']}' has value ")
    assert "expected a finite number" in line and not out.exists()


def test_report_refuses_an_input_of_another_layout(d):
    """A section used to vanish and the page to embed the exception's text."""
    (d / "mb.json").write_text(json.dumps({"robot": "kr500", "bodies": [{"body": 1, "J11": "abc"}]}))
    result = runner.invoke(app, ["report", "--result", str(d / "r.json"), "--multibody", str(d / "mb.json"),
                                 "--out", str(d / "rep.html")])
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert result.exit_code == 2 and len(errors) == 1 and "report section 'multibody'" in errors[0], result.output
    assert not (d / "rep.html").exists()


def test_body_data_of_another_robot_is_refused(d):
    """multibody identify -r er3a on KR500 body data returned J11 = -1986."""
    run_ok("simulate", "-r", "kr500", "--experiment", "seed-kr500", "--body-data", d / "body.csv")
    line = failing("multibody", "identify", "-r", "er3a", "--body-data", d / "body.csv", "--out", d / "mb.json")
    assert str(d / "body.csv") in line and "body data of another robot" in line


URDF = """<robot name="r"><link name="base"/>
  <link name="l1"><inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
  </inertial></link>{extra}
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="{lo}" upper="{hi}" effort="10" velocity="{vel}"/></joint></robot>"""


@pytest.mark.parametrize("extra, lo, hi, vel, expected", [
    ('\n  <link name="l1"/>', -2, 2, 1, "two <link> elements are named 'l1'"),
    ("", -2, 2, -1, "dq_max -1 must be positive"),
])
def test_robot_files_that_cannot_be_right(tmp_path, extra, lo, hi, vel, expected):
    (tmp_path / "r.urdf").write_text(URDF.format(extra=extra, lo=lo, hi=hi, vel=vel))
    assert expected in failing("robot", "show", tmp_path / "r.urdf")


def test_robot_files_almost_surely_wrong_warn(tmp_path):
    (tmp_path / "r.urdf").write_text(URDF.format(extra="", lo=-170, hi=170, vel=1))
    assert "if they are degrees write [-2.96706, 2.96706]" in warned("robot", "show", tmp_path / "r.urdf")
    (tmp_path / "t.yaml").write_text("name: t\njoints:\n  - {type: revolute, a: 0.0, alpha: 0.0, d: 0.3}\n")
    assert "no 'convention' field" in warned("robot", "show", tmp_path / "t.yaml")


@pytest.mark.parametrize("command, option, value", [
    ("simulate", "--jitter", "5"), ("simulate", "--jitter", "-0.1"), ("simulate", "--tau-noise", "0.1,-1"),
    ("simulate", "--encoder-counts", "-100"), ("simulate", "--coulomb", "nan"), ("simulate", "--seed", "-1"),
    ("identify", "--lowpass", "-5"), ("identify", "--current-gain", "0,1"), ("identify", "--drive", "stepper"),
    ("identify", "--input", "torque"), ("identify", "--still-range", "-1"), ("identify", "--max-condition", "-1"),
    ("identify", "--prior-bound", "-1"),
])
def test_option_values_that_cannot_be_right(d, command, option, value):
    args = ["simulate", "-r", "planar2", "--out", d / "s.csv"] if command == "simulate" else \
        ["identify", "-r", "planar2", "--data", d / "log.csv", "--out", d / "x.json"]
    extra = ["--drive", "dc-motor"] if option == "--input" else []
    assert option in failing(*args, option, value, *extra)


def test_jitter_below_one_step_keeps_time_increasing(tmp_path):
    """Stamps move by at most jitter/2 steps each way, so steps stay longer than (1 - jitter) dt."""
    run_ok("simulate", "-r", "planar2", "--out", tmp_path / "s.csv", "--duration", "2", "--jitter", "0.99")
    t = pacsv.read_csv(tmp_path / "s.csv").column("t").to_numpy()
    assert np.all(np.diff(t) > 0.01 * 0.01 - 1e-15)


@pytest.mark.parametrize("factor, expected", [(1e3, "a unit (mN m"), (-1.0, "of opposite sign")])
def test_identify_compares_the_torques_with_the_description(d, factor, expected):
    """The fit itself cannot tell (least squares scales every parameter); the description can."""
    def scale(cols):
        cols["tau1"], cols["tau2"] = cols["tau1"] * factor, cols["tau2"] * factor
        return cols

    out = warned("identify", "-r", "planar2", "--data", edited(d, "scaled.csv", scale), "--out", d / "x.json")
    assert expected in out and "those of the robot description" in out
    assert json.loads((d / "x.json").read_text())["fit"]["description_scale"] == pytest.approx(factor, rel=0.05)


def test_a_torque_column_of_one_number_warns(d):
    def placeholder(cols):
        cols["tau2"] = np.zeros_like(cols["tau2"])
        return cols

    out = warned("identify", "-r", "planar2", "--data", edited(d, "zero.csv", placeholder), "--out", d / "x.json")
    assert "the torque of joint(s) [2] is the same number in every sample" in out


def test_one_joint_of_the_other_sign_is_named(tmp_path):
    """The description predicts most of a gravity-loaded joint's torque: one flipped joint is seen."""
    run_ok("simulate", "-r", "er3a", "--out", tmp_path / "log.csv", "--duration", "8", "--tau-noise", "0.05")
    cols = {k: v.astype(float) for k, v in read_columns(tmp_path / "log.csv").items()}
    cols["tau2"] = -cols["tau2"]
    write_columns(tmp_path / "flipped.csv", cols)
    out = warned("identify", "-r", "er3a", "--data", tmp_path / "flipped.csv", "--out", tmp_path / "x.json")
    assert "joint(s) [2] has the opposite sign" in out and "--negate tau2)" in out and "(--negate tau)" not in out


def test_a_velocity_column_in_deg_per_s_warns(d):
    def degrees_per_second(cols):
        cols["dq1"] = np.degrees(cols["dq1"])
        return cols

    out = warned("identify", "-r", "planar2", "--data", edited(d, "dq_deg.csv", degrees_per_second),
                 "--out", d / "x.json")
    assert "the logged dq1 is 57.3 x the velocity its positions show" in out


def test_robot_lengths_in_millimetres_warn(tmp_path):
    (tmp_path / "mm.yaml").write_text("name: mm\nconvention: mdh\ngravity: [0, 0, -9810]\njoints:\n"
                                      "  - {type: revolute, a: 0.0, alpha: 0.0, d: 300.0}\n")
    out = warned("robot", "show", tmp_path / "mm.yaml")
    assert "millimetres?" in out and "mm/s^2" in out


def test_a_fast_joint_within_its_speed_limit_does_not_jump():
    """tx40's wrist moves 0.1-0.27 rad per 10 ms step within its speed limit (27.5 rad/s): motion,
    not a jump, even when the joint stands still most of the log (a tiny median step); a step
    beyond 1.5 x dq_max x dt (a corrupt sample) still warns."""
    import dynid
    from dynid.data.columns import JointData
    from dynid.data.plausibility import LogChecks

    robot = dynid.load_robot("tx40")
    t = np.arange(0.0, 20.0, 0.01)
    speed = 0.9 * robot.limit_array("dq_max")[5]
    moving = (t % 4.0) > 3.5  # still 7/8 of the time, then at 90 % of its speed limit
    q = np.zeros((t.size, robot.n))
    q[:, 5] = np.cumsum(np.where(moving, speed, 0.0) * 0.01)
    for spike, expected in ((0.0, False), (2.0, True)):
        data = q.copy()
        data[1000, 5] += spike
        checks = LogChecks(robot, "log.csv")
        checks.update(JointData(t=t, q=data))
        assert any("q6 jumps" in m for m in checks.messages()) == expected, checks.messages()
