"""Logs in pieces (issue 17): several files in one fit, segments at gaps, time resets and a
'segment' column; nothing is filtered, differentiated or interpolated across a boundary."""

from __future__ import annotations

import json

import numpy as np
import pytest
from identify_helpers import random_physical_parameters

import dynid
from dynid.cli.main import app
from dynid.data.io import load_joint_data, write_joint_data
from dynid.data.preprocess import Preprocessing, prepare
from dynid.data.segments import concat
from dynid.data.stream import prepared_chunks
from dynid.errors import DataError
from dynid.identify import ModelOptions, base_parameters
from dynid.identify.estimators import OrdinaryLeastSquares
from dynid.identify.pipeline import accumulate_file, accumulate_sources
from dynid.simulate import random_multisine, simulate_joint_data

from cli_helpers import failing, read_columns, run_ok, runner

FS = 200.0
OPTIONS = ModelOptions()


def _robot():
    r = dynid.load_robot("planar2")
    return r.with_parameters(random_physical_parameters(r, 7))


def _piece(robot, seed, duration, t0=0.0):
    """Noise-free log of one multi-sine with exact dq, ddq; time starting at t0."""
    t = np.arange(0.0, duration, 1.0 / FS)
    q, dq, ddq = random_multisine(robot, seed=seed).sample(t)
    data, _, theta = simulate_joint_data(robot, t, q, dq, ddq, OPTIONS, seed=seed)
    data.t = data.t + t0
    return data, theta


def _pieces(robot):
    a, theta = _piece(robot, 1, 12.0)
    b, _ = _piece(robot, 2, 9.0)
    return a, b, theta


def _shifted(data, t0):
    out = data.select(slice(None))
    out.t = data.t - data.t[0] + t0
    return out


def test_gap_and_reset_split_the_log_and_the_fit_recovers_every_base_parameter(tmp_path):
    """A 1 s gap, then a clock restart: exact states recover the base parameters to 1e-6.
    Interpolating across the gap (the old behaviour) would put motion that never happened
    into the fit."""
    robot = _robot()
    a, b, theta = _pieces(robot)
    c, _ = _piece(robot, 3, 6.0)
    log = concat([a, _shifted(b, a.t[-1] + 1.0), _shifted(c, 0.0)])
    path = tmp_path / "log.csv"
    write_joint_data(path, log)
    base = base_parameters(robot, OPTIONS)
    with pytest.raises(DataError, match="--segments auto"):
        accumulate_sources(robot, [path], OPTIONS, base, prep=Preprocessing(lowpass_hz=0))
    prep = Preprocessing(lowpass_hz=0, segments="auto")
    acc = accumulate_sources(robot, [path], OPTIONS, base, prep=prep, chunk_rows=1500, per_segment=True)
    fitted = OrdinaryLeastSquares(names=base.names).fit_normal_equations(acc.ne)
    beta = base.K @ theta
    np.testing.assert_allclose(fitted.coef_, beta, rtol=1e-6, atol=1e-9 * np.abs(beta).max())
    segments = acc.sources[0].segments
    assert [s.segment for s in segments] == [0, 1, 2]
    # no prepared sample lies inside the gap, and each segment keeps its own time span
    assert segments[0].t_end <= a.t[-1] + 1e-9 and segments[1].t_start >= a.t[-1] + 1.0 - 1e-9
    # the segments' own normal equations add up to the whole
    np.testing.assert_allclose(sum(s.ne.A for s in segments), acc.ne.A, rtol=1e-12, atol=1e-9)
    assert sum(s.samples for s in segments) == acc.samples == acc.sources[0].samples
    assert any("3 segments" in n and "1 time reset" in n and "1 gap" in n and "5 x" in n for n in acc.notes)


def test_streamed_segments_equal_the_file_read_whole_at_any_chunk_size(tmp_path):
    robot = _robot()
    a, b, _ = _pieces(robot)
    log = concat([a, _shifted(b, a.t[-1] + 0.5)])
    log.dq = log.ddq = None
    path = tmp_path / "log.parquet"
    write_joint_data(path, log)
    prep = Preprocessing(lowpass_hz=15.0)
    whole = prepare(load_joint_data(path, robot, prep=prep), prep)
    for rows in (len(a), 997):  # a chunk edge exactly at the boundary, and anywhere
        parts = [p for p in prepared_chunks(path, robot, prep=prep, chunk_rows=rows) if len(p)]
        np.testing.assert_array_equal(np.concatenate([p.t for p in parts]), whole.t)
        np.testing.assert_allclose(np.concatenate([p.ddq for p in parts]), whole.ddq, atol=1e-8)
        assert all(np.all(p.segment == p.segment[0]) for p in parts)
    # differentiated on its own: the second segment's first derivative equals that of b alone
    b.dq = b.ddq = None
    alone = prepare(_shifted(b, a.t[-1] + 0.5), prep)
    second = whole.select(whole.segment == 1)
    np.testing.assert_allclose(second.dq, alone.dq, atol=1e-12)


def test_small_dropouts_are_resampled_and_the_threshold_is_stated(tmp_path):
    robot = _robot()
    a, _, _ = _pieces(robot)
    keep = np.ones(len(a), dtype=bool)
    keep[[500, 501, 502, 1500]] = False  # 3 missing samples, then 1: steps of 4 and 2 x the median
    path = tmp_path / "drop.csv"
    write_joint_data(path, a.select(keep))
    prep = Preprocessing()
    ready = prepare(load_joint_data(path, robot, prep=prep), prep)
    assert ready.segment is None or np.all(ready.segment == 0)
    assert any("resampled" in n and "5 x" in n for n in ready.notes)
    np.testing.assert_allclose(np.diff(ready.t), 1.0 / FS, rtol=1e-9)
    # a 10-sample hole is a gap: two segments, nothing interpolated inside it
    keep[800:810] = False
    write_joint_data(path, a.select(keep))
    ready = prepare(load_joint_data(path, robot, prep=prep), prep)
    assert set(np.unique(ready.segment)) == {0, 1}
    assert not np.any((ready.t > a.t[799] + 1e-9) & (ready.t < a.t[810] - 1e-9))


def test_segment_column_and_short_segments(tmp_path):
    robot = _robot()
    a, b, _ = _pieces(robot)
    short = _shifted(a.select(slice(0, 10)), 0.0)  # 0.05 s: less than twice the filter's edge (2 x 6 samples)
    parts = [a, _shifted(b, 0.0), short]
    for k, p in enumerate(parts):
        p.segment = np.full(len(p), f"run{k}", dtype=object)
    path = tmp_path / "labelled.parquet"
    write_joint_data(path, concat(parts))
    prep = Preprocessing()
    ready = prepare(load_joint_data(path, robot, prep=prep), prep)  # time restarts at a label change: fine
    assert set(np.unique(ready.segment)) == {0, 1}
    assert any("segment 2" in n and "dropped" in n for n in ready.notes)
    with pytest.raises(DataError, match="no segment is long enough"):
        list(prepared_chunks(_only_short(tmp_path, short), robot, prep=Preprocessing(segments="auto")))


def _only_short(tmp_path, short):
    path = tmp_path / "short.csv"
    write_joint_data(path, concat([short, _shifted(short, 0.0)]))
    return path


def _write_pair(tmp_path, robot):
    a, b, theta = _pieces(robot)
    noise = np.random.default_rng(5)
    for d in (a, b):
        d.tau = d.tau + noise.normal(scale=0.05, size=d.tau.shape)
        d.dq = d.ddq = None
    (tmp_path / "logs").mkdir()
    write_joint_data(tmp_path / "logs" / "a.parquet", a)
    write_joint_data(tmp_path / "logs" / "b.parquet", b)
    return a, b


def test_several_files_are_one_fit_with_each_file_preprocessed_alone(tmp_path):
    """Two files == one file whose 'segment' column separates them (same sums of normal
    equations), whichever way the files are named: repeated --data, a glob, a directory."""
    robot = dynid.load_robot("planar2")
    a, b = _write_pair(tmp_path, robot)
    spec = "planar2"
    logs = tmp_path / "logs"
    out = run_ok("identify", "-r", spec, "--data", logs / "a.parquet", "--data", logs / "b.parquet",
                 "--out", tmp_path / "two.json")
    assert "a.parquet" in out and "b.parquet" in out
    two = json.loads((tmp_path / "two.json").read_text())
    assert [s["path"] for s in two["sources"]] == [str(logs / "a.parquet"), str(logs / "b.parquet")]
    assert sum(s["samples"] for s in two["sources"]) == two["fit"]["samples"]
    for form in (str(logs / "*.parquet"), str(logs)):
        run_ok("identify", "-r", spec, "--data", form, "--out", tmp_path / "form.json")
        again = json.loads((tmp_path / "form.json").read_text())
        assert [p["value"] for p in again["base_parameters"]] == [p["value"] for p in two["base_parameters"]]
    # the same data as one file with a segment column
    a.segment, b.segment = np.zeros(len(a), dtype=np.int64), np.ones(len(b), dtype=np.int64)
    write_joint_data(tmp_path / "joined.csv", concat([a, _shifted(b, 0.0)]))
    run_ok("identify", "-r", spec, "--data", tmp_path / "joined.csv", "--out", tmp_path / "one.json")
    one = json.loads((tmp_path / "one.json").read_text())
    np.testing.assert_allclose([p["value"] for p in one["base_parameters"]],
                               [p["value"] for p in two["base_parameters"]], rtol=1e-7)
    assert one["fit"]["samples"] == two["fit"]["samples"]
    # validate: per file and overall; the overall mean square is the sample-weighted mean of the files'
    run_ok("validate", "-r", spec, "--params", tmp_path / "two.json", "--data", str(logs / "*.parquet"),
           "--json", tmp_path / "val.json")
    val = json.loads((tmp_path / "val.json").read_text())
    files = [val[str(logs / "a.parquet")], val[str(logs / "b.parquet")]]
    assert all(f["kind"] == "self" for f in files)
    weights = np.array([f["samples"] for f in files], dtype=float)
    pooled = np.sqrt(sum(w * np.square(f["rmsd"]) for w, f in zip(weights, files)) / weights.sum())
    np.testing.assert_allclose(val["overall"]["rmsd"], pooled, rtol=1e-9)
    # predict: the rows of each source are that file's own prediction
    run_ok("predict", "-r", spec, "--params", tmp_path / "two.json", "--data", logs / "a.parquet",
           "--data", logs / "b.parquet", "--out", tmp_path / "pred.csv")
    run_ok("predict", "-r", spec, "--params", tmp_path / "two.json", "--data", logs / "b.parquet",
           "--out", tmp_path / "pred_b.csv")
    both, alone = read_columns(tmp_path / "pred.csv"), read_columns(tmp_path / "pred_b.csv")
    rows = both["source"] == str(logs / "b.parquet")
    np.testing.assert_allclose(both["tau2"][rows], alone["tau2"], rtol=1e-12)


def test_bad_sources_are_one_line_errors(tmp_path):
    _write_pair(tmp_path, dynid.load_robot("planar2"))
    logs = tmp_path / "logs"
    r = runner.invoke(app, ["identify", "-r", "planar2", "--data", str(logs / "*.csv"), "--out", str(tmp_path / "r.json")])
    assert r.exit_code == 2 and "matches no file" in r.output and "*.csv" in r.output
    er3a = dynid.load_robot("er3a")
    d, _ = _piece(er3a, 1, 2.0)
    write_joint_data(logs / "c.parquet", d)
    r = runner.invoke(app, ["identify", "-r", "planar2", "--data", str(logs), "--out", str(tmp_path / "r.json")])
    assert r.exit_code == 2 and "different joint counts" in r.output and "c.parquet" in r.output
    assert not (tmp_path / "r.json").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    r = runner.invoke(app, ["identify", "-r", "planar2", "--data", str(empty), "--out", str(tmp_path / "r.json")])
    assert r.exit_code == 2 and "Parquet" in r.output


def test_files_of_two_robots_with_the_same_joint_count_are_refused(tmp_path):
    """er3a and kr500 are both 6R: only the robot 'dynid simulate' records in the Parquet file
    (docs/formats.md, 'dynid' metadata) tells their logs apart; one fit of both is refused."""
    for name in ("er3a", "kr500"):
        run_ok("simulate", "-r", name, "--out", tmp_path / f"{name}.parquet", "--duration", "1")
    for first, second in (("er3a", "kr500"), ("kr500", "er3a")):
        line = failing("identify", "-r", "er3a", "--data", tmp_path / f"{first}.parquet",
                       "--data", tmp_path / f"{second}.parquet", "--out", tmp_path / "r.json")
        assert line == (f"error: files of different robots in one fit: {tmp_path / f'{first}.parquet'} was "
                        f"recorded on '{first}', {tmp_path / f'{second}.parquet'} on '{second}'")
    assert not (tmp_path / "r.json").exists()
    run_ok("simulate", "-r", "er3a", "--out", tmp_path / "again.parquet", "--duration", "1", "--seed", "3")
    assert "wrote" in run_ok("identify", "-r", "er3a", "--data", tmp_path / "er3a.parquet", "--data",
                             tmp_path / "again.parquet", "--out", tmp_path / "r.json", "--lowpass", "10",
                             "--max-condition", "1e12")


def test_several_files_through_the_python_api(tmp_path):
    """accumulate_sources on two files = accumulate_file of each, merged (the sums of normal
    equations), and its fit = the fit of one log holding both as segments (1e-10)."""
    robot = dynid.load_robot("planar2")
    a, b = _write_pair(tmp_path, robot)
    logs = tmp_path / "logs"
    base, prep = base_parameters(robot, OPTIONS), Preprocessing(lowpass_hz=15.0)
    both = accumulate_sources(robot, [logs / "a.parquet", logs / "b.parquet"], OPTIONS, base, prep=prep)
    merged = accumulate_file(robot, logs / "a.parquet", OPTIONS, base, prep=prep).merge(
        accumulate_file(robot, logs / "b.parquet", OPTIONS, base, prep=prep))
    for name in ("A", "B", "C", "rows"):
        np.testing.assert_allclose(getattr(both.ne, name), getattr(merged.ne, name), rtol=1e-12, atol=0)
    assert both.samples == merged.samples == sum(s.samples for s in both.sources)
    assert [s.path for s in both.sources] == [str(logs / "a.parquet"), str(logs / "b.parquet")]
    a.segment, b.segment = np.zeros(len(a), dtype=np.int64), np.ones(len(b), dtype=np.int64)
    write_joint_data(tmp_path / "joined.parquet", concat([a, _shifted(b, 0.0)]))
    joined = accumulate_file(robot, tmp_path / "joined.parquet", OPTIONS, base, prep=prep)
    assert joined.samples == both.samples
    fit = lambda acc: OrdinaryLeastSquares(names=base.names).fit_normal_equations(acc.ne).coef_  # noqa: E731
    beta, reference = fit(both), fit(joined)
    np.testing.assert_allclose(beta, reference, rtol=1e-10, atol=1e-10 * np.abs(reference).max())
