"""The library call and the command give the same identification (issue 23).

On a simulated er3a log with the defects of real ones (torque noise, drive ripple, 500-count
encoders, 1 % of the rows dropped, so irregular time stamps; joint 6 held nearly still), for
each estimator: ``dynid.Identification(...).fit(t, q, tau)`` on the arrays, ``fit_files`` on
the same samples as Parquet and as CSV, and ``dynid identify`` on the Parquet file. Printed:
the largest relative difference of the base parameter values, their standard deviations and
the fit's RMSD per joint between the API on arrays and the command, and between the API on
the file and the command's result.json as a whole (ignoring the cross-validation's CPU time).

Usage: .venv/bin/python bench/api_equality.py [--seconds 40] [--rate 100]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/realistic_logs.py

import dynid  # noqa: E402
from dynid.data.io import write_joint_data  # noqa: E402
from realistic_logs import realistic_log  # noqa: E402


def largest(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    both = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return float("inf")
    scale = np.maximum(np.abs(b[both]), 1e-12 * np.max(np.abs(b[both])))
    return float(np.max(np.abs(a[both] - b[both]) / scale)) if both.any() else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--rate", type=float, default=100.0)
    args = parser.parse_args()
    robot = dynid.load_robot("er3a")
    data, _, _ = realistic_log(robot, args.rate, args.seconds, seed=3, still=(5,))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        write_joint_data(d / "log.parquet", data)
        write_joint_data(d / "log.csv", data)
        print(f"er3a, {len(data)} rows at {args.rate:g} Hz (irregular), joint 6 held still")
        for estimator in ("ols", "wls", "irls", "pc"):
            idn = dynid.Identification(robot, estimator=estimator)
            command = subprocess.run([sys.executable, "-m", "dynid.cli.main", "identify", "-r", "er3a", "-d",
                                      str(d / "log.parquet"), "--estimator", estimator, "-o", str(d / "cli.json")],
                                     capture_output=True, text=True)
            try:
                arrays = idn.fit(data.t, data.q, data.tau)
            except dynid.DynidError as exc:
                refused = command.returncode == 2 and str(exc).split(";")[0] in command.stderr.replace("\n", " ")
                print(f"{estimator:4s}: refused by both: {refused} ({str(exc)[:90]}...)")
                continue
            parquet, csv = idn.fit_files(d / "log.parquet"), idn.fit_files(d / "log.csv")
            cli = json.loads((d / "cli.json").read_text())
            values = np.array([p["value"] for p in cli["base_parameters"]])
            std = np.array([np.nan if p["std"] is None else p["std"] for p in cli["base_parameters"]])
            rmsd = np.array(cli["fit"]["rmsd"], dtype=float)
            parquet.save(d / "api.json")
            api = json.loads((d / "api.json").read_text())
            for doc in (api, cli):
                doc["lowpass_selection"].pop("cpu_seconds", None)
            print(f"{estimator:4s}: arrays vs command: values {largest(arrays.values, values):.1e}, "
                  f"std {largest(arrays.std, std):.1e}, rmsd {largest(arrays.rmsd, rmsd):.1e}; "
                  f"CSV vs command: values {largest(csv.values, values):.1e}; "
                  f"Parquet: result.json {'identical' if api == cli else 'DIFFERS'} to the command's; "
                  f"{len(arrays.undetermined)} undetermined")


if __name__ == "__main__":
    main()
