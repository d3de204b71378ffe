"""The explicit kernel (dynamics/explicit.py) against dynid's folded kernel, over fresh processes and
placements in memory: the acceptance measurement of issue 27's approach (d).

    .venv/bin/python bench/explicit_kernel.py [--robots er3a,solo12] [--processes 4] [--placements 16]
                                              [--samples 20000] [--seed 0]

Each robot runs in ``--processes`` fresh processes, one after another (never two at once). In each,
for ``--placements`` placements drawn with the seed (the process number added): Y a view at a random
8-byte offset (0 to 4 KB) into a new NumPy buffer (so its place in a cache line and in a page vary),
a random array of 0 to 64 KB allocated and kept before it (the allocator's next placements move),
and the stack frame of both kernels moved by a random 16-byte multiple below 4 KB (a dynamic alloca
in a compiled caller, as bench/explicit_vector.py does). At each placement the three kernels take
turns, each the best of ``--repeat`` calls: "main", the folded kernel as main ac27d57 ran it for
``dynid.regressor(..., out=Y)`` (``regressor_range_lines``, its workspace where Numba's allocator puts
it: 32-byte aligned, so 0 or 32 bytes into a cache line); "dynid", the folded kernel as this version
runs it (``regressor_serial``; ``lanes.new_workspace`` on a cache line; what dynid.regressor runs for an
odd n before the explicit kernel had one); "explicit", the explicit kernel (what dynid.regressor runs);
for an odd n (iiwa14) main runs the folded kernel as "dynid" does, so "main" repeats "dynid"'s times.
CPU time of one thread per sample, Y of ``--samples`` samples in memory. Printed per placement,
then per process and over all: the means, the slowest placement of each, the explicit kernel's
mean over dynid's, and the largest difference of their Y over Y's largest entry.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import machine  # noqa: E402  (bench/machine.py)


def one_process(robot_name: str, placements: int, samples: int, seed: int, repeat: int) -> dict:
    """The placements of one process: {"main": [...], "dynid": [...], "explicit": [...], "where": [...],
    "error": float, "label": str}."""
    import numba as nb
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    import dynamics as bench_dynamics  # bench/dynamics.py: the same robots
    from dynid.dynamics import lanes

    regressor = importlib.import_module("dynid.dynamics.regressor")
    robot, label = bench_dynamics.find_robot(robot_name)
    n = robot.n
    folded_kernel = regressor.generated_kernel(robot, samples, True)
    module = regressor.explicit_kernel(robot)
    constants, parents, slots, gravity = lanes.kernel_arrays(robot)
    rng = np.random.default_rng(seed)
    q, dq, ddq = rng.uniform(-2.0, 2.0, (3, samples, n))
    dynid_serial, explicit_serial = folded_kernel.regressor_serial, module.regressor_serial

    @intrinsic
    def stack_pad(typingctx, size):
        """A dynamic alloca of ``size`` bytes: the frames of the functions called after it move down."""
        def codegen(context, builder, sig, args):
            return builder.ptrtoint(builder.alloca(ir.IntType(8), size=args[0]), ir.IntType(64))

        return types.intp(size), codegen

    @nb.njit
    def dynid_padded(pad, q, dq, ddq, constants, parents, slots, gravity, y):
        where = stack_pad(pad)
        dynid_serial(q, dq, ddq, constants, parents, slots, gravity, y, 8, False)
        return where

    range_lines = folded_kernel.regressor_range_lines

    @nb.njit
    def main_padded(pad, q, dq, ddq, constants, slots, ws, y, lmap, gravity, keep):
        where = stack_pad(pad)
        range_lines(q, dq, ddq, constants, slots, ws, y, 0, q.shape[0], lmap, gravity, keep)
        return where

    @nb.njit
    def numba_zeros(size):
        return np.zeros(size)  # where Numba's allocator puts a workspace (32-byte aligned)

    @nb.njit
    def explicit_padded(pad, q, dq, ddq, constants, slots, gravity, y, plan):
        where = stack_pad(pad)
        explicit_serial(q, dq, ddq, constants, slots, gravity, y, *plan)  # (lmap, orders) or (table, counts, orders)
        return where

    shape = (samples, n, 10 * n)
    size = samples * n * 10 * n
    out = {"dynid": [], "explicit": [], "where": [], "error": 0.0, "label": label}
    if not module.PHASES:
        out["main"] = []
    used = 10 * lanes.slots_used(slots)
    workspace = lanes.new_workspace(n, slots, constants, gravity, used + 2)
    spare = np.zeros(16)
    keep = spare[(-(spare.ctypes.data // 8)) % 8:][:8]
    kept = []
    for _ in range(placements):
        kept.append(np.ones(int(rng.integers(0, 8192))))  # moves what the allocator hands out next
        offset = int(rng.integers(0, 512))
        buffer = np.zeros(size + 512)
        y = buffer[offset:offset + size].reshape(shape)
        reference = np.zeros(shape)
        pad = int(rng.integers(0, 256)) * 16
        plan = regressor.explicit_plan(robot, module, y)
        ws = numba_zeros(workspace.size)
        ws[:] = workspace
        kept.append(ws)
        calls = {"dynid": lambda: dynid_padded(pad, q, dq, ddq, constants, parents, slots, gravity, reference),
                 "explicit": lambda: explicit_padded(pad, q, dq, ddq, constants, slots, gravity, y, plan)}
        if "main" in out:
            lmap = plan[0]
            calls = {"main": lambda: main_padded(pad, q, dq, ddq, constants, slots, ws, y, lmap, gravity, keep),
                     **calls}
        for call in calls.values():
            call()
        out["error"] = max(out["error"], float(np.abs(y - reference).max() / np.abs(reference).max()))
        best = {name: float("inf") for name in calls}
        for _ in range(repeat):  # taking turns
            for name, call in calls.items():
                t0 = time.thread_time()
                call()
                best[name] = min(best[name], time.thread_time() - t0)
        for name in calls:
            out[name].append(best[name] / samples * 1e6)
        frame = explicit_padded(pad, q, dq, ddq, constants, slots, gravity, y, plan) % 4096
        out["where"].append(f"Y {y.ctypes.data % 4096} frame {frame} ws {ws.ctypes.data % 64}")
        kept.append(buffer)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--robots", default="er3a,solo12")
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--placements", type=int, default=16)
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--one", default="", help=argparse.SUPPRESS)  # a child process: robot name
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_process(args.one, args.placements, args.samples, args.seed, args.repeat)))
        return
    print(f"CPU: {machine.cpu_model()}\nSIMD flags: {machine.simd_flags()}\n"
          f"CPU us per sample of one thread, best of {args.repeat} calls, Y of {args.samples} samples in memory")
    kinds = ("main", "dynid", "explicit")
    for name in args.robots.split(","):
        every = {kind: [] for kind in kinds}
        label, error = name, 0.0
        for p in range(args.processes):
            load = machine.load()
            child = subprocess.run([sys.executable, __file__, "--one", name, "--placements", str(args.placements),
                                    "--samples", str(args.samples), "--repeat", str(args.repeat),
                                    "--seed", str(args.seed + p)], capture_output=True, text=True, check=True)
            result = json.loads(child.stdout.strip().splitlines()[-1])
            label, error = result["label"], max(error, result["error"])
            result.setdefault("main", result["dynid"])  # an odd n: main runs the folded kernel as dynid does
            print(f"{label}, process {p + 1} (load {load}):")
            for where, *times in zip(result["where"], *(result[kind] for kind in kinds)):
                print(f"  {where:>30}: " + "  ".join(f"{kind} {t:.3f}" for kind, t in zip(kinds, times)))
            for kind in kinds:
                every[kind] += result[kind]
            print("  means: " + ", ".join(f"{kind} {np.mean(result[kind]):.3f}" for kind in kinds) + "; slowest: "
                  + ", ".join(f"{kind} {np.max(result[kind]):.3f}" for kind in kinds), flush=True)
        a, b, c = (np.array(every[kind]) for kind in kinds)
        print(f"{label}, {len(a)} placements in {args.processes} processes: mean main {a.mean():.3f}, dynid "
              f"{b.mean():.3f}, explicit {c.mean():.3f} = {c.mean() / a.mean():.2f}x main's "
              f"({100 * (1 - c.mean() / a.mean()):.0f} % faster), {c.mean() / b.mean():.2f}x dynid's folded "
              f"({100 * (1 - c.mean() / b.mean()):.0f} % faster); slowest placement: main {a.max():.3f}, dynid "
              f"{b.max():.3f}, explicit {c.max():.3f}; fastest: main {a.min():.3f}, dynid {b.min():.3f}, explicit "
              f"{c.min():.3f}; largest |Y - Y of dynid| / largest |Y|: {error:.1e}; load {machine.load()}", flush=True)


if __name__ == "__main__":
    main()
