"""Fleet drift: the robots given a growing fault are flagged, on the faulty joint, and the
healthy ones are not; the report is one offline page with each flagged robot's evidence."""

from __future__ import annotations

import json
import re

import pytest
from cli_helpers import run_ok, runner
from fleet_helpers import small_fleet

from dynid.cli.main import app
from dynid.data.preprocess import Preprocessing
from dynid.fleet.config import load_config
from dynid.fleet.mapreduce import identify_in_process
from dynid.fleet.plan import Settings, make_plan
from dynid.fleet.results import write_results
from dynid.identify import ModelOptions


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """10 robots x 12 days of 15 s at 100 Hz, three of them with a fault (one of each kind),
    identified per robot and day in this process."""
    tmp = tmp_path_factory.mktemp("drift")
    truth = small_fleet(tmp / "data", robots=10, days=12, seconds=15.0, rate=100.0, files_per_day=1, seed=11,
                        faults=3, temperature=False)
    plan = make_plan(str(tmp / "data"), load_config(str(tmp / "data" / "fleet.yaml")), ("robot", "date"),
                     Settings(ModelOptions(), Preprocessing()))
    rows = identify_in_process(plan, threads=1)
    path = tmp / "fleet_results.parquet"
    write_results(path, rows, ("robot", "date"), str(tmp / "data"))
    return path, truth


def test_faulty_robots_are_flagged_and_healthy_ones_are_not(results, tmp_path):
    path, truth = results
    text = run_ok("fleet", "drift", path, "--out", tmp_path / "drift", "--baseline-days", "4", "--recent-days", "3")
    assert "3 of 10 robots flagged" in text
    drift = json.loads((tmp_path / "drift" / "drift.json").read_text())
    faults = {rid: r["fault"] for rid, r in truth["robots"].items() if r["fault"]}
    assert sorted(f["kind"] for f in faults.values()) == ["coulomb", "encoder", "payload"]
    flagged = {rid for rid, r in drift["robots"].items() if r["flagged"]}
    assert flagged == set(faults)
    for rid, fault in faults.items():
        flags = drift["robots"][rid]["flags"]
        if fault["kind"] == "coulomb":  # the strongest evidence is that joint's Coulomb friction, rising
            assert flags[0]["quantity"] == f"Fc{fault['joint']}" and flags[0]["change"] > 0
            assert "fleet" in flags[0]["flags"] and "own" in flags[0]["flags"]
        else:  # a payload step or a growing encoder offset moves the rigid-body parameters
            assert any(f["kind"] == "parameter" for f in flags)


def test_report_is_offline_with_each_flagged_robot(results, tmp_path):
    path, truth = results
    run_ok("fleet", "drift", path, "--out", tmp_path / "d", "--baseline-days", "4")
    html = (tmp_path / "d" / "fleet_report.html").read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing fetched from the network
    for rid, r in truth["robots"].items():
        assert (f'id="robot-{rid}"' in html) == (r["fault"] is not None)
    assert 'id="overview"' in html and html.count("data:image/png;base64,") >= 4
    assert 'id="validation"' in html and "median held out %" in html


def test_drift_needs_results_by_robot_and_date(results, tmp_path):
    from dynid.fleet.results import read_results

    rows, _, root = read_results(results[0])
    other = tmp_path / "by_robot.parquet"
    write_results(other, [dict(r, date=None) for r in rows[:1]], ("robot",), root)
    res = runner.invoke(app, ["fleet", "drift", str(other), "--out", str(tmp_path / "d")])
    assert res.exit_code == 2 and "grouped by robot and date" in res.output
    assert not (tmp_path / "d").exists()
    res = runner.invoke(app, ["fleet", "drift", str(tmp_path / "nope.parquet"), "--out", str(tmp_path / "d")])
    assert res.exit_code == 2 and "nope.parquet" in res.output
