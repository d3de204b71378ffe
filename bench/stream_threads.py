"""Where the streaming identification's CPU goes, stage by stage and thread by thread.

Runs ``accumulate_file`` (er3a, full rate, default preprocessing) on a Parquet log written by
``bench/identify_stream.py --log PATH`` and prints, per sample read:

- the main thread: its CPU time, the part spent producing prepared chunks (read, plausibility
  checks, filter, differences) and its idle wait for the workers;
- the workers: CPU time in ``add_samples`` and the parts inside the compiled regressor rows and
  ``gram_block`` (the rest is Python and NumPy glue: own columns, masks, copies);
- every thread of the process from /proc/self/task/*/stat (utime + stime; the pool's threads
  are read just before it shuts down), so threads nobody accounts for (Parquet decoding,
  BLAS or Numba pools waiting actively) show up;
- the reader's stages alone (no workers): plausibility checks, filtering, first pass...

Usage: .venv/bin/python bench/stream_threads.py LOG.parquet [--chunk-rows 50000]
Measuring wraps the functions it times (a few microseconds per chunk or block).
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

CLOCK = os.sysconf("SC_CLK_TCK")


def threads() -> dict[int, tuple[str, float, float]]:
    """{thread id: (name, user s, system s)} of this process."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = open(f"/proc/self/task/{tid}/stat").read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(tid)] = (stat[stat.index("(") + 1:stat.rindex(")")], int(fields[11]) / CLOCK, int(fields[12]) / CLOCK)
    return out


def timed(sums: dict, key: str, lock: threading.Lock, function):
    """``function`` adding its calls' thread CPU time to sums[key]."""
    def call(*args, **kwargs):
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            with lock:
                sums[key] = sums.get(key, 0.0) + time.thread_time() - start
    return call


def timed_iterator(sums: dict, key: str, function):
    """``function`` (a generator function) whose items' production time goes to sums[key]."""
    def call(*args, **kwargs):
        items = function(*args, **kwargs)
        while True:
            start = time.thread_time()
            item = next(items, None)
            sums[key] = sums.get(key, 0.0) + time.thread_time() - start
            if item is None:
                return
            yield item
    return call


def pipeline(path: str, chunk_rows: int) -> None:
    import dynid
    import dynid.identify.gram as gram
    import dynid.identify.pipeline as pl
    from dynid.identify import ModelOptions, base_parameters

    robot = dynid.load_robot("er3a")
    options = ModelOptions()
    base = base_parameters(robot, options)
    sums, lock, seen = {}, threading.Lock(), {}
    pl.add_samples = timed(sums, "workers: add_samples", lock, pl.add_samples)
    gram.regressor_rows_serial = timed(sums, "workers: compiled regressor rows", lock, gram.regressor_rows_serial)
    gram.gram_block = timed(sums, "workers: compiled gram_block", lock, gram.gram_block)
    pl.with_edges = timed_iterator(sums, "main: prepared chunks", pl.with_edges)
    wait = pl._Workers.wait

    def waiting(self):
        start = time.perf_counter()
        wait(self)
        sums["main: idle waiting for the workers (wall)"] = sums.get("main: idle waiting for the workers (wall)", 0.0) \
            + time.perf_counter() - start
    pl._Workers.wait = waiting

    class Pool(ThreadPoolExecutor):
        def shutdown(self, *args, **kwargs):
            seen.update(threads())
            return super().shutdown(*args, **kwargs)
    pl.ThreadPoolExecutor = Pool
    import dynid.data.stream as stream

    dynid.regressor(robot, np.zeros((2, 6)), np.zeros((2, 6)), np.zeros((2, 6)))  # load compiled kernels
    stream._TIMINGS.clear()  # the first pass over the time column is part of the run
    before = threads()
    wall, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
    acc = pl.accumulate_file(robot, path, options, base, chunk_rows=chunk_rows)
    wall, cpu, main = time.perf_counter() - wall, time.process_time() - cpu, time.thread_time() - main
    after = dict(seen)
    after.update(threads())
    per = 1e6 / acc.samples
    print(f"accumulate_file, {acc.samples} samples: wall {wall * per:.3f} us/sample, process CPU {cpu * per:.3f}, "
          f"main thread CPU {main * per:.3f} (load {os.getloadavg()[0]:.2f})")
    for key in sorted(sums):
        print(f"  {key:45s} {sums[key] * per:.3f} us/sample")
    print("  threads (CPU us/sample: user + system):")
    for tid, (name, user, system) in sorted(after.items()):
        u0, s0 = before.get(tid, (name, 0.0, 0.0))[1:]
        total = user - u0 + system - s0
        if total > 0:
            print(f"    {tid:8d} {name:16s} {total * per:.3f} ({(user - u0) * per:.3f} + {(system - s0) * per:.3f})"
                  f"{'' if tid in before else '  (started by the run)'}")


def reader(path: str, chunk_rows: int) -> None:
    import dynid
    import dynid.data.plausibility as plausibility
    import dynid.data.stream as stream
    from dynid.data.preprocess import Preprocessing
    from dynid.data.timing import STEP_SAMPLES
    from dynid.identify import ModelOptions
    from dynid.identify.model import own_columns

    robot, options, prep = dynid.load_robot("er3a"), ModelOptions(), Preprocessing()
    columns = own_columns(robot, options)
    sums, lock = {}, threading.Lock()
    plausibility.LogChecks.update = timed(sums, "plausibility checks (LogChecks.update)", lock,
                                          plausibility.LogChecks.update)
    stream.prepare_segment = timed(sums, "filter + differences (prepare_segment)", lock, stream.prepare_segment)
    stream.map_columns = timed(sums, "columns (map_columns)", lock, stream.map_columns)
    stream.clean_rows = timed(sums, "cleaning (clean_rows)", lock, stream.clean_rows)
    stream._first_pass = timed(sums, "first pass over the time column", lock, stream._first_pass)
    for rows in (STEP_SAMPLES + 1, None):  # a first short pass imports and loads what the reader uses
        sums.clear()
        stream._TIMINGS.clear()
        start, cpu, count = time.thread_time(), time.process_time(), 0
        for chunk, _, _ in stream.with_edges(stream.prepared_chunks(path, robot, prep=prep, chunk_rows=chunk_rows,
                                                                    joint_columns=columns), prep):
            count += len(chunk)
            if rows and count >= rows:
                break
    per = 1e6 / count
    print(f"reader alone (no workers): main thread {(time.thread_time() - start) * per:.3f} CPU us/sample, "
          f"process {(time.process_time() - cpu) * per:.3f} (Parquet decoding runs in Arrow's threads)")
    for key in sorted(sums, key=lambda k: -sums[k]):
        print(f"  {key:45s} {sums[key] * per:.3f} us/sample")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log")
    parser.add_argument("--chunk-rows", type=int, default=50_000)
    args = parser.parse_args()
    reader(args.log, args.chunk_rows)
    pipeline(args.log, args.chunk_rows)


if __name__ == "__main__":
    main()
