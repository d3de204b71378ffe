"""The HTML report of a complete demo directory, rendered in headless Chromium without console
errors, every section present; missing inputs give visible notes. The directory is the one
``dynid demo`` wrote from the installed wheel (``make demo``'s robot, er3a, small budget: conftest.py's
``wheel_demo``, shared with tests/test_wheel.py, which checks the command end to end)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chromium import DevTools, chromium_binary, screenshot
from dynid.report import ReportInputs, build_report, write_report
from dynid.report.builder import SECTION_IDS


@pytest.fixture(scope="module")
def demo_dir(wheel_demo):
    """A complete demo directory: ``dynid demo`` run from the installed wheel, small budget."""
    return wheel_demo[0]


@pytest.fixture(scope="module")
def browser():
    tools = DevTools(chromium_binary())
    yield tools
    tools.close()


def test_devtools_check_catches_console_errors(tmp_path, browser):
    """Negative control: the check below would notice an error on a page."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><script>console.error("x"); missing();</script></body></html>')
    browser.load(page.as_uri())
    assert len(browser.problems()) == 2


def test_demo_directory_is_complete_and_atomic(demo_dir):
    names = {p.name for p in demo_dir.iterdir()}
    assert {"report.html", "result_ols.json", "result_pc.json", "excitation.json", "train.csv", "validation.csv",
            "friction.json", "multibody.json", "model.urdf", "model.json", "summary.json"} <= names
    assert not list(demo_dir.parent.glob(f".{demo_dir.name}.*"))  # the work directory became the target, no litter
    summary = json.loads((demo_dir / "summary.json").read_text())
    assert summary["figures"]["excitation within limits"] is True


def test_demo_headline_is_the_drift_aware_model_beside_the_static_one(demo_dir):
    """The headline: the drift-aware and the static model on the log recorded right after the test
    and on one at a cold start (each log's since_cold column says when), and the noise floor; the report opens with the
    sentence of what the user can trust, and shows the drift-aware model's torques."""
    summary = json.loads((demo_dir / "summary.json").read_text())
    headline = summary["headline"]
    keys = list(headline)
    assert "drift-aware" in keys[0] and "static" in keys[1] and "cold start" in keys[2]
    errors = json.loads((demo_dir / "validation_drift.json").read_text())
    assert headline[keys[0]] == errors["drift-aware OLS"]["validation"]
    assert errors["drift-aware OLS"]["validation_cold"] < errors["static OLS"]["validation_cold"]
    # beside them the noise floor: the simulated truth on the same samples, which a model fitted to
    # another log (independent noise) beats only by chance, and then by a hair (1 %)
    floor = errors["simulated truth (torque noise alone)"]
    for role in ("validation", "validation_cold"):
        assert 0.0 < floor[role] <= 1.01 * min(errors[m][role] for m in ("drift-aware OLS", "static OLS")), \
            (role, errors)
    assert f"{floor['validation']:.3g} %" in summary["trust"] and "simulated truth" in keys[5]
    for name in ("train.csv", "validation.csv", "validation_cold.csv"):
        assert "since_cold" in (demo_dir / name).read_text().splitlines()[0].split(",")
    html = (demo_dir / "report.html").read_text()
    overview = html[html.index('id="overview"'):]
    assert overview.index(summary["trust"][:60]) < overview.index("key figure")
    assert summary["trust"].startswith("What you can trust") and "ols + drift" in html


def test_report_renders_every_section_without_console_errors(demo_dir, browser, tmp_path):
    page = demo_dir / "report.html"
    text = page.read_text()
    assert not re.search(r"(src|href)=\"(https?:)?//", text) and "<script" not in text  # self-contained
    browser.load(page.as_uri())
    assert browser.problems() == []
    sections = browser.evaluate("[...document.querySelectorAll('section')].map(s => s.id)")
    assert sections == list(SECTION_IDS)
    omitted = browser.evaluate("[...document.querySelectorAll('section .missing')].map(p => p.textContent)")
    # the complete demo leaves out nothing but, with two cycles, possibly the drift fit figure
    assert all("Drift" in m or "drift" in m for m in omitted), omitted
    images = browser.evaluate("[...document.images].map(i => [i.alt, i.complete, i.naturalWidth])")
    assert len(images) >= 4 and all(done and width > 300 for _, done, width in images), images
    for sid in ("torques", "excitation", "friction"):
        assert browser.evaluate(f"document.querySelectorAll('#{sid} img').length") >= 1, sid
    for sid in ("parameters", "identifiability", "multibody"):
        assert browser.evaluate(f"document.querySelectorAll('#{sid} table tbody tr').length") > 5, sid
    shots = Path(os.environ.get("DYNID_SCREENSHOT_DIR", tmp_path))  # set it to keep the screenshot
    shots.mkdir(parents=True, exist_ok=True)
    screenshot(chromium_binary(), page.as_uri(), shots / "report.png")
    assert (shots / "report.png").stat().st_size > 50_000


def test_missing_inputs_become_visible_notes(demo_dir, tmp_path, browser):
    out = tmp_path / "partial.html"
    write_report(out, build_report(ReportInputs.gather(None, result=demo_dir / "result_ols.json")))
    browser.load(out.as_uri())
    assert browser.problems() == []
    omitted = browser.evaluate("Object.fromEntries([...document.querySelectorAll('section')].map("
                               "s => [s.id, s.querySelectorAll('.missing').length]))")
    assert list(omitted) == list(SECTION_IDS)
    for sid in ("torques", "excitation", "multibody"):  # no log, trajectory, multibody result given
        assert omitted[sid] >= 1, sid
    assert omitted["parameters"] == 0 and omitted["identifiability"] == 0 and omitted["evolution"] == 0


def test_report_command_reads_a_demo_directory(demo_dir, tmp_path):
    out = tmp_path / "r.html"
    proc = subprocess.run([sys.executable, "-m", "dynid.cli.main", "report", "--from", str(demo_dir), "--out",
                           str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 100_000 and "<section id=\"multibody\"" in out.read_text()
