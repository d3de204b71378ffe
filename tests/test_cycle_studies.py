"""The thesis' per-cycle studies (5.1.4-5.1.5): the statistics of Tables H.x / F.x / 5.4 as the
printed rows define them, per-cycle self- and cross-verification (Tables 5.1-5.3, Figs 5.4-5.7)
and identification on groups of cycles (Table 5.5)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dynid
from cli_helpers import run_ok
from dynid.data.io import load_joint_data
from dynid.errors import DataError, DynidWarning
from dynid.identify.cycle_groups import THESIS_UNITS, parse_cycles
from dynid.identify.cycle_stats import thesis_statistics


def _series(start, later_start, end, lo, hi, cycles=24):
    """A per-cycle series: first value ``start``, the minimum ``lo`` among the first 5, then
    cycles 6.. rising from ``later_start`` (their minimum) to ``hi``, last value ``end``."""
    later = np.linspace(later_start, hi, cycles - 5)
    later[-1] = end
    if end != hi:
        later[-2] = hi
    return np.concatenate([[start, lo, lo, lo, lo], later])


def test_d_mm_and_d_se_reproduce_thesis_table_h_rows():
    """Table H.1 (Robot 1, Test 1), printed to 4 decimals (so are its MIN and MAX: the ratios of
    the rounded values agree to one unit of the last digit). J1_IZZ: the start cycle is the
    minimum and the end the maximum (D/SE > D/MM, so D/SE is over the start). J2_mPx: the end
    value implied by the all-cycle D/SE gives the printed D/SE without the first 5 cycles."""
    izz = _series(377.9726, 387.4123, 404.6069, 377.9726, 404.6069)
    s = thesis_statistics(izz, skip_first=5)
    assert float(s["all"]["d_mm"][0]) == pytest.approx(0.0658, abs=1e-4)
    assert float(s["all"]["d_se"][0]) == pytest.approx(0.0705, abs=1e-4)
    assert float(s["without_first"]["d_se"][0]) == pytest.approx(0.0444, abs=1e-4)  # cycle 6 = 387.4123 = MIN after 5
    end = 2.2733 * (1 + 0.0842)  # all-cycle D/SE with start = MIN 2.2733
    mpx = _series(2.2733, 2.3836, end, 2.2733, 2.4969)
    s = thesis_statistics(mpx, skip_first=5)
    assert float(s["all"]["d_mm"][0]) == pytest.approx(0.0895, abs=1e-4)
    assert float(s["without_first"]["d_mm"][0]) == pytest.approx(0.0454, abs=1e-4)
    assert float(s["without_first"]["d_se"][0]) == pytest.approx(0.0340, abs=1e-4)
    ixx = _series(-1.1130, -0.8840, -0.8427, -1.1130, -0.7464)  # negative parameter: over |MAX|
    # inputs rounded to 1e-4 over |MAX| = 0.75 move the ratio by up to 1.3e-4
    assert float(thesis_statistics(ixx)["all"]["d_mm"][0]) == pytest.approx(0.4910, abs=2e-4)


def test_statistics_blocks_and_sample_standard_deviation():
    x = np.array([[1.0, 10.0], [2.0, 10.0], [3.0, 10.0], [4.0, 10.0]])
    s = thesis_statistics(x, skip_first=1)
    np.testing.assert_allclose(s["all"]["sdv"], [np.sqrt(5.0 / 3.0), 0.0])  # ddof = 1 (MATLAB std)
    np.testing.assert_allclose(s["without_first"]["mean"], [3.0, 10.0])
    np.testing.assert_allclose(s["sdv_difference"], [1.0 - np.sqrt(5.0 / 3.0), 0.0])
    with pytest.warns(DynidWarning, match="leaves 1 of the 4 cycles"):  # one cycle left: no spread, said
        assert thesis_statistics(x, skip_first=3)["without_first"] is None


def test_cycle_selections():
    assert parse_cycles("6-24") == list(range(6, 25))
    assert parse_cycles("unit2") == list(THESIS_UNITS["unit2"]) == [3, 9, 16, 22]
    assert parse_cycles("last19", np.arange(1, 25)) == list(range(6, 25))
    assert parse_cycles("1,3, 5-6") == [1, 3, 5, 6]
    with pytest.raises(DataError, match="not in the data"):
        parse_cycles("unit1", np.arange(1, 9))
    with pytest.raises(DataError, match="not a cycle"):
        parse_cycles("6..9")


SIGMA = 0.05  # torque noise std [N m]


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """planar2, 8 cycles of 15 s: a cold start (friction 1.8x warm, decaying with 40 s) and a
    warm log of the same motion (another noise seed)."""
    d = tmp_path_factory.mktemp("cycles")
    common = ["simulate", "--robot", "planar2", "--duration", "120", "--rate", "50", "--cycles", "8",
              "--tau-noise", SIGMA, "--coulomb", "0.4", "--viscous", "0.3"]
    run_ok(*common, "--friction-drift", "0.8,40,0,40", "--seed", 1, "--out", d / "cold.csv")
    run_ok(*common, "--seed", 1, "--out", d / "warm.csv")
    run_ok(*common, "--seed", 2, "--out", d / "warm2.csv")
    return d


@pytest.fixture(scope="module")
def per_cycle(logs):
    """identify --per cycle of the cold log (cold.json beside it), for every test that reads it
    (each test runs alone too: -k, random order, or another worker)."""
    run_ok("identify", "-r", "planar2", "-d", logs / "cold.csv", "-o", logs / "cold.json", "--per", "cycle",
           "--skip-first", "2")
    return logs


def test_self_verification_is_at_the_noise_and_the_cold_cycles_stand_out(per_cycle):
    d = per_cycle
    run_ok("validate", "-r", "planar2", "-p", d / "cold.json", "-d", d / "cold.csv", "--per", "cycle",
           "--min-velocity", "0", "--json", d / "v.json", "--figure", d / "v.png")
    rep = json.loads((d / "v.json").read_text())[str(d / "cold.csv")]
    assert rep["labels"] == [str(c) for c in range(1, 9)]
    own = np.array(rep["kinds"]["own"]["rmsd"], dtype=float)
    whole = np.array(rep["kinds"]["whole"]["rmsd"], dtype=float)
    # once the friction changes little within a cycle (from cycle 5: by < 3 % of its warm value),
    # each cycle's own parameters leave the noise (RMSD = sigma sqrt(1 - b/N), b/N < 2 %)
    np.testing.assert_allclose(own[4:], SIGMA, rtol=0.08)
    # one model for all cycles misses the cold friction of cycle 1 most (drift 40 s, cycles 15 s)
    assert np.all(whole[0] > 2 * whole[-1])
    assert np.all(whole[-1] > own[-1])  # and, averaging cold and warm, it is off in the warm cycles too
    stats = rep["kinds"]["whole"]["statistics"]
    assert stats["all"]["max"] == pytest.approx(np.nanmax(np.array(rep["kinds"]["whole"]["relative_rmsd"],
                                                                    dtype=float), axis=0).tolist())
    assert (d / "v.png").read_bytes()[:4] == b"\x89PNG"


def test_cross_verification_pairs_cycles_of_two_tests(logs):
    d = logs
    run_ok("identify", "-r", "planar2", "-d", d / "warm.csv", "-o", d / "warm.json", "--per", "cycle")
    out = run_ok("validate", "-r", "planar2", "-p", d / "warm.json", "-d", d / "warm2.csv", "--per", "cycle",
                 "--min-velocity", "0.05", "--json", d / "x.json")
    assert "Tables 5.2" in out  # range and mean without the first cycles, self vs cross
    rep = json.loads((d / "x.json").read_text())[str(d / "warm2.csv")]
    assert set(rep["kinds"]) == {"own", "paired", "whole"}
    paired = np.array(rep["kinds"]["paired"]["moving_rmsd"], dtype=float)
    own = np.array(rep["kinds"]["own"]["moving_rmsd"], dtype=float)
    # same robot, same motion: cycle c's parameters of test 1 predict cycle c of test 2 to the noise,
    # a little worse than test 2's own fit (their estimation error adds to the noise)
    np.testing.assert_allclose(paired, SIGMA, rtol=0.12)
    assert np.mean(paired) >= np.mean(own)


def test_groups_of_cycles_land_on_the_cold_and_warm_blocks(per_cycle):
    """Thesis 5.1.5.2: a group of late cycles identifies close to the last cycles, one of early
    cycles close to the first. Friction of joint 1 decays from 1.8x warm (0.3 N m s) to warm."""
    d = per_cycle
    run_ok("cycles", "groups", "-r", "planar2", "-d", d / "cold.csv", "-g", "early=1-2", "-g", "late=6-8",
           "--skip-first", "2", "--out", d / "g.json", "--figure", d / "g.png")
    study = json.loads((d / "g.json").read_text())
    assert study["groups"]["early"]["closest"] == "first" and study["groups"]["late"]["closest"] == "rest"
    k = study["names"].index("Fv1")
    def mean_factor(t0, t1):  # time average of 1 + 0.8 exp(-t/40) over [t0, t1] s
        return 1.0 + 0.8 * 40.0 / (t1 - t0) * (np.exp(-t0 / 40.0) - np.exp(-t1 / 40.0))

    assert study["groups"]["late"]["values"][k] == pytest.approx(0.3 * mean_factor(75, 120), rel=0.03)
    assert study["groups"]["early"]["values"][k] == pytest.approx(0.3 * mean_factor(0, 30), rel=0.05)
    run_ok("identify", "-r", "planar2", "-d", d / "cold.csv", "-o", d / "late.json", "--cycles", "6-8")
    late = json.loads((d / "late.json").read_text())
    assert late["cycles"] == [6, 7, 8]
    total = len(load_joint_data(d / "cold.csv", dynid.load_robot("planar2")))
    assert late["fit"]["samples"] < 0.4 * total
    out = run_ok("cycles", "stats", "-p", d / "cold.json", "--skip-first", "2")
    assert "D/SE" in out and "Fv1" in out


def test_groups_use_the_identification_preprocessing(logs):
    """cycles groups prepares the log as identify does (the cross-validated cutoff by default, or
    --lowpass), so its per-cycle values are identify --per cycle's, and a group's values are
    identify --cycles' on the same cycles (summed per-cycle equations vs one selection: the
    cycles' edge samples only differ)."""
    d = logs
    for cutoff in (None, "4"):
        extra = [] if cutoff is None else ["--lowpass", cutoff]
        run_ok("identify", "-r", "planar2", "-d", d / "cold.csv", "-o", d / "pc.json", "--per", "cycle",
               "--skip-first", "2", *extra)
        run_ok("cycles", "groups", "-r", "planar2", "-d", d / "cold.csv", "-g", "late=6-8", "--skip-first", "2",
               "--out", d / "gp.json", *extra)
        per = json.loads((d / "pc.json").read_text())
        study = json.loads((d / "gp.json").read_text())
        assert study["preprocessing"] == per["preprocessing"]
        np.testing.assert_allclose(study["per_cycle"]["values"], per["per_cycle"]["values"], rtol=1e-9, atol=1e-12)
        run_ok("identify", "-r", "planar2", "-d", d / "cold.csv", "-o", d / "sel.json", "--cycles", "6-8", *extra)
        selected = json.loads((d / "sel.json").read_text())
        value = np.array([p["value"] for p in selected["base_parameters"]])
        std = np.array([p["std"] for p in selected["base_parameters"]])
        assert np.all(np.abs(np.array(study["groups"]["late"]["values"]) - value) <= std), (study["groups"], value)


def test_table_5_1_all_tests_columns(logs):
    """validate --per cycle on several tests adds Table 5.1's "All Tests" columns: MIN and MAX
    over every test's cycles, D/MM of those, the largest test's D/SE, Sdv of all cycles pooled."""
    d = logs
    run_ok("identify", "-r", "planar2", "-d", d / "warm.csv", "-o", d / "w51.json", "--per", "cycle")
    out = run_ok("validate", "-r", "planar2", "-p", d / "w51.json", "-d", d / "warm.csv", "-d", d / "warm2.csv",
                 "--per", "cycle", "--json", d / "t51.json")
    assert "thesis Table 5.1" in out and "all tests" in out
    rep = json.loads((d / "t51.json").read_text())
    for kind in ("own", "whole"):
        values = [np.array(rep[str(p)]["kinds"][kind]["moving_relative_rmsd"], dtype=float)
                  for p in (d / "warm.csv", d / "warm2.csv")]
        pooled = np.concatenate(values)
        every = rep["all_tests"][kind]["all"]
        np.testing.assert_allclose(every["min"], pooled.min(axis=0))
        np.testing.assert_allclose(every["max"], pooled.max(axis=0))
        np.testing.assert_allclose(every["d_mm"], (pooled.max(0) - pooled.min(0)) / pooled.max(0))
        np.testing.assert_allclose(every["d_se"], np.max([np.abs(v[-1] - v[0]) / v[0] for v in values], axis=0))
        np.testing.assert_allclose(every["sdv"], pooled.std(axis=0, ddof=1))


def test_thesis_groups_and_warm_up_scaled_to_the_cycles_present(per_cycle):
    """A log of 8 cycles, not the thesis' 24: the default units keep their places (late, spread,
    early) scaled to 8 cycles, said in a note, and the statistics leave out the first 2 (5 of 24
    scaled), so the 'without the first' columns are filled."""
    d = per_cycle
    out = run_ok("cycles", "groups", "-r", "planar2", "-d", d / "cold.csv", "--out", d / "units.json")
    assert "has 8 cycles, not the thesis' 24" in " ".join(out.split())
    study = json.loads((d / "units.json").read_text())
    assert {k: v["cycles"] for k, v in study["groups"].items()} == {"unit1": [3, 5, 7], "unit2": [1, 3, 5, 7],
                                                                   "unit3": [1, 2, 3]}
    assert study["skip_first"] == 2 and study["groups"]["unit3"]["closest"] == "first"
    run_ok("validate", "-r", "planar2", "-p", d / "cold.json", "-d", d / "cold.csv", "--per", "cycle",
           "--json", d / "v8.json")
    rep = json.loads((d / "v8.json").read_text())[str(d / "cold.csv")]
    assert rep["skip_first"] == 2 and rep["kinds"]["whole"]["statistics"]["without_first"] is not None
