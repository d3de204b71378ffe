"""The explicit vector kernel of bench/explicit_vector.py without memory traffic that nobody places:
its values kept within the 32 vector registers, those that do not fit handed on through workspace
rows the kernel chooses. A probe for issue 27, not used by dynid.

    .venv/bin/python bench/explicit_split.py [--robot er3a] [--samples 20000] [--processes 4]
                                             [--placements 16] [--split own:20:16,demand:20:16]
                                             [--arithmetic 0]

bench/explicit_vector.py (approach (d)) compiles the generated kernel's statements into one
straight-line LLVM function on ``<8 x double>`` values with the previous block's lines (non-temporal
stores) spread through it. Its er3a program keeps up to 62 values live at once, so LLVM's register
allocator spills: a few hundred loads and stores of 64 bytes per eight lanes to the function's stack
frame, at addresses that depend on where the frame lies, while the lines are pending. Here the same
program is first made canonical (a negation is a sign carried to its uses, a repeated operation is
computed once: exact, as IEEE negation commutes with rounding), then optionally scheduled to shorten
its live ranges (demand order: each block row's store preceded by what it needs, depth first),
then given registers: walking the program with at most R values live (and at most L where a line
of the previous block goes, whose eight rows and transposes need the rest; ``--split`` names them), the value used furthest ahead leaves its register when a new one needs it (Belady); it is
stored into a spill row of the workspace (none if a row already holds it: an input row or a block row
the line map reads), and loaded back before its next use, behind a compiler barrier (so that LLVM
neither forwards the stored value nor moves loads and stores across). The spill rows are rows of the
workspace after its own, reused once a value is dead; the lines go where the fewest values are live
in each stretch of the program. The compiled function's stack accesses are counted in its assembly.

Printed: the programs' sizes, stack accesses, spills and reloads; each variant's Y against dynid's
(largest difference over Y's largest entry); then, in ``--processes`` fresh processes one after the
other, ``--placements`` placements each (the explicit kernels' stack frame moved by a dynamic alloca
of 0-4032 bytes, the two workspaces and Y at seeded random offsets mod 4096, multiples of 64 bytes;
Y 16 bytes into a line as NumPy puts it), dynid's folded kernel (``regressor_serial``), dynid's
explicit kernel where this version has one ("dynid explicit", dynamics/explicit.py), (d) as it is
and the split variants (``--realign 1``: their frames realigned to 64 bytes) taking turns in each placement (``--rounds`` rounds, the order rotating with the
placement and reversed every other round), CPU time of one thread per sample, the best of
``--calls`` calls in each round and of the rounds; and the mean, median and worst of each over all
placements. ``--lanes-in-program 1`` adds each split program with the block's lanes loaded inside it
(q, dq, ddq read into registers, sines and cosines computed there: ``explicit_vector.group_program``'s
``inputs``), no ``load_lanes``. ``--lanes-once 1`` adds each split program with each workspace's lanes loaded for its first
block only: the kernel as if its former lane load (bench/line_order.py's ``load_lanes``) cost nothing
(docs/performance.md: it does not overlap the line stores; its Y is wrong, not checked). For a robot with an even n (as explicit_vector.py).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import explicit_vector as ev  # noqa: E402  (bench/explicit_vector.py: the program and its compiler)
import machine  # noqa: E402


def operands(op) -> tuple:
    """The names an operation reads."""
    return (op[2],) if op[0] == "store" else op[2:] if op[0] not in ("load", "line", "barrier") else ()


def canonical(program) -> list:
    """``program`` (explicit_vector.program_of's statements) with each negation carried as a sign to
    where the value is used (-a * b is -(a b); a + -b is a - b; a negated value is stored as one
    negation) and each operation on the same operands computed once (a * b == b * a). Exact: IEEE
    negation commutes with rounding to nearest."""
    out, base, sign, seen = [], {}, {}, {}

    def of(code):
        return base.get(code, code), sign.get(code, 1)

    def once(key, name):
        if key not in seen:
            seen[key] = name
            out.append((key[0], name, *key[1:]))
        return seen[key]

    for op in program:
        if op[0] == "load":
            base[op[1]], sign[op[1]] = once(("load", op[2]), op[1]), 1
        elif op[0] == "neg":
            b, s = of(op[2])
            base[op[1]], sign[op[1]] = b, -s
        elif op[0] == "*":
            (a, sa), (b, sb) = of(op[2]), of(op[3])
            base[op[1]], sign[op[1]] = once(("*", *sorted((a, b))), op[1]), sa * sb
        elif op[0] in ("+", "-"):
            (a, sa), (b, sb) = of(op[2]), of(op[3])
            sb = -sb if op[0] == "-" else sb
            key, s = (("+", *sorted((a, b))), sa) if sa == sb else (("-", a, b), 1) if sa > 0 else (("-", b, a), 1)
            base[op[1]], sign[op[1]] = once(key, op[1]), s
        elif op[0] == "store":
            b, s = of(op[2])
            out.append(("store", op[1], b if s > 0 else once(("neg", b), f"{b}_neg")))
        else:
            raise ValueError(f"a statement this probe does not know: {op!r}")
    return out


def uses_of(program) -> dict:
    """{value: the positions of the statements that read it, in order} (constants left out)."""
    defined = {op[1] for op in program if op[0] not in ("store", "line", "barrier")}
    uses = defaultdict(list)
    for i, op in enumerate(program):
        for a in dict.fromkeys(operands(op)):
            if a in defined:
                uses[a].append(i)
    return uses


def live_counts(program) -> np.ndarray:
    """The number of values live after each statement (defined, read later), with unlimited registers."""
    uses, live = uses_of(program), np.zeros(len(program), int)
    for i, op in enumerate(program):
        if op[0] not in ("store", "line", "barrier") and uses.get(op[1]):
            live[i:uses[op[1]][-1]] += 1
    return live


def schedule(program) -> list:
    """The program in demand order: each store of a block row in the program's order, preceded by the
    statements it needs that are not computed yet, depth first, the operand that needs more registers
    first (Sethi and Ullman's numbering, counted as if no value were shared), so that a value is
    computed shortly before it is used. (A greedy list schedule, the ready statement that ends the
    most live values first, kept 96 values live for er3a where the program's own order keeps 64.)"""
    producer = {op[1]: i for i, op in enumerate(program) if op[0] != "store"}
    need = {}
    for op in program:
        if op[0] != "store":
            n = sorted((need[a] for a in operands(op) if a in producer), reverse=True) + [0, 0]
            need[op[1]] = max(1, n[0] + (n[0] == n[1]))
    done, order = set(), []
    for root in [i for i, op in enumerate(program) if op[0] == "store"] + list(range(len(program))):
        stack = [(root, False)]
        while stack:
            i, ready = stack.pop()
            if i in done:
                continue
            if ready:
                done.add(i)
                order.append(program[i])
                continue
            stack.append((i, True))
            first = sorted((a for a in dict.fromkeys(operands(program[i])) if a in producer), key=lambda a: -need[a])
            stack.extend((producer[a], False) for a in reversed(first))
    return order


def line_places(program, lines: int, where: str = "live") -> list:
    """Where each of ``lines`` lines goes: in each of ``lines`` equal stretches of the program's
    operations, after the statement with the fewest live values (``where`` "live") or in the middle
    ("even", as explicit_vector.py spreads them)."""
    live = live_counts(program)
    arithmetic = [i for i, op in enumerate(program) if op[0] not in ("load", "store")]
    places = []
    for line in range(lines):
        stretch = arithmetic[line * len(arithmetic) // lines:(line + 1) * len(arithmetic) // lines]
        middle = stretch[len(stretch) // 2]
        places.append(middle if where == "even" else min(stretch, key=lambda i: (live[i], abs(i - middle))))
    return places


def allocate(program, registers: int, line_registers: int, lines: int, first_spill: int, where="live") -> tuple:
    """The program with at most ``registers`` values live (``line_registers`` where a line goes) and
    the lines placed, as ("line",) statements: (statements, spill stores, reloads, spill rows used).
    A value evicted goes to the row that holds it already (an input row or a block row that no
    statement writes again) or to a spill row from ``first_spill`` on; it comes back by a load behind
    a ("barrier",)."""
    uses = uses_of(program)
    places = set(line_places(program, lines, where))
    stored = defaultdict(int)
    for op in program:
        stored[op[1]] += op[0] == "store"
    home, name, in_register = {}, {}, set()
    free, spill_row, rows_used = [], {}, 0
    out, spills, reloads = [], 0, 0

    def next_use(a, i):
        u = uses[a]
        lo, hi = 0, len(u)
        while lo < hi:
            mid = (lo + hi) // 2
            if u[mid] < i:
                lo = mid + 1
            else:
                hi = mid
        return u[lo] if lo < len(u) else None

    def evict(i, limit, protect):
        nonlocal rows_used, spills
        while len(in_register) > limit:
            v = max((a for a in in_register if a not in protect), key=lambda a: (next_use(a, i), a in home))
            in_register.remove(v)
            if v not in home:
                if not free:
                    free.append(first_spill + rows_used)
                    rows_used += 1
                home[v] = spill_row[v] = free.pop()
                out.append(("store", home[v], name[v]))
                spills += 1

    for i, op in enumerate(program):
        read = [a for a in dict.fromkeys(operands(op)) if a in uses]
        missing = [a for a in read if a not in in_register]
        if missing:
            evict(i, registers - len(missing), set(read))
            out.append(("barrier",))
            for a in missing:
                name[a] = f"{a}_{i}"
                out.append(("load", name[a], home[a]))
                in_register.add(a)
                reloads += 1
        dying = [a for a in read if next_use(a, i + 1) is None]
        defines = op[0] != "store" and bool(uses.get(op[1]))
        if defines:  # room for the result before it is computed (it may take a dying operand's register)
            evict(i, registers - 1 + len(dying), set(read))
        if op[0] == "store":
            out.append(("store", op[1], name.get(op[2], op[2])))
            if op[2] in uses and stored[op[1]] == 1:  # a row written once holds the value from here on
                home.setdefault(op[2], op[1])
        else:
            out.append((op[0], op[1], *(name.get(a, a) for a in op[2:])) if op[0] != "load" else op)
            name[op[1]] = op[1]
            if op[0] == "load" and not stored[op[2]]:
                home[op[1]] = op[2]
        for a in dying:
            in_register.discard(a)
            if a in spill_row:
                free.append(spill_row.pop(a))
        if defines:
            in_register.add(op[1])
        if i in places:
            evict(i + 1, line_registers, set())
            out.append(("line",))
    return out, spills, reloads, rows_used


def stack_accesses(dispatcher) -> tuple:
    """(vector loads and stores addressing the stack, all instructions addressing the stack, non-temporal
    stores) in the assembly of a compiled function (not its Python wrapper)."""
    text = dispatcher.inspect_asm(dispatcher.signatures[0]).split("@function")[1]  # the function, not its wrappers
    stack = [line for line in text.splitlines() if re.search(r"\((%rsp|%rbp)\)", line)]
    return (sum(bool(re.search(r"%[yz]mm", line)) for line in stack), len(stack),
            len(re.findall(r"vmovntp[sd]", text)))


def group_asm(program, names, lmap, row: int) -> tuple:
    """stack_accesses of one call of the interleaved group program (eight lanes, the lines between)."""
    import numba as nb

    run = ev.group_program(program, names, lmap.shape[0], row)

    @nb.njit
    def one(ws, kv, wsp, y, lmap, base, stride):
        run(ws, kv, 0, wsp, y, lmap, base, stride)

    f8 = nb.float64[::1]
    one.compile((f8, f8, f8, f8, nb.typeof(lmap), nb.int64, nb.int64))
    return stack_accesses(one)


def setup(robot_name: str, samples: int):
    """The robot, its kernel, the inputs, dynid's Y, the workspace template and the programs."""
    import dynamics as bench_dynamics  # bench/dynamics.py: the same robots

    from dynid.dynamics import folded, lanes

    robot, label = bench_dynamics.find_robot(robot_name)
    if (10 * robot.n ** 2) % 8:
        raise SystemExit(f"error: {label}: a sample of Y is not whole cache lines (odd n = {robot.n}); this "
                         "probe takes an even n")
    kernel = folded.kernel_for(robot)
    constants, parents, slots, gravity = lanes.kernel_arrays(robot)
    loops, prologue = ev.joint_loops(folded.source(robot)[0])
    scratch = lanes.scratch_row(robot.n, slots)
    used = 10 * lanes.slots_used(slots)
    keep = set(range(scratch, scratch + used + 1)) | {int(a) for a in kernel.ALIAS if a >= 0}
    count = samples // lanes.LANES * lanes.LANES
    q, dq, ddq = np.random.default_rng(0).uniform(-2.0, 2.0, (3, count, robot.n))
    template = lanes.new_workspace(robot.n, slots, constants, gravity, used + 1)
    return dict(robot=robot, label=label, kernel=kernel, constants=constants, parents=parents, slots=slots,
                gravity=gravity, names=sorted(prologue), program=ev.program_of(loops, lanes.LANES, keep),
                q=q, dq=dq, ddq=ddq, count=count, template=template, zero=scratch + used)


def variants(s, split: str, lines: int) -> dict:
    """{name: (program, spill stores, reloads, spill rows)}: (d)'s program and the split ones that
    ``split`` names ("order:registers:line registers[:where the lines go]", comma-separated; order
    "own" or "demand", where "live" or "even")."""
    from dynid.dynamics import lanes

    first = s["template"].size // lanes.LANES
    own = canonical(s["program"])
    programs = {"own": own, "demand": schedule(own)}
    out = {"(d)": (s["program"], 0, 0, 0)}
    for spec in split.split(","):
        order, registers, line_registers, *where = spec.split(":")
        label = f"{order} {registers}/{line_registers}" + "".join(f" {w}" for w in where if w != "live")
        out[label] = allocate(programs[order], int(registers), int(line_registers), lines, first, *where)
    return out


def measure(args) -> None:
    """One process: compile, check Y, time the kernels over seeded placements; JSON lines out."""
    from dynid.dynamics import lanes
    from dynid.dynamics.regressor import line_map

    s = setup(args.robot, args.samples)
    LANES, count, row = lanes.LANES, s["count"], args.row
    q, dq, ddq, kernel = s["q"], s["dq"], s["ddq"], s["kernel"]
    shape = (count, s["robot"].n, 10 * s["robot"].n)
    size = count * shape[1] * shape[2]
    y_buffer = np.zeros(size + 1024)
    y_at = (-(y_buffer.ctypes.data // 8)) % 8 + 2  # 16 bytes into a line, as NumPy puts a large array
    lmap = line_map(s["slots"], (8 - (y_at + y_buffer.ctypes.data // 8) % 8) % 8, s["zero"], False, kernel.ALIAS)
    lmap[:, :8] = lmap[:, :8] // LANES * row + lmap[:, :8] % LANES  # rows ``row`` numbers apart
    lmap3 = lmap.copy()
    if lmap[-1, 8] + 8 > 10 * s["robot"].n ** 2:
        lmap3[-1] = lmap[0]
    keep = np.zeros(8)
    found = variants(s, args.split, lmap.shape[0])
    spill_rows = max(v[3] for v in found.values())
    rows = s["template"].size // LANES
    ws_size = (rows + spill_rows) * row
    ws_buffer = np.zeros(2 * (ws_size + 1024) + 1024)
    calls, alone = {}, {}
    for label, (program, *_) in found.items():
        align = 64 * args.realign * (label != "(d)")  # (d) as it is
        explicit, arithmetic, _, padded, kv, _ = ev.kernels(s["robot"], kernel, lmap, lmap3, row, program, align)
        calls[label] = (explicit, padded, kv)
        if args.arithmetic:
            alone[f"{label}, arithmetic"] = (arithmetic, kv)
    if args.lanes_once:  # each split program as if loading the lanes cost nothing (Y not checked)
        for label, (program, *_) in found.items():
            if label != "(d)":
                explicit, _, _, padded, kv, _ = ev.kernels(s["robot"], kernel, lmap, lmap3, row, program,
                                                           64 * args.realign, lanes_once=True)
                calls[f"{label}, lanes once"] = (explicit, padded, kv)
    for how in (1, 2) if args.lanes_in_program == 3 else (args.lanes_in_program,) if args.lanes_in_program else ():
        for label, (program, *_) in found.items():  # each program loading its lanes in registers; (d)'s with
            explicit, arithmetic, _, padded, kv, _ = ev.kernels(  # its frame realigned, as dynid's explicit kernel
                s["robot"], kernel, lmap, lmap3, row, program, 64 if label == "(d)" else 64 * args.realign,
                lanes_in_program=how)
            name = f"{label}{' realigned' * (label == '(d)')}, in program {how}"
            calls[name] = (explicit, padded, kv)
            if args.arithmetic:
                alone[f"{name}, arithmetic"] = (arithmetic, kv)
    if args.arithmetic:  # the lines alone: each block's lanes loaded, the previous block's lines written
        explicit, _, _, padded, kv, _ = ev.kernels(s["robot"], kernel, lmap, lmap3, row, [("line",)] * lmap.shape[0])
        calls["lines alone"] = (explicit, padded, kv)

    def dynid(y):
        kernel.regressor_serial(q, dq, ddq, s["constants"], s["parents"], s["slots"], s["gravity"], y, 8, False)

    regressor = importlib.import_module("dynid.dynamics.regressor")
    module = regressor.explicit_kernel(s["robot"]) if hasattr(regressor, "explicit_kernel") else None

    def dynid_explicit(y):  # dynid's explicit kernel (dynamics/explicit.py), where this version of dynid has one
        plan, orders = regressor.explicit_plan(s["robot"], module, y)
        module.regressor_serial(q, dq, ddq, s["constants"], s["slots"], s["gravity"], y, plan, orders)

    def place(rng):
        """(Y, ws0, ws1, pad) at seeded offsets (multiples of 64 bytes) mod 4096."""
        a = y_at + 8 * int(rng.integers(64))
        y = y_buffer[a:a + size].reshape(shape)
        base = (-(ws_buffer.ctypes.data // 8)) % 512
        w0 = base + 8 * int(rng.integers(64))
        w1 = base + (ws_size + 1023) // 512 * 512 + 8 * int(rng.integers(64))
        ws0, ws1 = ws_buffer[w0:w0 + ws_size], ws_buffer[w1:w1 + ws_size]
        for w in (ws0, ws1):
            w[:] = 0.0
            w[:rows * row].reshape(rows, row)[:, :LANES] = s["template"].reshape(rows, LANES)
        return y, ws0, ws1, 64 * int(rng.integers(64))

    rng = np.random.default_rng(args.seed)
    y, ws0, ws1, pad = place(rng)
    dynid(y)
    reference = y.copy()
    largest = np.abs(reference).max()
    for label, (explicit, padded, kv) in list(calls.items()) + [("dynid explicit", (None, None, None))] * bool(module):
        if label == "lines alone" or label.endswith("lanes once"):
            continue
        y[:] = 0.0
        dynid_explicit(y) if label == "dynid explicit" else padded(q, dq, ddq, ws0, ws1, kv, y, lmap, lmap3, pad, keep)
        print(json.dumps({"check": label, "difference": float(np.abs(y - reference).max() / largest),
                          "equal": bool(np.array_equal(y, reference))}), flush=True)
    names = ["dynid"] + ["dynid explicit"] * bool(module) + list(calls) + list(alone)
    for p in range(args.placements):
        y, ws0, ws1, pad = place(rng)
        where = {"y": y.ctypes.data % 4096, "ws0": ws0.ctypes.data % 4096, "ws1": ws1.ctypes.data % 4096}
        times = dict.fromkeys(names, np.inf)
        for turn in range(args.rounds):  # the order rotates with the placement and reverses each round
            order = names[p % len(names):] + names[:p % len(names)]
            for label in order[::-1] if turn % 2 else order:
                if label == "dynid":
                    t = ev.cpu_best(lambda: dynid(y), args.calls)
                elif label == "dynid explicit":
                    t = ev.cpu_best(lambda: dynid_explicit(y), args.calls)
                elif label in alone:  # the lanes loaded, the program run on each group, no line written
                    arithmetic, kv = alone[label]
                    t = ev.cpu_best(lambda: arithmetic(q, dq, ddq, ws0, kv, y, lmap), args.calls)
                else:
                    explicit, padded, kv = calls[label]
                    where["frame"] = padded(q, dq, ddq, ws0, ws1, kv, y, lmap, lmap3, pad, keep) % 4096
                    t = ev.cpu_best(lambda: padded(q, dq, ddq, ws0, ws1, kv, y, lmap, lmap3, pad, keep), args.calls)
                times[label] = min(times[label], t / count * 1e6)
        print(json.dumps({"placement": p, "where": where, "us": times, "load": machine.load().split()[0],
                          "time": time.strftime("%H:%M:%S", time.gmtime())}), flush=True)


def report(args) -> None:
    """The programs' figures, then --processes fresh processes of measure(), one after the other."""
    from dynid.dynamics.regressor import line_map

    s = setup(args.robot, args.samples)
    lmap = line_map(s["slots"], 6, s["zero"], False, s["kernel"].ALIAS)  # Y 16 bytes into a line
    lines = lmap.shape[0]
    print(f"CPU: {machine.cpu_model()}\nSIMD flags: {machine.simd_flags()}\n{s['label']}: {s['count']} samples; "
          f"{lines} lines per sample; split programs (order:registers:where a line goes) {args.split}; "
          f"{time.strftime('%H:%M', time.gmtime())} UTC, load {machine.load()}")
    print(f"{'program':>18} {'statements':>10} {'most live':>9} {'spills':>6} {'reloads':>7} {'spill rows':>10} "
          f"{'stack (vector)':>14} {'stack (all)':>11} {'NT stores':>9}")
    for label, (program, spills, reloads, rows) in variants(s, args.split, lines).items():
        vector, every, nt = group_asm(program, s["names"], lmap, 32)
        body = [op for op in program if op[0] not in ("line", "barrier")]
        print(f"{label:>18} {len(body):10d} {live_counts(body).max():9d} {spills:6d} {reloads:7d} {rows:10d} "
              f"{vector:14d} {every:11d} {nt:9d}", flush=True)
    if not args.processes:
        return
    rows = defaultdict(list)
    for process in range(args.processes):
        command = [sys.executable, __file__, "--measure", "--seed", str(1000 + process)] + [
            f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items()
            if k in ("robot", "samples", "placements", "split", "calls", "rounds", "arithmetic", "row", "realign",
                     "lanes_once", "lanes_in_program")]
        started = time.time()
        result = subprocess.run(command, capture_output=True, text=True, env=os.environ)
        if result.returncode:
            raise SystemExit(f"error: process {process} failed:\n{result.stderr}")
        records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        checks = [r for r in records if "check" in r]
        placed = [r for r in records if "placement" in r]
        print(f"process {process} (seed {1000 + process}, {time.time() - started:.0f} s, "
              f"{placed[0]['time']}-{placed[-1]['time']} UTC, load {placed[0]['load']}-{placed[-1]['load']}): "
              + "; ".join(f"{c['check']}: Y within {c['difference']:.1e}" for c in checks), flush=True)
        names = list(placed[0]["us"])
        if process == 0:
            print("  " + " ".join(f"{n:>17}" for n in names) + "   where (mod 4096: Y, ws0, ws1, frame)")
        for r in placed:
            for n in names:
                rows[n].append(r["us"][n])
            print("  " + " ".join(f"{r['us'][n]:17.3f}" for n in names)
                  + f"   {r['where']['y']} {r['where']['ws0']} {r['where']['ws1']} {r['where'].get('frame')}")
    worst_dynid = max(rows["dynid"])
    print(f"{s['label']}: CPU us per sample of one thread over {len(rows['dynid'])} placements "
          f"({args.processes} processes); load {machine.load()}")
    for n, values in rows.items():
        mean = statistics.mean(values)
        print(f"  {n:>17}: mean {mean:.3f} median {statistics.median(values):.3f} worst {max(values):.3f} best "
              f"{min(values):.3f}; mean {statistics.mean(rows['dynid']) / mean - 1:+.0%} faster than dynid's; "
              f"{sum(v > worst_dynid for v in values)} placements slower than dynid's worst")
    for n in [n for n in rows if n not in ("dynid", "dynid explicit", "(d)", "lines alone")
              and not n.endswith(("arithmetic", "lanes once"))]:
        met = statistics.mean(rows["dynid"]) >= 1.1 * statistics.mean(rows[n]) and max(rows[n]) <= worst_dynid
        print(f"  {n}: mean >= 10 % faster than dynid's and no placement slower than dynid's worst: "
              f"{'MET' if met else 'not met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--robot", default="er3a")
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--placements", type=int, default=16)
    ap.add_argument("--calls", type=int, default=5, help="calls per timing, the best taken")
    ap.add_argument("--rounds", type=int, default=2,
                    help="rounds of the kernels taking turns per placement (the best of each kept)")
    ap.add_argument("--split", default="own:20:16,demand:20:16",
                    help="the split programs, comma-separated: order (own or demand):values live at most:"
                         "values live at most where a line goes[:live or even: the lines after the statement "
                         "with the fewest live values in their stretch, or in its middle]")
    ap.add_argument("--arithmetic", type=int, default=0,
                    help="1: time the explicit kernels' arithmetic alone too (no line written), and the lines "
                         "alone (each block's lanes loaded, no arithmetic)")
    ap.add_argument("--row", type=int, default=32,
                    help="numbers from one workspace row to the next (32: dynid's; 40 spreads the rows of eight "
                         "lanes over every set of the L1 cache, as in explicit_vector.py)")
    ap.add_argument("--realign", type=int, default=0,
                    help="1: the split kernels' stack frame realigned to 64 bytes (explicit_vector.py's --realign, "
                         "as dynamics/explicit.py does), so that what is left on it lies on whole lines")
    ap.add_argument("--lanes-once", type=int, default=0,
                    help="1: time each split program also with each workspace's lanes loaded for its first block "
                         "only (the kernel as if its former lane load, bench/line_order.py's load_lanes, cost "
                         "nothing; its Y is not checked)")
    ap.add_argument("--lanes-in-program", type=int, default=0,
                    help="1: time each split program also with its lanes loaded in its registers (q, dq, ddq read "
                         "in the program, sines and cosines computed there once per joint; no load_lanes, no lane row "
                         "stored but those the line map reads); its Y is checked; 2: the sines and cosines computed "
                         "at every load of their rows; 3: both")
    ap.add_argument("--measure", action="store_true", help="(internal) one process's measurements as JSON")
    ap.add_argument("--seed", type=int, default=1000)
    args = ap.parse_args()
    (measure if args.measure else report)(args)


if __name__ == "__main__":
    main()
