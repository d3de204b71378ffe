"""Fleet identification on Dask against the in-process streaming path, on the same files.

1. Writes a simulated fleet (``dynid fleet simulate``; default 20 robots x 10 days x 5 min at
   1 kHz = 60 M samples, 5.1 GB of Parquet, ~4 min on 2 cores) to ROOT (default /work/fleet-bench, outside
   the repository), unless ROOT already holds the same fleet (its _truth.json). Not timed.
2. In a child process each (so that peak memory is the run's own):
   - in-process: ``fleet.mapreduce.identify_in_process`` (each group's files through
     ``identify.pipeline.accumulate_sources`` with T compute threads, as ``dynid identify
     --data F1 --data F2 ...`` streams them; one solve per group), for T in --threads;
   - Dask: ``fleet.mapreduce.identify_fleet`` on a LocalCluster of K worker processes (one
     thread each), for K in --workers; the cluster's start is timed apart from the run.
   Reported: wall time, samples/s, CPU seconds (the child's own, plus the workers' for Dask)
   and CPU us/sample, peak memory (VmHWM) of the process and of each worker.
   Every configuration runs ``--rounds`` times (default 2), in ABBA order (forward, then
   backward), so that a load that rises or falls during the bench weighs on both paths alike.
3. Overhead of Dask = mean wall(K workers) / mean wall(in-process with T = K threads) - 1, and
   the same for CPU time; both paths give the same numbers (checked: max relative difference).

Usage: .venv/bin/python bench/fleet.py [--root DIR] [--robots 20 --days 10 --minutes 5 --rate 1000]
       [--workers 1 2] [--threads 1 2] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def _plan(root: str):
    from dynid.data.preprocess import Preprocessing
    from dynid.fleet.config import load_config
    from dynid.fleet.plan import Settings, make_plan
    from dynid.identify import ModelOptions

    return make_plan(root, load_config(f"{root}/fleet.yaml"), ("robot", "date"), Settings(ModelOptions(), Preprocessing()))


def _hwm_mb() -> float:
    with open("/proc/self/status") as fh:
        return next(float(line.split()[1]) / 1024.0 for line in fh if line.startswith("VmHWM"))


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _warm(plan) -> tuple:
    """Arguments of one untimed map_file call: loads the compiled kernels (Numba cache) first."""
    group = plan.todo[0]
    return group.files[0].url, group.files[0].relpath, plan.models[group.model_id]


def child_in_process(root: str, threads: int) -> dict:
    from dynid.fleet.mapreduce import identify_in_process
    from dynid.fleet.tasks import map_file

    plan = _plan(root)
    map_file(*_warm(plan))
    c0, t0 = _cpu(), time.perf_counter()
    rows = identify_in_process(plan, threads=threads)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    return {"wall": wall, "cpu": cpu, "samples": sum(r["samples"] for r in rows), "rows": _values(rows),
            "hwm_mb": _hwm_mb(), "groups": len(rows), "failed": sum(r["status"] != "ok" for r in rows)}


def child_dask(root: str, workers: int, out: str) -> dict:
    from dynid.fleet.cluster import dask_client
    from dynid.fleet.mapreduce import identify_fleet

    plan = _plan(root)
    t0 = time.perf_counter()
    with dask_client(None, workers) as client:
        started = time.perf_counter() - t0
        from dynid.fleet.tasks import map_file

        client.run(map_file, *_warm(plan))  # every worker loads the compiled kernels before the clock
        before = sum(client.run(_cpu).values())
        c0, t1 = _cpu(), time.perf_counter()
        summary = identify_fleet(client, plan, out, say=lambda _: None, checkpoint=1e9)
        wall = time.perf_counter() - t1
        worker_cpu = sum(client.run(_cpu).values()) - before
        cpu = _cpu() - c0 + worker_cpu
        memory = summary.worker_memory_mb
    return {"wall": wall, "cpu": cpu, "client_cpu": cpu - worker_cpu, "start": started,
            "samples": sum(r["samples"] for r in summary.rows), "rows": _values(summary.rows),
            "hwm_mb": _hwm_mb(), "worker_mb": memory, "groups": len(summary.rows), "failed": summary.failed,
            "tasks": summary.tasks}


def _values(rows) -> dict:
    return {f"{r['robot']}/{r['date']}": r["parameter_values"] for r in rows}


def _run_child(*args) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default="/work/fleet-bench")
    parser.add_argument("--robots", type=int, default=20)
    parser.add_argument("--days", type=int, default=10)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=2, help="runs of every configuration, in ABBA order")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, root, count = args.child[0], args.child[1], int(args.child[2])
        result = child_in_process(root, count) if kind == "in-process" else child_dask(root, count, args.child[3])
        print(json.dumps(result))
        return
    from dynid.fleet.simulate import FleetSpec

    spec = FleetSpec(args.robots, args.days, args.minutes, args.rate, temperature=False)
    root = Path(args.root)
    truth = root / "_truth.json"
    if not truth.exists() or json.loads(truth.read_text())["spec"] != json.loads(json.dumps(spec.__dict__)):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "dynid.cli.main", "fleet", "simulate", "--out", str(root),
                        "--robots", str(args.robots), "--days", str(args.days), "--minutes", str(args.minutes),
                        "--rate", str(args.rate), "--no-temperature", "--workers", "2"], check=True,
                       capture_output=True)
        print(f"simulated the fleet in {time.perf_counter() - t0:.0f} s")
    size = sum(p.stat().st_size for p in root.rglob("*.parquet")) / 1e9
    samples = args.robots * args.days * int(round(args.minutes * 60 * args.rate))
    print(f"fleet: {args.robots} robots x {args.days} days x {args.minutes:g} min at {args.rate:g} Hz = "
          f"{samples / 1e6:.1f} M samples of er3a, {size:.2f} GB Parquet in {root}")
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    configs = [("in-process", t) for t in args.threads] + [("dask", k) for k in args.workers]
    runs: dict = {c: [] for c in configs}
    for round_ in range(args.rounds):
        for kind, count in configs if round_ % 2 == 0 else configs[::-1]:  # ABBA: a load drift cancels
            load = os.getloadavg()[0]
            if kind == "in-process":
                r = _run_child("--child", "in-process", str(root), str(count))
                what = f"in-process, {count} thread(s): {r['wall']:.1f} s"
                extra = ""
            else:
                r = _run_child("--child", "dask", str(root), str(count),
                               str(root.parent / f"fleet-bench-results-{count}.parquet"))
                what = f"Dask LocalCluster, {count} worker(s): {r['wall']:.1f} s (+ {r['start']:.1f} s cluster start)"
                extra = (f"; client+scheduler {r['client_cpu']:.1f} s, {r['tasks']} tasks, peak per worker "
                         f"{max(r['worker_mb'].values()):.0f} MB, client")
            r["load"] = (load, os.getloadavg()[0])
            runs[(kind, count)].append(r)
            print(f"[round {round_ + 1}] {what}, {r['samples'] / r['wall'] / 1e6:.2f} M samples/s, CPU {r['cpu']:.1f} s "
                  f"({r['cpu'] / r['samples'] * 1e6:.2f} us/sample{extra} peak {r['hwm_mb']:.0f} MB), "
                  f"load {load:.2f} -> {r['load'][1]:.2f}", flush=True)
    mean = {c: {key: float(np.mean([r[key] for r in rs])) for key in ("wall", "cpu", "samples")} for c, rs in runs.items()}
    for k in args.workers:
        base = runs.get(("in-process", k))
        if not base:
            continue
        r, b = mean[("dask", k)], mean[("in-process", k)]
        diff = max(float(np.max(np.abs(np.subtract(d["rows"][g], i["rows"][g])) / np.max(np.abs(i["rows"][g]))))
                   for d in runs[("dask", k)] for i in base for g in i["rows"])
        print(f"overhead of Dask with {k} worker(s) against in-process with {k} thread(s), means of {args.rounds} "
              f"round(s): wall {100 * (r['wall'] / b['wall'] - 1):+.1f} % ({b['wall']:.1f} -> {r['wall']:.1f} s), "
              f"CPU {100 * (r['cpu'] / b['cpu'] - 1):+.1f} % ({b['cpu'] / b['samples'] * 1e6:.2f} -> "
              f"{r['cpu'] / r['samples'] * 1e6:.2f} us/sample); max relative parameter difference {diff:.1e}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
