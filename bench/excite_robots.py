"""`dynid excite optimize` on every fixed-base robot of example-robot-data, command-line options only.

    .venv/bin/python bench/excite_robots.py [NAME ...] [--full]

Each robot runs the command with a 2 cm clearance (self-collision and the floor) and short
counts (N = 2, 1 generation of 1 member per variable, no polish; ``--full`` uses the
defaults), plus the options its description needs (``EXTRA``: velocity limits a URDF lacks,
no floor under a hand, the arm of a mobile manipulator). Prints per robot the exit code, wall
time, joints, cond and whether the limits and the guaranteed clearance hold.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dynid.robot.example import FIXED_BASE

TIAGO_ARM = ",".join(f"arm_{k}_joint" for k in range(1, 8))
EXTRA = {
    "double_pendulum": ["--dq-max", "5"],  # the URDFs give no velocity limit
    "double_pendulum_continuous": ["--dq-max", "5"],
    "double_pendulum_simple": ["--dq-max", "5"],
    "allegro_right_hand": ["--no-floor"],  # a hand: no floor below the palm's frame
    "allegro_left_hand": ["--no-floor"],
    "tiago": ["--joints", TIAGO_ARM],  # mobile manipulators: the arm (48 and 101 moving joints)
    "tiago_dual": ["--joints", ",".join(f"arm_left_{k}_joint" for k in range(1, 8))],
}
SHORT = ["-N", "2", "--generations", "1", "--popsize", "1", "--polish-iterations", "0"]


def main() -> None:
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or list(FIXED_BASE)
    counts = [] if "--full" in sys.argv else SHORT
    print(f"load average {os.getloadavg()[0]:.2f}; counts: {' '.join(counts) or 'defaults'}; --clearance 0.02")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            out = Path(tmp) / f"{name}.json"
            args = [sys.executable, "-m", "dynid.cli.main", "excite", "optimize", "-r", f"example:{name}",
                    "--out", str(out), *counts, "--clearance", "0.02", *EXTRA.get(name, [])]
            wall = time.perf_counter()
            run = subprocess.run(args, capture_output=True, text=True)
            wall = time.perf_counter() - wall
            if run.returncode == 0:
                meta = json.loads(out.read_text())["metadata"]
                text = (f"n={json.loads(out.read_text())['n']} cond={meta['cond'] or float('nan'):.3g} "
                        f"limits_ok={meta['limits_ok']} clearance_ok={meta['clearance']['ok']}")
            else:
                text = (run.stderr.strip().splitlines() or ["?"])[-1][:150]
            extra = " ".join(EXTRA.get(name, []))
            print(f"{name:28s} exit {run.returncode} {wall:6.1f} s  {text}" + (f"  [{extra}]" if extra else ""),
                  flush=True)


if __name__ == "__main__":
    main()
