"""`dynid demo` on every builtin robot (``dynid robots``), one after the other.

    .venv/bin/python bench/demo_robots.py [NAME ...] [--out DIR]

Runs ``dynid demo --robot NAME --out DIR/demo_NAME --force`` in a subprocess per robot and
prints per robot the exit code, wall time, the limits the demo stated (summary.json "limits"
sources), the warnings it printed, and its headline figures. Not part of the test suite (a
full demo per robot takes 15-50 s).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADLINE = ("excitation within limits", "validation relative error pc [%]", "payload centre of mass error [mm]")
# besides summary.json's "headline" (the drift-aware and the static model on the warm and the cold log)


def builtin_names() -> list[str]:
    from dynid.robot.builtin import BUILTINS

    return list(BUILTINS)


def run(name: str, out: Path) -> None:
    target = out / f"demo_{name}"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dynid.cli.main", "demo", "--robot", name, "--out", str(target),
                           "--force"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    warnings = [line for line in proc.stdout.splitlines() if line.startswith("warning")]
    print(f"{name}: exit {proc.returncode}, {wall:.0f} s wall, {len(warnings)} warning(s)")
    if proc.returncode:
        print("  " + (proc.stderr or proc.stdout).strip().splitlines()[-1])
        return
    summary = json.loads((target / "summary.json").read_text())
    stated = sorted({k for k, v in summary["limits"]["source"].items() for s in v if s not in ("description",)})
    print(f"  limits not from the description: {stated or 'none'}")
    for line in warnings:
        print(f"  {line[:160]}")
    shown = {**summary.get("headline", {}), **{k: summary["figures"].get(k) for k in HEADLINE}}
    print("  " + "; ".join(f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}" for k, v in shown.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="dynid-demo-robots-"))
    for name in args.names or builtin_names():
        run(name, out)


if __name__ == "__main__":
    main()
