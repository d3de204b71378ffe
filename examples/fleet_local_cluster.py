"""Identify every robot-day of a fleet on a Dask LocalCluster.

    python examples/fleet_local_cluster.py [FOLDER]

A small simulated fleet (3 robots x 2 days of logs, ROOT/robot=<id>/date=<day>/*.parquet and
fleet.yaml naming each robot's model) is identified group by group: each file's normal
equations are computed where it is read, summed per group and solved with the same
``dynid.Identification`` steps as 'dynid identify', with a held-out validation per group.
FOLDER (default: temporary) receives the data set and fleet_results.parquet.
"""

import sys
import tempfile
from pathlib import Path

import dynid
from dynid.fleet.cluster import dask_client
from dynid.fleet.config import load_config
from dynid.fleet.mapreduce import identify_fleet
from dynid.fleet.plan import Settings, make_plan
from dynid.fleet.simulate import FleetSpec, simulate_fleet


def main(folder: Path) -> None:
    root, out = folder / "fleet", folder / "fleet_results.parquet"
    spec = FleetSpec(robots=3, days=2, minutes=0.25, rate=200.0, model="er3a", faults=0, seed=3)
    simulate_fleet(str(root), spec, say=lambda _: None)

    # every group is identified with these options (each with the model fleet.yaml names for its robot;
    # the fleet takes a fixed cutoff, None = min(20 Hz, fs/10), a fixed bridge and torque delay, and detects no rests)
    settings = Settings.of(dynid.Identification(spec.model, estimator="wls", lowpass=None, rest="off",
                                                     bridge_gap=0.02, tau_delay=0.0))
    plan = make_plan(str(root), load_config(str(root / "fleet.yaml")), ("robot", "date"), settings)
    with dask_client(workers=2) as client:                # a LocalCluster of 2 worker processes, stopped after
        summary = identify_fleet(client, plan, out, say=lambda _: None)

    for row in sorted(summary.rows, key=lambda r: (r["robot"], r["date"])):
        print(f"robot {row['robot']} {row['date']}: {row['status']}, {row['samples']} samples, "
              f"held-out relative error {row['validation_relative_error']:.3%} ({row['validation_kind']})")
    print(f"wrote {out}")


if __name__ == "__main__":  # the LocalCluster's worker processes import this file: run only here
    main(Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="dynid-example-")))
