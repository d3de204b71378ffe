"""Fleet identification on Dask: the same numbers as the in-process path, and a run that survives
lost workers, corrupt files and reruns (a small LocalCluster shared by the module)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import run_ok, runner
from fleet_helpers import copy_fleet, small_fleet, start_cluster

from dynid.cli.main import app
from dynid.data.preprocess import Preprocessing
from dynid.fleet.config import load_config
from dynid.fleet.mapreduce import identify_fleet, identify_in_process
from dynid.fleet.plan import Settings, make_plan
from dynid.fleet.results import read_results
from dynid.identify import ModelOptions


@pytest.fixture(scope="module")
def client():
    cluster, client = start_cluster(2)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet") / "data"
    small_fleet(root)
    return root


def _plan(root, by=("robot", "date"), previous=None, std="correlated"):
    settings = Settings(ModelOptions(), Preprocessing(), std=std)
    return make_plan(str(root), load_config(str(root / "fleet.yaml")), by, settings, previous, by if previous else None)


def _params(row):
    return dict(zip(row["parameter_names"], zip(row["parameter_values"], row["parameter_std"])))


def test_dask_path_equals_dynid_identify_on_each_file(fleet, tmp_path):
    """One group per file: the LocalCluster started by the command gives what 'dynid identify' gives."""
    out = tmp_path / "res.parquet"
    text = run_ok("fleet", "identify", fleet, "--by", "robot,date,file", "--out", out, "--workers", "1")
    assert "LocalCluster of 1 worker" in text and "12 identified" in text
    rows, by, _ = read_results(out)
    assert by == ("robot", "date", "file") and len(rows) == 12
    for row in rows[:2]:
        path = fleet / f"robot={row['robot']}" / f"date={row['date']}" / f"{row['file']}.parquet"
        # the fleet's preprocessing is the fixed default min(20 Hz, fs/10) = 20 Hz at 200 Hz, not identify's auto
        run_ok("identify", "-r", "er3a", "--data", path, "--out", tmp_path / "one.json", "--lowpass", "20")
        one = json.loads((tmp_path / "one.json").read_text())
        got = _params(row)
        scale = max(abs(p["value"]) for p in one["base_parameters"])
        assert one["uncertainty"]["covariance"] == "correlated"  # the fleet's std too (docs/fleet.md)
        assert json.loads(row["result_json"])["uncertainty"]["covariance"] == "correlated"
        for p in one["base_parameters"]:
            assert abs(got[p["name"]][0] - p["value"]) <= 1e-10 * scale, p["name"]
            assert abs(got[p["name"]][1] - p["std"]) <= 1e-10 * p["std"], p["name"]
        # RMSD from the sums, C - 2 B beta + beta A beta, loses digits to cancellation (C / RSS ~ 1e5
        # on joint 2 here) and the worker sums a file per block of time (its validation folds)
        np.testing.assert_allclose(row["rmsd"], one["fit"]["rmsd"], rtol=1e-9)
        assert json.loads(row["result_json"])["base"] == one["base"]


def test_group_equals_dynid_identify_on_its_files(fleet, client, tmp_path):
    """Tree-reduced normal equations of a day's two files = 'dynid identify --data f0 --data f1'
    (issue 17's summed normal equations of several recordings)."""
    summary = identify_fleet(client, _plan(fleet), tmp_path / "res.parquet", say=lambda _: None)
    assert summary.computed == 6 and summary.failed == 0
    row = next(r for r in summary.rows if r["robot"] == "r001" and r["date"] == "2026-01-06")
    folder = fleet / "robot=r001" / "date=2026-01-06"
    run_ok("identify", "-r", "er3a", "--data", folder / "part-0.parquet", "--data", folder / "part-1.parquet",
           "--out", tmp_path / "two.json", "--lowpass", "20")  # the fleet's fixed default cutoff at 200 Hz
    two = json.loads((tmp_path / "two.json").read_text())
    values = [p["value"] for p in two["base_parameters"]]
    scale = max(abs(v) for v in values)
    np.testing.assert_allclose(row["parameter_values"], values, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(row["parameter_std"], [p["std"] for p in two["base_parameters"]], rtol=1e-10)
    assert two["uncertainty"]["covariance"] == "correlated"  # the residuals' correlation, measured on both files
    white = next(r for r in identify_in_process(_plan(fleet, std="white"), threads=1)  # --std white: no second read
                 if r["robot"] == "r001" and r["date"] == "2026-01-06")
    np.testing.assert_allclose(white["parameter_values"], values, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(white["parameter_std"], two["uncertainty"]["white_std"], rtol=1e-10)
    assert row["samples"] == two["fit"]["samples"]
    assert row["t_start"] == 0.0 and abs(row["t_end"] - (20.0 - 1 / 200)) < 1e-9


def test_rerun_skips_unchanged_groups(fleet, client, tmp_path):
    root = copy_fleet(fleet, tmp_path / "data")
    out = tmp_path / "res.parquet"
    first = identify_fleet(client, _plan(root), out, say=lambda _: None)
    rows, by, _ = read_results(out)
    again = identify_fleet(client, _plan(root, previous=rows), out, say=lambda _: None)
    assert (again.computed, again.skipped) == (0, 6)
    assert read_results(out)[0] == rows
    target = root / "robot=r002" / "date=2026-01-05" / "part-1.parquet"
    table = pq.read_table(target)
    pq.write_table(table.slice(0, table.num_rows - 500), target)  # a rewritten file: new size and time
    third = identify_fleet(client, _plan(root, previous=rows), out, say=lambda _: None)
    assert (third.computed, third.skipped) == (1, 5)
    changed = {(r["robot"], r["date"]): r for r in read_results(out)[0]}
    assert changed[("r002", "2026-01-05")]["samples"] < {(r["robot"], r["date"]): r for r in first.rows}[
        ("r002", "2026-01-05")]["samples"]


def test_corrupt_file_is_reported_and_the_run_goes_on(fleet, client, tmp_path):
    root = copy_fleet(fleet, tmp_path / "data")
    truncated = root / "robot=r000" / "date=2026-01-06" / "part-0.parquet"
    truncated.write_bytes(truncated.read_bytes()[:5000])
    backwards = root / "robot=r001" / "date=2026-01-05" / "part-1.parquet"
    table = pq.read_table(backwards)
    t = table.column("t").to_numpy().copy()
    t[100] = t[99] - 1.0
    pq.write_table(table.set_column(0, "t", pa.array(t)), backwards)
    # one task for all groups: the bad files sit among good ones in the same task
    summary = identify_fleet(client, _plan(root), tmp_path / "res.parquet", say=lambda _: None, task_rows=10**9)
    assert summary.tasks == 3  # footers, the identification, the model sent to the workers
    errors = dict(summary.file_errors)
    assert set(errors) == {"robot=r000/date=2026-01-06/part-0.parquet", "robot=r001/date=2026-01-05/part-1.parquet"}
    assert "Parquet" in errors["robot=r000/date=2026-01-06/part-0.parquet"]
    assert "time goes backwards" in errors["robot=r001/date=2026-01-05/part-1.parquet"]
    rows = {(r["robot"], r["date"]): r for r in summary.rows}
    assert all(r["status"] == "ok" for r in rows.values())  # each group still has one good file
    assert rows[("r000", "2026-01-06")]["files"] == ["robot=r000/date=2026-01-06/part-1.parquet"]
    assert rows[("r000", "2026-01-06")]["file_errors"][0]["path"].endswith("part-0.parquet")


def test_bad_input_one_line_exit_2_nothing_written(fleet, client, tmp_path):
    out = tmp_path / "res.parquet"
    root = copy_fleet(fleet, tmp_path / "data")
    (root / "fleet.yaml").write_text("robots:\n  r000: er3a\n  r002: er3a\n")
    res = runner.invoke(app, ["fleet", "identify", str(root), "--out", str(out)])
    assert res.exit_code == 2 and "robot=r001" in res.output and "no model" in res.output
    assert len(res.output.strip().splitlines()) == 1 and not out.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "fleet.yaml").write_text("robots:\n  r000: er3a\n")
    res = runner.invoke(app, ["fleet", "identify", str(empty), "--out", str(out)])
    assert res.exit_code == 2 and "no Parquet files" in res.output and not out.exists()
    res = runner.invoke(app, ["fleet", "identify", str(fleet), "--out", str(out), "--std", "pooled"])
    assert res.exit_code == 2 and "--std pooled" in res.output and not out.exists()
    t0 = time.perf_counter()
    res = runner.invoke(app, ["fleet", "identify", str(fleet), "--out", str(out), "--scheduler", "tcp://127.0.0.1:9",
                              "--connect-timeout", "1"])
    assert res.exit_code == 2 and "no Dask scheduler answered within 1 s" in res.output
    assert time.perf_counter() - t0 < 10 and not out.exists()
    # a file with 7 joints among the 6-joint files of robot r000
    (root / "fleet.yaml").write_text("robots:\n  r000: er3a\n  r001: er3a\n  r002: er3a\n")
    other = root / "robot=r000" / "date=2026-01-07"
    other.mkdir()
    table = pq.read_table(root / "robot=r000" / "date=2026-01-05" / "part-0.parquet")
    pq.write_table(table.append_column("q7", table.column("q6")), other / "part-0.parquet")
    out.write_bytes(b"earlier results")
    address = client.scheduler.address
    res = runner.invoke(app, ["fleet", "identify", str(root), "--out", str(out), "--scheduler", address, "--force"])
    assert res.exit_code == 2 and "different joint counts" in res.output and "robot=r000" in res.output
    assert out.read_bytes() == b"earlier results"


def test_tasks_cover_every_readable_file_once_within_the_row_limit():
    """task_units: whole groups packed (one model per task), a group above the limit split into
    batches of its files in order; every readable file in exactly one task; no task above the
    limit unless it is one file; a file whose footer failed in none."""
    from dynid.fleet.dataset import FleetFile
    from dynid.fleet.plan import Group, Pack, Plan, Split, task_units
    from dynid.fleet.tasks import FileInfo

    sizes = {("r0", "d0"): [300, 300], ("r0", "d1"): [900, 200, 200, 700], ("r1", "d0"): [50],
             ("r1", "d1"): [100, 100, 100], ("r2", "d0"): [2000], ("r2", "d1"): [10, 10]}
    groups, infos = [], {}
    for (robot, day), rows in sizes.items():
        files = [FleetFile(f"/x/{robot}/{day}/{k}", f"{robot}/{day}/{k}", (("robot", robot), ("date", day)), 1, "")
                 for k in range(len(rows))]
        infos.update({f.relpath: FileInfo(f.relpath, 6, r) for f, r in zip(files, rows)})
        groups.append(Group({"robot": robot, "date": day}, files, "er3a" if robot != "r2" else "other", robot + day))
    infos["r1/d1/1"] = FileInfo("r1/d1/1", error="broken footer")
    plan = Plan("/x", ("robot", "date"), {}, groups, [])
    units = task_units(plan, infos, workers=2, task_rows=1000)
    seen = []
    for unit in units:
        if isinstance(unit, Pack):
            assert len({g.model_id for g in unit.groups}) == 1 and all(g.model_id == unit.model_id for g in unit.groups)
            files = [f for g in unit.groups for f in g.files if infos[f.relpath].error is None]
        else:
            assert isinstance(unit, Split) and len(unit.batches) > 1
            assert [f for b in unit.batches for f in b] == [f for f in unit.group.files]
            for batch in unit.batches:
                assert sum(infos[f.relpath].rows for f in batch) <= 1000 or len(batch) == 1
            files = [f for b in unit.batches for f in b]
        if isinstance(unit, Pack):
            assert sum(infos[f.relpath].rows for f in files) <= 1000 or len(unit.groups) == 1
        seen += [f.relpath for f in files]
    readable = [f.relpath for g in groups for f in g.files if infos[f.relpath].error is None]
    assert sorted(seen) == sorted(readable) and len(seen) == len(set(seen))
    # r0/d0 (600 rows), r1/d0 and r1/d1 (50 + 200 readable) fill one task; r0/d1 (2000) is
    # split 900 | 200 + 200 | 700; r2's model differs and its 2000-row file is a task alone
    assert [type(u).__name__ for u in units] == ["Pack", "Split", "Pack", "Pack"]
    assert [g.fingerprint for g in units[0].groups] == ["r0d0", "r1d0", "r1d1"]
    assert [len(b) for b in units[1].batches] == [1, 2, 1]
    # without a limit: enough tasks for every worker (4 each) when the groups allow it
    assert len(task_units(plan, infos, workers=2)) >= 5


def _set_column(path, name, values):
    table = pq.read_table(path)
    pq.write_table(table.set_column(table.schema.get_field_index(name), name, pa.array(values)), path)


def test_a_groups_plausibility_warnings_go_into_its_row_not_to_stderr(fleet, tmp_path):
    """A robot-day logged with the other torque sign on joint 2, and a file with a spike in q3:
    the warnings that name them are in those groups' rows (a worker's stderr is nobody's
    terminal) and only there, from the in-process path and from the workers' task alike."""
    import warnings

    from dynid.errors import DynidWarning
    from dynid.fleet.mapreduce import identify_in_process
    from dynid.fleet.tasks import map_files

    root = copy_fleet(fleet, tmp_path / "data")
    for part in ("part-0", "part-1"):
        path = root / "robot=r001" / "date=2026-01-05" / f"{part}.parquet"
        _set_column(path, "tau2", -pq.read_table(path).column("tau2").to_numpy())
    spiked = root / "robot=r002" / "date=2026-01-06" / "part-0.parquet"
    q3 = pq.read_table(spiked).column("q3").to_numpy().copy()
    q3[1000] += 1.0
    _set_column(spiked, "q3", q3)
    plan = _plan(root)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = identify_in_process(plan, threads=1)
        group = next(g for g in plan.todo if g.keys == {"robot": "r002", "date": "2026-01-06"})
        task = map_files([(f.url, f.relpath) for f in group.files], plan.models[group.model_id])
    assert not [w for w in caught if issubclass(w.category, DynidWarning)]
    flagged = {(r["robot"], r["date"]) for r in rows if any("opposite sign" in w and "[2]" in w for w in r["warnings"])}
    assert flagged == {("r001", "2026-01-05")}
    jumps = {(r["robot"], r["date"]) for r in rows if any("q3 jumps" in w for w in r["warnings"])}
    assert jumps == {("r002", "2026-01-06")}
    assert len(task.warnings) == 1 and "q3 jumps" in task.warnings[0] and "part-0.parquet" in task.warnings[0]


def _refit_and_predict(model, paths, blocks=0):
    """Held-out RMSD per joint by brute force, on samples: for each fold (a file, or with
    ``blocks`` one of that many blocks of equal duration of the one file's time span), least
    squares on the stacked regressor rows of the other folds, then the residual of the fold's
    own torques; RMSD over all folds' samples (thesis eq. 5.1)."""
    from dynid.identify.pipeline import prepared_sources, regressor_arrays

    st = model.settings
    folds = []
    for p in paths:
        ready = prepared_sources(model.robot, [p], st.options, model.mapping, st.prep)[0]
        y, tau, mask = regressor_arrays(model.robot, ready, st.options, model.base, st.prep)
        mask = np.ones(tau.shape, dtype=bool) if mask is None else mask
        if blocks:
            t = pq.read_table(p, columns=["t"]).column("t").to_numpy()
            label = np.searchsorted(t.min() + (t.max() - t.min()) * np.arange(1, blocks) / blocks, ready.t, side="right")
            folds += [(y[label == k], tau[label == k], mask[label == k]) for k in range(blocks)]
        else:
            folds.append((y, tau, mask))
    rss, rows = 0.0, 0
    for k, (y, tau, mask) in enumerate(folds):
        others = [f for i, f in enumerate(folds) if i != k]
        beta = np.linalg.lstsq(np.concatenate([f[0][f[2]] for f in others]),
                               np.concatenate([f[1][f[2]] for f in others]), rcond=None)[0]
        rss = rss + (np.where(mask, tau - y @ beta, 0.0) ** 2).sum(axis=0)
        rows = rows + mask.sum(axis=0)
    return np.sqrt(rss / rows)


def test_held_out_validation_equals_refit_and_predict_on_samples(fleet, client, tmp_path):
    """validation_rmsd, computed from each fold's normal equations by subtraction, equals a
    refit on the samples of the other files (or time blocks of a group's one file) with the
    prediction of the held-out torques, to 1e-9: in-process, in the workers' packed task and
    through a split group's reduce tree."""
    from dynid.fleet.mapreduce import identify_in_process

    # groups of two files: a task per file (3000 rows at most: 4000-row files) and a reduce tree;
    # groups of one file: whole groups packed in a task
    for by, kind, task_rows in ((("robot", "date"), "leave one file out", 3000),
                                (("robot", "date", "file"), "5 blocks of time of its file", None)):
        plan = _plan(fleet, by)
        local = identify_in_process(plan, threads=1)
        remote = identify_fleet(client, plan, tmp_path / "res.parquet", say=lambda _: None, task_rows=task_rows).rows
        for group, row in list(zip(plan.todo, local))[1:2]:
            assert row["validation_kind"] == kind and row["validation_folds"] == (2 if len(by) == 2 else 5)
            expected = _refit_and_predict(plan.models[group.model_id], [f.url for f in group.files],
                                          5 if len(by) == 3 else 0)
            for rows in (local, remote):
                got = next(r for r in rows if all(r[k] == group.keys[k] for k in by))
                np.testing.assert_allclose(got["validation_rmsd"], expected, rtol=1e-9)
            # held out, the model predicts no better than on its own samples
            assert row["validation_relative_error"] >= json.loads(row["result_json"])["fit"]["relative_error"]


def test_a_noisier_file_raises_its_groups_validation_rmsd(fleet, tmp_path):
    """White noise added to the torques of one file of a robot-day (10 x the clean group's
    held-out RMSD of each joint) raises that group's validation RMSD on every joint, and no
    other group's."""
    from dynid.fleet.mapreduce import identify_in_process

    clean = {(r["robot"], r["date"]): r for r in identify_in_process(_plan(fleet), threads=1)}
    root = copy_fleet(fleet, tmp_path / "data")
    noisy = root / "robot=r001" / "date=2026-01-05" / "part-1.parquet"
    sigma = 10 * np.array(clean[("r001", "2026-01-05")]["validation_rmsd"])
    rng = np.random.default_rng(7)
    for j, s in enumerate(sigma):
        tau = pq.read_table(noisy).column(f"tau{j + 1}").to_numpy()
        _set_column(noisy, f"tau{j + 1}", tau + rng.normal(0.0, s, tau.shape))
    for row in identify_in_process(_plan(root), threads=1):
        before = np.array(clean[(row["robot"], row["date"])]["validation_rmsd"])
        ratio = np.array(row["validation_rmsd"]) / before
        if (row["robot"], row["date"]) == ("r001", "2026-01-05"):
            assert np.all(ratio > 2.0), ratio
        else:
            np.testing.assert_allclose(ratio, 1.0, rtol=1e-9)


def test_a_data_set_given_as_an_fsspec_url(fleet, tmp_path):
    """ROOT as a memory:// URL (fsspec's in-memory file system, filled here): files found,
    fleet.yaml read and every file read by the workers (threads of this process, which see the
    same memory file system) give the numbers of the local copy."""
    import fsspec
    from distributed import Client, LocalCluster

    fs = fsspec.filesystem("memory")
    for path in sorted(fleet.rglob("*")):
        if path.is_file():
            fs.pipe(f"/fleet-url-test/{path.relative_to(fleet).as_posix()}", path.read_bytes())
    url = "memory://fleet-url-test"
    settings = Settings(ModelOptions(), Preprocessing())
    plan = make_plan(url, load_config(f"{url}/fleet.yaml"), ("robot", "date"), settings)
    assert plan.todo[0].files[0].url.startswith("memory://") and len(plan.files) == 12
    try:
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
                Client(cluster, set_as_default=False) as remote:
            got = identify_fleet(remote, plan, tmp_path / "res.parquet", say=lambda _: None).rows
    finally:
        fs.rm("/fleet-url-test", recursive=True)
    local = {(r["robot"], r["date"]): r for r in identify_fleet_in_process_rows(fleet)}
    assert len(got) == 6
    for row in got:
        ref = local[(row["robot"], row["date"])]
        assert row["status"] == "ok" and row["files"] == ref["files"]
        np.testing.assert_allclose(row["parameter_values"], ref["parameter_values"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(row["validation_rmsd"], ref["validation_rmsd"], rtol=1e-12)


def identify_fleet_in_process_rows(root):
    from dynid.fleet.mapreduce import identify_in_process

    return identify_in_process(_plan(root), threads=1)


def test_a_worker_killed_mid_run_changes_nothing(fleet, client, tmp_path):
    """(Last in this module: the new worker process compiles the kernels again.) SIGKILL one worker process while map tasks run: its nanny restarts it, the scheduler
    runs the lost tasks again, and every number equals the undisturbed run's."""
    reference = identify_fleet(client, _plan(fleet), tmp_path / "ref.parquet", say=lambda _: None)
    pids = client.run(os.getpid)
    box = {}
    run = threading.Thread(target=lambda: box.update(s=identify_fleet(client, _plan(fleet), tmp_path / "res.parquet",
                                                                      say=lambda _: None)))
    run.start()
    killed = None
    deadline = time.time() + 60
    while killed is None and run.is_alive() and time.time() < deadline:
        busy = [w for w, keys in client.processing().items()
                if any(("map_files" in str(k) or "identify_groups" in str(k)) for k in keys)]
        if busy:
            killed = busy[0]
            os.kill(pids[killed], signal.SIGKILL)
        time.sleep(0.005)
    run.join(120)
    assert killed is not None, "the run ended before a worker could be killed"
    client.wait_for_workers(2, timeout=60)
    assert pids[killed] not in client.run(os.getpid).values()  # the killed process is gone, a new one serves
    got = {(r["robot"], r["date"]): r for r in box["s"].rows}
    for ref in reference.rows:
        row = got[(ref["robot"], ref["date"])]
        assert row["status"] == "ok" and row["parameter_values"] == ref["parameter_values"]
        assert row["parameter_std"] == ref["parameter_std"] and row["rmsd"] == ref["rmsd"]
