"""A small LocalCluster and small simulated fleets shared by the fleet tests (module fixtures)."""

from __future__ import annotations

import shutil

from dynid.fleet.simulate import FleetSpec, simulate_fleet


def small_fleet(root, robots=3, days=2, seconds=20.0, rate=200.0, files_per_day=2, seed=3, faults=0, **kw):
    """Write a small simulated fleet to ``root`` (returns the truth)."""
    spec = FleetSpec(robots=robots, days=days, minutes=seconds / 60.0, rate=rate, seed=seed, faults=faults,
                     files_per_day=files_per_day, **kw)
    return simulate_fleet(str(root), spec, say=lambda _: None)


def copy_fleet(src, dst):
    shutil.copytree(src, dst)
    return dst


def start_cluster(workers=2):
    """(cluster, client) of ``workers`` single-threaded worker processes."""
    import logging

    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.CRITICAL)
    return cluster, Client(cluster, set_as_default=False)
