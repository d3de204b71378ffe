"""dynid excite protocol -> dynid simulate --friction-drift --temperature -> dynid friction analyze | identify."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from dynid.cli.main import app

from friction_helpers import COULOMB, VISCOUS

runner = CliRunner()


def _run(*args):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    d = tmp_path_factory.mktemp("friction")
    _run("excite", "protocol", "-r", "er3a", "-o", d / "protocol.csv", "-K", 8, "--rate", 10,
         "--warming-duration", 60, "--no-cycloid")
    _run("simulate", "-r", "er3a", "--trajectory", d / "protocol.csv", "-o", d / "sim.csv", "--tau-noise", 0.3,
         "--coulomb", ",".join(map(str, COULOMB)), "--viscous", ",".join(map(str, VISCOUS)),
         "--friction-drift", "0.5,900,0.4,200", "--temperature", "20,25,900", "--seed", 3)
    return d


def test_analyze_writes_curves_gravity_and_drift(log):
    _run("friction", "analyze", "-r", "er3a", "-d", log / "sim.csv", "-o", log / "friction.json",
         "--plot-dir", log / "plots")
    out = json.loads((log / "friction.json").read_text())
    assert [g["joint"] for g in out["gravity_removed"]] == [2, 3]
    f = {k: np.array(v) for k, v in out["friction"].items()}
    assert set(f["cycle"].tolist()) == set(range(1, 9))
    first, last = f["cycle"] == 1, f["cycle"] == 8
    for j in range(1, 7):  # cold friction above warm at every level: (1 + 0.5 e^-t/900 + ...) decays
        a = f["friction"][first & (f["joint"] == j)]
        b = f["friction"][last & (f["joint"] == j)]
        assert a.size == b.size > 0 and np.all(a > b)
    temp = np.array(out["friction"]["temperature"])  # the simulated warm-up, 20 -> 45 deg C with 900 s
    assert np.allclose(temp, 20.0 + 25.0 * (1.0 - np.exp(-f["time"] / 900.0)), atol=0.05)
    assert len(out["drift"]) >= 20
    warm = [d["parameters"]["a"] / (COULOMB[d["joint"] - 1] + VISCOUS[d["joint"] - 1] * d["speed"])
            for d in out["drift"] if d["joint"] <= 3]
    assert abs(np.median(warm) - 1) < 0.05  # the warm friction a of eq. 5.4
    assert (log / "plots" / "friction_velocity.png").stat().st_size > 0
    assert (log / "plots" / "friction_drift.png").stat().st_size > 0


@pytest.mark.parametrize("mode", ["time", "temperature"])
def test_identify_drift_beats_static_on_held_out_cycles(log, mode):
    out = log / f"drift_{mode}.json"
    _run("friction", "identify", "-r", "er3a", "-d", log / "sim.csv", "-o", out, "--drift", mode,
         "--validate-cycles", "2,4,6,8")
    cv = json.loads(out.read_text())["cross_validation"]
    static, drift = np.array(cv["rmsd_static"]), np.array(cv["rmsd_drift"])
    assert np.all(drift[:3] < 0.8 * static[:3])
    if mode == "time":  # the simulated drift is exactly the time model: noise floor (sigma 0.3)
        assert np.all(drift < 1.1 * 0.3)
    # the temperature follows t1 = 900 s only: an affine temperature model misses the 200 s term


def test_errors_name_the_missing_column(log, tmp_path):
    rows = (log / "sim.csv").read_text().splitlines()
    header = rows[0].split(",")
    keep = [i for i, c in enumerate(header) if c != "stage" and not c.startswith("temp")]
    bare = tmp_path / "bare.csv"
    bare.write_text("\n".join(",".join(r.split(",")[i] for i in keep) for r in rows[:400]) + "\n")
    result = runner.invoke(app, ["friction", "analyze", "-r", "er3a", "-d", str(bare), "-o", str(tmp_path / "x.json")])
    assert result.exit_code == 2 and "stage" in result.output
    result = runner.invoke(app, ["friction", "identify", "-r", "er3a", "-d", str(bare), "-o", str(tmp_path / "y.json"),
                                 "--drift", "temperature"])
    assert result.exit_code == 2 and "temp1" in result.output
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "y.json").exists()


def test_compare_two_robots_of_one_model(log):
    # robot 2: the same warm friction, more cold excess (r1 = 1.0) and a faster warm-up (t1 = 500 s)
    _run("simulate", "-r", "er3a", "--trajectory", log / "protocol.csv", "-o", log / "robot2.csv", "--tau-noise", 0.3,
         "--coulomb", ",".join(map(str, COULOMB)), "--viscous", ",".join(map(str, VISCOUS)),
         "--friction-drift", "1.0,500,0.4,200", "--seed", 4)
    for name in ("sim", "robot2"):
        _run("friction", "analyze", "-r", "er3a", "-d", log / f"{name}.csv", "-o", log / f"{name}.json")
    _run("friction", "compare", "--first", log / "sim.json", "--second", log / "robot2.json", "-o", log / "cmp.json")
    rows = json.loads((log / "cmp.json").read_text())["levels"]
    strong = [r for r in rows if r["joint"] <= 2]  # the joints with the largest friction
    assert len(strong) >= 8
    for r in strong:  # cold friction a + b + c: 1.9 a against 2.4 a
        truth = COULOMB[r["joint"] - 1] + VISCOUS[r["joint"] - 1] * r["speed"]
        assert abs(r["contrast"]["cold"]["difference"] / (0.5 * truth) - 1) < 0.25
    # one test of 8 cycles per robot: an occasional level has a wide interval (z < 1.96)
    assert np.mean([r["contrast"]["cold"]["significant"] for r in strong]) >= 0.8
