"""bench/explicit_split.py's program transformations keep what the program stores: made canonical
(negations as signs, repeated operations once), put in demand order and given at most R registers
(values evicted to rows and loaded back), a random straight-line program stores the same numbers in
the same rows, never holds more than R values live, and no more than the line's limit where a line
goes. (The probe's timings are in docs/performance.md; this checks its bookkeeping, not its speed.)"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
import explicit_split as es  # noqa: E402


def random_program(rng, inputs=12, statements=400, rows=60):
    """Statements of explicit_vector.program_of's kinds over ``inputs`` loaded rows and a constant."""
    program = [("load", f"in{r}", r) for r in range(inputs)]
    values = [f"in{r}" for r in range(inputs)] + ["k0"]
    for i in range(statements):
        if rng.random() < 0.15:
            program.append(("neg", f"x{i}", values[rng.integers(len(values))]))
        else:
            a, b = (values[j] for j in rng.integers(len(values), size=2))
            program.append((str(rng.choice(["*", "+", "-"])), f"x{i}", a, b))
        values.append(f"x{i}")
        if rng.random() < 0.3:
            program.append(("store", int(100 + rng.integers(rows)), values[-1 - rng.integers(min(20, len(values)))]))
    return program


def run(program, inputs):
    """The rows a program leaves, its statements interpreted on numbers."""
    rows, values = dict(inputs), {"k0": 0.7}
    for op in program:
        if op[0] == "load":
            values[op[1]] = rows[op[2]]
        elif op[0] == "store":
            rows[op[1]] = values[op[2]]
        elif op[0] == "neg":
            values[op[1]] = -values[op[2]]
        elif op[0] in ("*", "+", "-"):
            a, b = values[op[2]], values[op[3]]
            values[op[1]] = a * b if op[0] == "*" else a + b if op[0] == "+" else a - b
    return rows


def test_split_program_stores_the_same_rows_within_its_registers():
    rng = np.random.default_rng(27)
    inputs = {r: float(x) for r, x in enumerate(rng.uniform(-1.0, 1.0, 12))}
    for _ in range(3):
        program = random_program(rng)
        expected = run(program, inputs)
        own = es.canonical(program)
        assert sum(op[0] == "neg" for op in own) <= sum(op[0] == "store" for op in own)
        for ordered in (own, es.schedule(own)):
            assert run(ordered, inputs) == expected  # bit for bit: negation commutes with rounding
            allocated, spills, reloads, spill_rows = es.allocate(ordered, 8, 5, 6, 1000)
            assert spills > 0 and reloads >= spills and spill_rows > 0  # 8 registers are too few here
            left = run(allocated, inputs)
            assert {r: x for r, x in left.items() if r < 1000} == expected
            body = [op for op in allocated if op[0] not in ("line", "barrier")]
            live = es.live_counts(body)
            assert live.max() <= 8
            at_lines = [sum(op[0] not in ("line", "barrier") for op in allocated[:i]) - 1
                        for i, op in enumerate(allocated) if op[0] == "line"]
            assert len(at_lines) == 6 and max(live[i] for i in at_lines) <= 5
            for i, op in enumerate(allocated):  # a reload comes behind a barrier (nothing forwarded)
                if op[0] == "load" and op[1] not in {o[1] for o in ordered if o[0] == "load"}:
                    assert ("barrier",) in allocated[max(0, i - 8):i]


def test_line_order_tables_store_the_kernels_lines_once_each():
    """bench/line_order.py's orders are permutations of the explicit kernel's lines of a block (each
    line of each of its 32 samples once, 64-byte aligned); the contiguous one as many lines, gapless;
    "all lines" every line of the block's samples."""
    import line_order as lo

    n, stride = 12, 1440
    x = np.array([6 + 8 * k for k in (0, 3, 4, 15, 16, 17, 90, 179)])  # a line map's positions, head 6
    kernel = np.sort(lo.block_table("kernel", x, n, 0))
    assert kernel.size == lo.BLOCK * x.size and np.unique(kernel).size == kernel.size
    assert np.array_equal(kernel, np.sort((np.arange(lo.BLOCK)[:, None] * stride + x).ravel()))
    for order in ("sample", "line32", "row8", "pair", "random"):
        table = lo.block_table(order, x, n, 3)
        assert np.array_equal(np.sort(table), kernel), order
        assert not np.array_equal(table, lo.block_table("kernel", x, n, 0)) or order == "kernel"
    assert np.array_equal(lo.block_table("sample", x, n, 0), kernel)  # address order
    contiguous = lo.block_table("contiguous", x, n, 0)
    assert np.array_equal(contiguous, 8 * np.arange(kernel.size))
    every = lo.block_table("all lines", x, n, 0)
    assert every.size == lo.BLOCK * stride // 8 and np.all(np.diff(every) == 8) and every[0] == 6
