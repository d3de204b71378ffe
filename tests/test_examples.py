"""The scripts in examples/ run as a user runs them (python examples/X.py FOLDER) and print
what they promise; each checks its own numbers (a loaded result equals the saved one, an
exported URDF reproduces the identified torques)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _run(name: str, folder: Path) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / name), str(folder)], capture_output=True, text=True,
                          timeout=900, cwd=folder.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_every_example_is_run_here():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(
        ["identify_arrays.py", "identify_files.py", "export_urdf.py", "fleet_local_cluster.py"])


def test_identify_from_arrays_predicts_another_motion(tmp_path):
    out = _run("identify_arrays.py", tmp_path / "out")
    error = float(re.search(r"predicted torques within ([\d.]+)%", out).group(1))
    assert "52 base parameters" in out and error < 0.1


def test_identify_from_files_validates_and_reads_its_result_back(tmp_path):
    out = _run("identify_files.py", tmp_path / "out")
    assert (tmp_path / "out" / "result.json").is_file() and "chosen by cross-validation" in out
    assert float(re.search(r"relative error ([\d.]+)%", out).group(1)) < 1.0


def test_export_writes_a_urdf_with_the_identified_torques(tmp_path):
    out = _run("export_urdf.py", tmp_path / "out")
    assert (tmp_path / "out" / "identified.urdf").is_file()
    assert float(re.search(r"model's to ([\d.e+-]+) N m", out).group(1)) < 1e-9


def test_fleet_on_a_local_cluster_identifies_every_robot_day(tmp_path):
    out = _run("fleet_local_cluster.py", tmp_path / "out")
    rows = re.findall(r"robot r\d+ \S+: ok", out)
    assert len(rows) == 6 and (tmp_path / "out" / "fleet_results.parquet").is_file()
