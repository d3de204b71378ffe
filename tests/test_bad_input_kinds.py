"""Each row of issue 14's table and each kind of issue 18 section 2 ends in one error line and exit
code 2 (or, for what is almost surely wrong but usable, one warning line), the old output intact."""

from __future__ import annotations

import gzip
import json
import random
import time
import warnings

import numpy as np
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import dynid
from cli_helpers import failing, failing_after_warnings, run_ok, runner
from fuzz_inputs import YAML, _yaml_bomb, _yaml_duplicate_key
from dynid.cli.main import app
from dynid.errors import DataError, DynidWarning, ModelError

T = np.arange(300) * 0.01
HEADER = "t,q1,q2,tau1,tau2\n"


def rows(q1, q2, t=T):
    return "\n".join(f"{x},{a},{b},{1.0 + 0.1 * a},{0.5 * b}" for x, a, b in zip(t, q1, q2)) + "\n"


def two_joint_yaml(alpha="0.0", limits="{q_min: -2.9, q_max: 2.9}"):
    return f"""name: two
convention: mdh
joints:
  - {{type: revolute, a: 0.0, alpha: {alpha}, d: 0.3, theta: 0.0}}
  - {{type: revolute, a: 0.4, alpha: 0.0, d: 0.0, theta: 0.0}}
links:
  - {{mass: 2.0, com: [0.1, 0.0, 0.0], inertia: [0.02, 0.0, 0.0, 0.02, 0.0, 0.01]}}
  - {{mass: 1.0, com: [0.1, 0.0, 0.0], inertia: [0.01, 0.0, 0.0, 0.01, 0.0, 0.005]}}
limits:
  - {limits}
  - {{q_min: -2.9, q_max: 2.9}}
"""


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    d = tmp_path_factory.mktemp("kinds")
    good = HEADER + rows(np.sin(T), np.cos(1.7 * T))  # cos(T): ddq1 = dq2, Izz2 = Fv2 + Ia2 exactly
    (d / "good.csv").write_text(good)
    (d / "csv_only").mkdir()
    (d / "csv_only" / "good.csv").write_text(good)
    (d / "empty.csv").write_bytes(b"")
    (d / "gzip.csv").write_bytes(gzip.compress(good.encode()))
    (d / "binary.csv").write_bytes(bytes(range(256)) * 40)
    (d / "latin1.csv").write_bytes(("t,q1,q2,tau1,tau2,\xe9tage\n" + rows(np.sin(T), np.cos(T))).encode("latin-1"))
    (d / "one.csv").write_text(HEADER + "0.0,0.1,0.2,1.0,0.5\n")
    (d / "dup.csv").write_text("t,q1,q1,q2,tau1,tau2\n" + "\n".join(f"{x},1,0.1,0.2,1,2" for x in T) + "\n")
    (d / "same_t.csv").write_text(HEADER + rows(np.sin(T), np.cos(T), t=np.zeros_like(T)))
    (d / "still.csv").write_text(HEADER + rows(np.full_like(T, 0.3), np.full_like(T, 0.2)))
    (d / "degrees.csv").write_text(HEADER + rows(90 * np.sin(T), 90 * np.cos(1.7 * T)))
    pq.write_table(pacsv.read_csv(d / "good.csv"), d / "good.parquet")
    whole = (d / "good.parquet").read_bytes()
    (d / "truncated.parquet").write_bytes(whole[: len(whole) // 2])
    (d / "text.parquet").write_text(good)
    (d / "alpha90.yaml").write_text(two_joint_yaml(alpha="90"))
    (d / "inverted.yaml").write_text(two_joint_yaml(limits="{q_min: 1.0, q_max: -1.0}"))
    run_ok("identify", "-r", "planar2", "--data", d / "good.csv", "--out", d / "r.json")
    return d


@pytest.mark.parametrize("name, expected", [
    ("empty.csv", "not a readable CSV"),
    ("gzip.csv", "gzip-compressed file, not a CSV joint data file; decompress it or name it gzip.csv.gz"),
    ("binary.csv", "binary"),
    ("latin1.csv", "not UTF-8"),
    ("one.csv", "at least 3 are needed"),
    ("same_t.csv", "at least 3 are needed"),
    ("dup.csv", "column 'q1' appears twice"),
    ("truncated.parquet", "not a readable Parquet"),
    ("text.parquet", "not a readable Parquet"),
    ("csv_only", "is a directory"),  # a directory is read as its Parquet files (issue 17): none here
    ("/dev/zero", "not a regular file"),
])
@pytest.mark.parametrize("command", ["identify", "predict"])
def test_bad_data_files(d, name, expected, command):
    """One line, no NumPy RuntimeWarning before it (one row, equal times: ``failing`` turns any
    Python warning inside the command into a failure), the old output intact."""
    data = d / name if not name.startswith("/") else name
    out = d / ("r.json" if command == "identify" else "p.csv")
    out.write_text("old") if command == "predict" else None
    before = out.read_bytes()
    args = ["--params", d / "r.json"] if command == "predict" else []
    line = failing(command, "-r", "planar2", *args, "--data", data, "--out", out)
    assert expected in line and str(data) in line
    assert out.read_bytes() == before


def test_streaming_and_in_memory_readers_agree_on_bad_files(d):
    """irls reads the whole file, ols streams it: the same kinds of error."""
    for name in ("empty.csv", "gzip.csv", "dup.csv", "truncated.parquet"):
        assert "error:" in failing("identify", "-r", "planar2", "--data", d / name, "--out", d / "x.json",
                                   "--estimator", "irls")


@pytest.mark.parametrize("rows_option", ["-5", "0"])
def test_chunk_rows_must_be_positive(d, rows_option):
    """--chunk-rows 0 hung at 100 % CPU."""
    assert "--chunk-rows" in failing("identify", "-r", "planar2", "--data", d / "good.csv", "--out", d / "x.json",
                                     "--chunk-rows", rows_option)


@pytest.mark.parametrize("content, expected", [
    ("null", "not an object"),
    ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
    ("{\"n\": 2, \"model\": {}, \"preprocessing\": {}, \"base\": {}, \"base_parameters\": [1, 2]}",
     "base_parameters must be objects"),
    ("{\"n\": 1" + "0" * 5000 + "}", "not a JSON result.json"),
    ("\xff\xfe{", "not a UTF-8 text"),
])
def test_bad_result_files(d, tmp_path, content, expected):
    (tmp_path / "bad.json").write_bytes(content.encode("latin-1"))
    line = failing("predict", "-r", "planar2", "--params", tmp_path / "bad.json", "--data", d / "good.csv",
                   "--out", tmp_path / "p.csv")
    assert expected in line


def test_short_arrays_in_a_result_are_named(d, tmp_path):
    result = json.loads((d / "r.json").read_text())
    result["base"]["K"] = [row[:3] for row in result["base"]["K"]]
    (tmp_path / "short.json").write_text(json.dumps(result))
    assert "base.K must be" in failing("validate", "-r", "planar2", "--params", tmp_path / "short.json",
                                       "--data", d / "good.csv")
    result = json.loads((d / "r.json").read_text())
    result["base_parameters"][2]["value"] = None
    (tmp_path / "null.json").write_text(json.dumps(result))
    assert "has value None" in failing("predict", "-r", "planar2", "--params", tmp_path / "null.json",
                                       "--data", d / "good.csv", "--out", tmp_path / "p.csv")


def test_urdf_with_lower_above_upper_is_refused_at_load(tmp_path):
    text = """<robot name="r"><link name="base"/>
      <link name="l1"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
      </inertial></link>
      <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
        <limit lower="1" upper="-1" effort="10" velocity="1"/></joint></robot>"""
    (tmp_path / "r.urdf").write_text(text)
    with pytest.raises(ModelError, match=r"joint 'j1' <limit>: q_min 1 > q_max -1"):
        dynid.load_robot(tmp_path / "r.urdf")
    for command in (["simulate", "-r", tmp_path / "r.urdf", "--out", tmp_path / "s.csv"],
                    ["base-params", tmp_path / "r.urdf"],
                    ["excite", "evaluate", "-r", tmp_path / "r.urdf", "--trajectory", "thesis-table-4.1"]):
        assert "q_min 1 > q_max -1" in failing(*command)


def test_yaml_limits_are_checked_by_the_same_function(d):
    assert "q_min 1 > q_max -1" in failing("robot", "show", d / "inverted.yaml")


@pytest.mark.parametrize("mass", [".inf", "-.inf", ".nan", "1e999"])
def test_non_finite_mass_in_a_robot_file(d, tmp_path, mass):
    """An infinite or NaN mass: one line naming the file, the link and the field, and no NumPy
    RuntimeWarning before it (``failing``)."""
    (tmp_path / "m.yaml").write_text(two_joint_yaml().replace("mass: 2.0", f"mass: {mass}"))
    for command in (["identify", "-r", tmp_path / "m.yaml", "--data", d / "good.csv", "--out", tmp_path / "x.json"],
                    ["base-params", tmp_path / "m.yaml"]):
        line = failing(*command)
        assert str(tmp_path / "m.yaml") in line and "links[0]: field 'mass' must be a finite number" in line
    assert not (tmp_path / "x.json").exists()


def test_zero_position_range(tmp_path):
    """q_min == q_max: the excitation optimizer scales by the range; one error line, no RuntimeWarning
    (after the loader's warning about the joint that cannot move: robot.validation.check_limits)."""
    (tmp_path / "z.yaml").write_text(two_joint_yaml(limits="{q_min: 0.5, q_max: 0.5}"))
    warned, line = failing_after_warnings("excite", "optimize", "-r", tmp_path / "z.yaml", "--out", tmp_path / "t.json",
                                          "--generations", "1", "--polish-iterations", "2", "--harmonics", "2")
    assert "joint 1 (joint1): q_min 0.5 is not below q_max 0.5" in line and not (tmp_path / "t.json").exists()
    assert len(warned) == 1 and "zero range" in warned[0]


class _Pick:
    """A stand-in for the fuzz builders' ``random.Random`` that picks the i-th choice."""

    def __init__(self, i: int):
        self.i = i

    def choice(self, seq):
        return seq[self.i]


def test_yaml_alias_bomb_robot_file_is_refused_quickly(tmp_path):
    """Nested aliases (9 x 9 ... x 9 'lol's, about 1 kB; the campaign's 838-byte file took 40 s and
    3.5 GB): refused from the composed node graph before anything is expanded."""
    for field in range(3):  # name, description, convention
        bomb = _yaml_bomb(_Pick(field), YAML.encode())
        assert len(bomb) < 1100
        (tmp_path / "bomb.yaml").write_bytes(bomb)
        start = time.process_time()
        with pytest.raises(ModelError, match="expands .* beyond"):
            dynid.load_robot(tmp_path / "bomb.yaml")
        assert time.process_time() - start < 1.0
    line = failing("base-params", tmp_path / "bomb.yaml")
    assert line.startswith(f"error: {tmp_path / 'bomb.yaml'}: the document expands")


def test_yaml_duplicate_keys_are_refused_naming_the_key(tmp_path):
    """YAML keeps the last of two equal keys silently; a robot file with one is refused, the key
    and both lines named (top level, and inside a link's flow mapping)."""
    top = YAML.count("\n") + 1  # the appended duplicate's line
    for i, (key, first) in enumerate([("name", 1), ("convention", 2), ("joints", 4)]):
        (tmp_path / "dup.yaml").write_bytes(_yaml_duplicate_key(_Pick(i), YAML.encode()))
        line = failing("base-params", tmp_path / "dup.yaml")
        assert line == (f"error: {tmp_path / 'dup.yaml'}: line {top}: key '{key}' appears twice in one mapping "
                        f"(first at line {first}); keep one (YAML would silently use the last)")
    (tmp_path / "dup.yaml").write_text(YAML.replace("{mass: 1.0,", "{mass: 1.0, mass: 3.0,"))
    line = failing("robot", "show", tmp_path / "dup.yaml")
    assert "line 9: key 'mass' appears twice in one mapping (first at line 9)" in line


@pytest.mark.parametrize("duration", ["inf", "1e12", "nan"])
def test_simulate_duration_must_be_finite(tmp_path, duration):
    assert "--duration" in failing("simulate", "-r", "planar2", "--out", tmp_path / "s.csv", "--duration", duration)


def test_dh_angle_in_degrees_warns(d):
    with pytest.warns(DynidWarning, match=r"joints\[0\]: alpha 90 is beyond 2 pi.*1.570796327"):
        dynid.load_robot(d / "alpha90.yaml")
    result = runner.invoke(app, ["robot", "show", str(d / "alpha90.yaml")])
    assert result.exit_code == 0 and result.output.count("warning: ") == 1


def test_positions_far_outside_the_limits_warn_and_are_stored(d, tmp_path):
    result = runner.invoke(app, ["identify", "-r", "planar2", "--data", str(d / "degrees.csv"),
                                 "--out", str(tmp_path / "r.json"), "--max-condition", "1e12"])
    assert result.exit_code == 0, result.output
    assert "q1 spans [0, 90] rad, far outside the joint limits" in result.output and "--degrees" in result.output
    stored = json.loads((tmp_path / "r.json").read_text())["warnings"]
    assert any("far outside the joint limits" in w for w in stored)
    with warnings.catch_warnings():  # the same log with --degrees is within the limits
        warnings.simplefilter("error", DynidWarning)
        run_ok("identify", "-r", "planar2", "--data", d / "degrees.csv", "--out", tmp_path / "r2.json", "--degrees")


@pytest.mark.parametrize("estimator", ["pc", "ols"])
def test_no_motion_is_an_error_for_every_estimator(d, estimator):
    """pc returned the prior with only a warning."""
    line = failing("identify", "-r", "planar2", "--data", d / "still.csv", "--out", d / "x.json",
                   "--estimator", estimator)
    assert "do not excite" in line and not (d / "x.json").exists()


def test_tiny_torque_limit_in_excite_optimize(tmp_path):
    """The progress display overflowed (math.exp of a penalty) with a torque limit of 1e-300."""
    (tmp_path / "tiny.yaml").write_text(two_joint_yaml(limits="{q_min: -2.9, q_max: 2.9, tau_max: 1.0e-300}"))
    result = runner.invoke(app, ["excite", "optimize", "-r", str(tmp_path / "tiny.yaml"), "--out",
                                 str(tmp_path / "t.json"), "--torque-limits", "--generations", "1",
                                 "--polish-iterations", "2", "--harmonics", "2"])
    assert result.exit_code in (0, 2) and "Traceback" not in result.output, result.output
    assert "OverflowError" not in repr(result.exception)


def test_readers_raise_only_dynid_errors_on_these_files(d):
    from dynid.data.io import load_joint_data

    robot = dynid.load_robot("planar2")
    for name in ("empty.csv", "gzip.csv", "binary.csv", "dup.csv", "truncated.parquet", "text.parquet"):
        with pytest.raises(DataError):
            load_joint_data(d / name, robot)


@pytest.mark.parametrize("option", [["--resample", "-5"], ["--resample", "1e9"], ["--lowpass", "-5"],
                                    ["--min-velocity", "-1"], ["--tol", "2"], ["--lowpass", "nan"]])
def test_option_values_that_cannot_be_right(d, option):
    """--resample 1e9 allocated a grid until the machine ran out of memory; the others tracebacked."""
    line = failing("identify", "-r", "planar2", "--data", d / "good.csv", "--out", d / "x.json", *option)
    assert option[0] in line and not (d / "x.json").exists()


def test_per_joint_option_that_is_not_numbers(tmp_path):
    assert "--tau-noise" in failing("simulate", "-r", "planar2", "--out", tmp_path / "s.csv", "--tau-noise", "abc")
