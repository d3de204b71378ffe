"""Speed of dynid's regressor and inverse dynamics beside Pinocchio called from C++.

    .venv/bin/python bench/dynamics.py [--samples 20000] [--repeat 7] [--robots er3a,iiwa14,solo12]
                                       [--target native|avx2]

For each robot (6-DoF er3a; 7-DoF KUKA iiwa14 from shared/real, else the builtin kr500-rail;
12-DoF solo12 from example-robot-data, a branched tree of four legs on a fixed base) and the
same random states (seeded), prints in one run:

- the machine: CPU model, its SIMD flags, the target dynid's kernels are compiled for, the store
  bandwidth (one thread / all threads) and the load average, repeated beside every table;
- Pinocchio 4 `computeJointTorqueRegressor` and `rnea` in a C++ loop (bench/cpp/, built here
  with -O3 and the target's -march into a cache directory; one thread): the baseline of every
  ratio;
- `dynid.regressor(..., out=Y)` and `dynid.inverse_dynamics` on one thread and with all threads
  allowed (the count the library chose from its own measurements: dynamics/threads.py), and the
  parallel kernel forced onto all threads, to show the scaling it refused or took;
- dynid's regressor kernel with Y in cache, on one thread: the samples block by block into one
  reused Y of ``CACHE_BYTES`` (a compiled loop, as the C++ loop keeps Pinocchio's one Y in its
  Data): the same work as Pinocchio's loop, where `dynid.regressor` also writes every sample's Y
  to memory, so this row's ratio does not depend on the machine's memory (its numbers are
  checked equal to `dynid.regressor`'s);
- the write bound: bytes of Y's non-zero entries per sample over the measured store bandwidth
  (by the wall clock and by CPU time: on a shared machine the CPU figures go together), the
  floor no regressor that fills Y with ordinary stores can beat, and dynid's time over it (one
  thread, and all threads allowed); beside it the cache lines those entries touch at this Y's place
  in memory, and the line bound: those lines' bytes (64 each) per sample over the same bandwidth,
  and dynid's one-thread time over it. A store to part of a line moves the whole line, so the line
  bound is the floor for any code that leaves Y's zeros alone (dynid's streamed kernels write
  exactly those lines whole, past the caches); it is the floor the hardware allows for this Y, where
  the write bound counts only the numbers. Non-temporal stores of those lines alone, without any
  arithmetic, reach it (a little under it: non-temporal stores run about 6 % faster than the ordinary
  ones the bandwidth is measured with) in any order or grouping of the lines, as fast as contiguous
  stores of the same bytes (bench/line_order.py). How dynid.regressor
  writes this Y (streamed past the caches, its lines that hold a non-zero block written whole, or its
  non-zero blocks in place: dynamics/regressor.py) is printed too;
- "kernel alone": the compiled kernel that `dynid.regressor(..., out=Y)` runs, called directly,
  taking turns with that call (the difference is the call's own cost: checks, dispatch);
- `Y = dynid.regressor(robot, q, dq, ddq)` without `out`, on one thread, as users time it: "new Y"
  (a loop of calls, each dropping the last Y: from its second call on, a Y takes the memory of the
  one dropped, dynamics/recycled.py) and "new Y fresh" (the pool emptied before every call: memory
  new from the system, zeroed by it page by page on first touch, what a single call pays);
- agreement: max |Y_dynid - Y_pinocchio| and max |tau_dynid - tau_pinocchio| on these states.

``--target avx2`` compiles dynid's kernels and the C++ loop for an AVX2 CPU without AVX-512
(bench/machine.py): the proxy for the Intel CPUs we cannot run on. Times are the best of
--repeat passes over all samples, wall clock and CPU time of the process (the machine is
shared: the load average is printed beside every table).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402  (bench/machine.py)
import pinocchio_cpp  # noqa: E402  (bench/pinocchio_cpp.py)
from machine import best_of_both  # noqa: E402


def find_robot(name: str):
    """(robot, label): builtin names as they are; iiwa14 and solo12 from their URDFs."""
    import dynid

    if name == "iiwa14":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from shared_data import shared_path

        urdf = shared_path("real", "kuka_iiwa14", "urdf", "iiwa14.urdf")
        if urdf is not None:
            return dynid.load_robot(str(urdf)), "iiwa14 (shared/real URDF)"
        return dynid.load_robot("kr500-rail"), "kr500-rail (iiwa14 URDF not found)"
    if name == "solo12":
        urdf = pinocchio_cpp.prefix() / "share" / "example-robot-data" / "robots" / "solo_description" / "robots" / "solo12.urdf"
        return dynid.load_robot(str(urdf)), "solo12 (example-robot-data, fixed base)"
    return dynid.load_robot(name), name


CACHE_BYTES = 2**18  # Y of the in-cache row: 256 KB, held by the L2 of any x86 core of the last decade


@functools.cache
def in_cache_loop():
    """Compiled: Y of every sample of q, dq, ddq computed block by block into one reused
    y_block (B, n, 10 n), in this thread (dynid's kernel, ``regressor_range``)."""
    import numba

    regressor = importlib.import_module("dynid.dynamics.regressor")
    lanes = importlib.import_module("dynid.dynamics.lanes")
    regressor_range, block_runs = regressor.regressor_range, regressor.block_runs
    new_workspace, slots_used = lanes.new_workspace, lanes.slots_used

    @numba.njit(nogil=True)
    def loop(q, dq, ddq, constants, parents, slots, gravity, y_block):
        runs = block_runs(slots)
        ws = new_workspace(q.shape[1], slots, constants, gravity, 10 * slots_used(slots))
        in_place = np.zeros(0)  # no stage: the blocks stored in place, in cache
        b = y_block.shape[0]
        for s in range(0, q.shape[0], b):
            m = min(b, q.shape[0] - s)
            regressor_range(q[s:s + m], dq[s:s + m], ddq[s:s + m], constants, parents, slots, runs, ws, y_block, 0, m,
                            in_place)

    return loop


def cache_block(n: int) -> int:
    """Samples per block of the in-cache row: Y of CACHE_BYTES, a multiple of the lane count."""
    lanes = importlib.import_module("dynid.dynamics.lanes")
    return max(lanes.LANES, CACHE_BYTES // (8 * n * 10 * n) // lanes.LANES * lanes.LANES)


def alternated(calls, repeat: int) -> list[tuple[float, float]]:
    """(best wall seconds, best CPU seconds of this process) of each call, the calls taking turns
    ``repeat`` times: a change of the machine's load during the runs falls on all of them."""
    wall, cpu = [float("inf")] * len(calls), [float("inf")] * len(calls)
    for _ in range(repeat):
        for k, fn in enumerate(calls):
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall[k], cpu[k] = min(wall[k], time.perf_counter() - t0), min(cpu[k], time.process_time() - c0)
    return list(zip(wall, cpu))


def thread_counts(samples: dict) -> str:
    """The thread counts the library ran the timed passes on: "1", "2", or "1+2: 40 % on 2" when
    it changed its choice between segments (``samples``: thread count -> samples computed)."""
    used = {t: k for t, k in samples.items() if k > 0}
    if len(used) <= 1:
        return str(next(iter(used), 1))
    most = max(used)
    return f"{'+'.join(map(str, sorted(used)))}: {100 * used[most] / sum(used.values()):.0f} % on {most}"


def measure(robot, q, dq, ddq, y, cores: int, repeat: int) -> dict:
    """Per-sample (wall, CPU) seconds of dynid's kernels: key (kind, how) with how = 1 (one
    thread), "all" (all threads allowed, the library's choice) or "forced" (the parallel
    kernel on all threads); key (kind, "chose") the thread counts the library ran the timed passes
    with all threads allowed on (``thread_counts``)."""
    import numba

    import dynid

    threads = importlib.import_module("dynid.dynamics.threads")
    regressor = importlib.import_module("dynid.dynamics.regressor")
    recycled = importlib.import_module("dynid.dynamics.recycled")
    rnea = importlib.import_module("dynid.dynamics.rnea")
    lanes = importlib.import_module("dynid.dynamics.lanes")
    constants, parents, slots, gravity = lanes.kernel_arrays(robot)
    theta, tau = robot.parameters().reshape(-1, 10), np.empty_like(q)
    stage = regressor.stream_stage_samples(robot, y.nbytes)  # Y streamed past the caches, as dynid.regressor does
    calls = {
        "reg": (lambda: dynid.regressor(robot, q, dq, ddq, out=y),
                lambda: threads.with_threads(cores, regressor._regressor_parallel, q, dq, ddq, constants, parents,
                                             slots, gravity, y, cores, stage)),
        "id": (lambda: dynid.inverse_dynamics(robot, q, dq, ddq),
               lambda: threads.with_threads(cores, rnea._rnea_parallel, q, dq, ddq, constants, parents,
                                            np.full_like(slots, -1), gravity, theta, tau, cores)),
    }
    count, timing = q.shape[0], {}
    reg_kind, run = regressor.kernel_call(robot, q, dq, ddq, y, stage, False)  # what dynid.regressor(out=y) runs
    alone = lambda: run(1, 0, count)  # noqa: E731
    numba.set_num_threads(1)
    alone()
    both = alternated((lambda: dynid.regressor(robot, q, dq, ddq, out=y), alone), repeat)
    timing["reg", "call"], timing["reg", "kernel"] = ([t / count for t in pair] for pair in both)
    for key, (public, forced) in calls.items():  # the last call (forced, generic kernel) leaves Y for the checks
        kind = reg_kind if key == "reg" else f"inverse_dynamics/{robot.n}"
        ran = threads.scaling(kind, cores).ran  # samples per thread count, as the library ran them
        for how, allowed, fn in ((1, 1, public), ("all", cores, public), ("forced", cores, forced)):
            numba.set_num_threads(allowed)
            fn()  # compile or load, start the pool, let the library probe
            before = dict(ran)
            timing[key, how] = [t / count for t in best_of_both(fn, repeat)]
            if how == "all":
                timing[key, "chose"] = thread_counts({t: ran.get(t, 0) - before.get(t, 0) for t in ran})
    numba.set_num_threads(1)
    timing["reg", "new"] = [t / count for t in best_of_both(lambda: dynid.regressor(robot, q, dq, ddq), repeat)]

    def fresh():
        recycled._pool.clear()  # memory new from the system, as a single call gets it
        dynid.regressor(robot, q, dq, ddq)

    timing["reg", "fresh"] = [t / count for t in best_of_both(fresh, repeat)]
    block = cache_block(robot.n)
    y_block, loop = np.zeros((block, *y.shape[1:])), in_cache_loop()
    numba.set_num_threads(1)
    fn = lambda: loop(q, dq, ddq, constants, parents, slots, gravity, y_block)  # noqa: E731
    fn()
    timing["reg", "cache"] = [t / count for t in best_of_both(fn, repeat)]
    last = (count - 1) // block * block  # the block that stays in y_block
    if not np.array_equal(y_block[:count - last], y[last:]):
        raise AssertionError("the in-cache loop's Y differs from dynid.regressor's")
    timing["cache block"], timing["stage"], timing["kind"] = block, stage, reg_kind
    numba.set_num_threads(cores)
    return timing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--robots", default="er3a,iiwa14,solo12")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", choices=sorted(machine.TARGETS), default="native",
                    help="CPU to compile dynid's kernels and the C++ loop for (avx2: the Intel proxy)")
    args = ap.parse_args()
    march = machine.select_target(args.target)  # before Numba is imported
    import numba

    import dynid

    cores = numba.config.NUMBA_NUM_THREADS
    cpu, flags, target = machine.cpu_model(), machine.simd_flags(), machine.compiled_for()
    print(f"CPU: {cpu}\nSIMD flags: {flags}\ndynid kernels compiled for: {target}; Numba threads: {cores}")
    print(f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
          f"dynid {getattr(dynid, '__version__', '?')}; load average before: {machine.load()}")
    binary, how = pinocchio_cpp.build(march)
    print(f"Pinocchio C++ baseline: {how}" if binary else f"NOTE: {how}")
    bandwidth = {1: machine.store_bandwidths(1), cores: machine.store_bandwidths(cores)}  # (wall, CPU) bytes/s
    stores = (f"stores {bandwidth[1][0] / 1e9:.1f} / {bandwidth[cores][0] / 1e9:.1f} GB/s wall, "
              f"{bandwidth[1][1] / 1e9:.1f} / {bandwidth[cores][1] / 1e9:.1f} GB/s CPU time (1 / {cores} threads)")
    print(f"store bandwidth (ordinary stores filling 256 MB): {stores}")
    for name in args.robots.split(","):
        robot, label = find_robot(name)
        n, count = robot.n, args.samples
        rng = np.random.default_rng(args.seed)
        q, dq, ddq = rng.uniform(-2.0, 2.0, (3, count, n))
        y = np.zeros((count, n, 10 * n))
        load_before = machine.load()
        timing = measure(robot, q, dq, ddq, y, cores, args.repeat)
        pattern = np.flatnonzero(np.any(y != 0.0, axis=0))  # Y's non-zero entries, the same for every sample
        written = 8 * pattern.size  # bytes per sample
        # the 64-byte cache lines they touch per sample: the lines of all samples over their count (a line that two
        # samples share counted once, as it is written once)
        at = y.ctypes.data + 8 * (y[0].size * np.arange(count)[:, None] + pattern)
        lines = np.unique(at // 64).size / count
        tau = dynid.inverse_dynamics(robot, q, dq, ddq)
        pin = pinocchio_cpp.run(binary, robot, q, dq, ddq, repeats=args.repeat) if binary else None
        print(f"\n{label}: n = {n}, {count} random states (seed {args.seed}); Y: {written} bytes of non-zero entries "
              f"per sample, in {lines:.1f} of its {80 * n * n / 64:.1f} cache lines ({64 * lines:.0f} bytes)\n  [{cpu.split(' (')[0]} | {flags} | compiled for {target.split(' (')[0]} | {stores} | "
              f"load {load_before} -> {machine.load()}]")
        regressor = importlib.import_module("dynid.dynamics.regressor")
        lines_direct = timing["stage"] and regressor.generated_kernel(robot, count) is not None
        whole = (10 * n * n) % 8 == 0
        print("  dynid.regressor writes Y " + (
            "streamed by the explicit kernel (its statements as straight-line vector code, each line that holds a "
            "non-zero block transposed in registers and stored past the caches inside the next block's program; "
            "dynamics/explicit.py)" if timing["kind"].endswith("/explicit") else
            "streamed: each line that holds a non-zero block transposed from the lanes in registers, by non-temporal "
            + ("stores (its samples are whole lines: no stage; regressor.write_lines)" if whole else
               "stores, the lanes in the order of the samples' places in a line (four samples are whole lines: "
               "regressor.write_lines_phases; the samples after the last whole block of 32 staged)")
            if lines_direct else
            f"streamed: whole samples staged in L1 ({timing['stage']} samples), then "
            f"the lines that hold a non-zero block by non-temporal stores" if timing["stage"] else
            "in place: the non-zero blocks, ordinary stores"))
        print(f"{'us/sample':24} {'Pinocchio C++':>15} {'dynid 1 thread':>15} {'ratio':>12} "
              f"{f'dynid {cores} thr allowed':>21} {f'{cores} thr forced':>15} {'write bound':>13} {'dynid / bound':>14} "
              f"{'dynid / bound':>14} {'line bound':>13} {'dynid / line b.':>15}")
        print(f"{'':24} {'wall / CPU':>15} {'wall / CPU':>15} {'wall / CPU':>12} {'wall / CPU (used)':>21} "
              f"{'wall / CPU':>15} {'1 thr, w / CPU':>13} {'1 thr, w / CPU':>14} {f'{cores} thr, w / CPU':>14} "
              f"{'1 thr, w / CPU':>13} {'1 thr, w / CPU':>15}")
        for key, what, pin_key in (("reg", "regressor", "regressor_ns"), ("id", "inverse dynamics (RNEA)", "rnea_ns")):
            base = (pin[pin_key][0] * 1e-3, pin[pin_key][2] * 1e-3) if pin else (float("nan"), float("nan"))
            one, allowed, forced = ([t * 1e6 for t in timing[key, how]] for how in (1, "all", "forced"))
            if key == "reg":
                bound = {t: [written / b * 1e6 for b in bandwidth[t]] for t in (1, cores)}  # us: wall, CPU
                bound_text = f"{bound[1][0]:.3f}/{bound[1][1]:.3f}"
                over = f"{one[0] / bound[1][0]:.1f}x/{one[1] / bound[1][1]:.1f}x"
                over_all = f"{allowed[0] / bound[cores][0]:.1f}x/{allowed[1] / bound[cores][1]:.1f}x"
                line_bound = [64 * lines / b * 1e6 for b in bandwidth[1]]  # us: wall, CPU
                line_text = f"{line_bound[0]:.3f}/{line_bound[1]:.3f}"
                over_line = f"{one[0] / line_bound[0]:.1f}x/{one[1] / line_bound[1]:.1f}x"
            else:
                bound_text = over = over_all = line_text = over_line = ""
            print(f"{what:24} {base[0]:>6.3f} / {base[1]:.3f} {one[0]:>6.3f} / {one[1]:.3f} "
                  f"{base[0] / one[0]:>5.1f}x/{base[1] / one[1]:.1f}x "
                  f"{allowed[0]:>8.3f} / {allowed[1]:.3f} ({timing[key, 'chose']}) {forced[0]:>7.3f} / {forced[1]:.3f} "
                  f"{bound_text:>13} {over:>14} {over_all:>14} {line_text:>13} {over_line:>15}")
        base = (pin["regressor_ns"][0] * 1e-3, pin["regressor_ns"][2] * 1e-3) if pin else (float("nan"),) * 2
        for how, what, note in (("new", "regressor, new Y", "Y = dynid.regressor(robot, q, dq, ddq) in a loop: "
                                 "from the second call on in the memory of the Y dropped"),
                                ("fresh", "regressor, new Y fresh", "the same, the memory new from the system "
                                 "each time (zeroed by it on first touch)")):
            t = [x * 1e6 for x in timing["reg", how]]
            print(f"{what:24} {base[0]:>6.3f} / {base[1]:.3f} {t[0]:>6.3f} / {t[1]:.3f} "
                  f"{base[0] / t[0]:>5.1f}x/{base[1] / t[1]:.1f}x   ({note}; one thread)")
        call, alone = ([x * 1e6 for x in timing["reg", how]] for how in ("call", "kernel"))
        print(f"{'regressor, kernel alone':24} {base[0]:>6.3f} / {base[1]:.3f} {alone[0]:>6.3f} / {alone[1]:.3f} "
              f"{base[0] / alone[0]:>5.1f}x/{base[1] / alone[1]:.1f}x   (the kernel dynid.regressor(out=Y) runs, called "
              f"directly, taking turns with that call: {call[0]:.3f} / {call[1]:.3f}; one thread)")
        cached = [t * 1e6 for t in timing["reg", "cache"]]
        print(f"{'regressor, Y in cache':24} {base[0]:>6.3f} / {base[1]:.3f} {cached[0]:>6.3f} / {cached[1]:.3f} "
              f"{base[0] / cached[0]:>5.1f}x/{base[1] / cached[1]:.1f}x   (dynid's kernel in a compiled loop, one Y of "
              f"{timing['cache block']} samples reused: {timing['cache block'] * written // 1024} KB non-zero)")
        if pin:
            checked = pin["Y"].shape[0]
            y_err = float(np.abs(pin["Y"] - y[:checked]).max())
            tau_err = float(np.abs(pin["tau"] - tau).max())
            print(f"agreement with Pinocchio C++: max |Y diff| = {y_err:.1e} ({checked} samples), "
                  f"max |tau diff| = {tau_err:.1e} N m (all samples; max |tau| {np.abs(tau).max():.3g})")
    print(f"\nload average after: {machine.load()}; Numba threading layer: {numba.threading_layer()}")
    print("ratio = Pinocchio C++ time / dynid one-thread time (both one thread, same states; wall clock and CPU time "
          "of the best pass); 'Y in cache': dynid's kernel writing each block's Y into one reused array, as the C++ "
          "loop reuses Pinocchio's; 'allowed': all threads allowed, (used) = the thread count(s) dynid ran those "
          "passes on, chosen from its own measurements (dynamics/threads.py; '1+2: x % on 2' when it changed between "
          "segments); 'forced': the parallel kernel on all threads; write bound = bytes of Y's non-zero entries / "
          "store bandwidth (wall: bandwidth by the wall clock; CPU: by the CPU time, set beside dynid's CPU time); "
          "line bound = bytes of the cache lines holding those entries (64 per line, at this Y's place in memory) / "
          "the same one-thread bandwidth: the floor for code that writes whole lines and leaves Y's zeros alone; "
          "CPU time is the process's, summed over its threads")


if __name__ == "__main__":
    main()
