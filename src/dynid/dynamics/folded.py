"""A robot's regressor kernel with its constant joint placements folded in: written for the
robot's structure, compiled once and cached.

The lane kernels (``lanes.py``, ``regressor.py``) take every joint's constants (``joint_constants``:
rel = A0 + c A1 + s A2, t = t0 + c t1 + s t2 + q t3, the screw axis) as numbers, so they multiply
by them all. A real arm's are mostly 0 or +-1: a DH or MDH table's alpha is 0 or +-pi/2, a URDF's
rpy a multiple of pi/2, a joint axis a coordinate axis, and many offsets have a single non-zero
component. Counted on the kernels' own formulas run on symbols (``source``: a multiply-add counts
once, sin and cos left out), the forward pass and the blocks of er3a take 1971 operations per
sample, 744 once the multiplies by a constant 0 or +-1 and the additions of a constant 0 are gone;
iiwa14 2520 and 1333, solo12 2808 and 704. Their results are known before any sample is seen, and
so are the zeros they make further down: the first joint, on a base at rest, turns with
w = (0, 0, qd), its child's axis carried into a DH frame is a column of +-c, +-s and a constant, and
so on down the tree.

So ``kernel_for(robot)`` runs the kernels' own formulas (``lanes.joint_motion`` and
``block_formulas``: the same functions, on symbols) over the robot's tree, with each constant a
symbol that is 0, 1, -1 or a named number read from the robot's constants at run time, and writes
the result as Python source: one function per joint, a lane loop (``LANES`` samples, vectorized
like the others) with its forward step and every block of its link, the numbers that are 0 or +-1
folded away, the values a child needs kept in the workspace rows where the generic kernel keeps
them, and the blocks in the same scratch rows, so that the same transposes and streaming
(``regressor.store_block``) write Y, or, for a streamed Y, ``regressor.write_lines`` (samples of
whole cache lines) and ``regressor.write_lines_phases`` (odd n, whole blocks), with no stage
(``range_of``). A number of a block that is a constant 0 (folding knows it before any sample:
er3a 20 of its 210 block numbers, solo12 44 of 240) or that a row of the same loop holds already
(loaded, or stored for a child or another block) is not stored again: ``ALIAS`` names, for each
block row, the row the line maps read it from (``regressor.line_map``; ``lanes.ZERO_ROW``, a row
never written, for a 0), and a line of Y whose numbers are all such zeros is not written (it holds
zeros already). The stores of the lane loops go from 302 to 272 per sample (er3a), 420 to 389
(iiwa14), 316 to 240 (solo12); the passes that read every block row (``store_block``: a Y in
cache, an odd n's last samples) get them filled first (``regressor.fill_aliases``). Y is the same
bit for bit. Results equal the generic kernel's to
rounding (a term dropped is a multiply by 0; a constant within 1e-15 of 0 or +-1, as cos(pi/2) = 6e-17 of a URDF's rpy,
counts as 0 or +-1; the last bits of a sum may differ where the compiler fuses other pairs into
multiply-adds): at most 6.6e-16 of Y's largest entry on the builtin and bench robots,
tests/test_regressor_folded.py. Y in memory, one thread, CPU time (bench/dynamics.py, AMD EPYC Zen 4,
2026-11-26, load 5-7): er3a 0.261 -> 0.168 us per sample, solo12 0.362 -> 0.226; the forward pass and
blocks alone take a half to a third of their time (bench/regressor_passes.py).

The source depends only on the structure (the tree, which constants are 0, 1, -1 or other, and
the gravity's zeros), so robots of one structure share one kernel. It is written once to
``kernel_files.kernel_dir()`` (``DYNID_KERNEL_DIR``, else the user's cache directory; never into the installed
package) and compiled by Numba with ``cache=True`` there (5-15 s on that machine), so a process
after the first loads it from disk. Its header carries a digest of the kernels' sources
(``_sources_digest``): Numba's cache of a file knows only that file, so a new dynid writes new
modules, and removes those of older versions not written or compiled for a week
(``kernel_files.py``).
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import types
from pathlib import Path

import numba
import numpy as np

from dynid.dynamics import kernel_files
from dynid.dynamics.block_formulas import carry_axis, link_block, link_terms
from dynid.dynamics.lanes import (JR, LANES, OWN_ROW, R_C, R_DV, R_DW, R_Q, R_QD, R_QDD, R_S, R_V, R_W, ZERO_ROW,
                                  cross3, joint_motion, kernel_arrays, pair_row, pure_rotation, scratch_row)

TOLERANCE = 1e-15  # a constant this close to 0, 1 or -1 is taken as it
MIN_SAVING = 0.2  # a generated kernel is used when it leaves out at least this share of the operations


class _Writer:
    """Statements of one lane loop, and the operations they hold."""

    def __init__(self):
        self.lines, self.count = [], 0
        self.rows = {}  # name -> the workspace row that holds it (loaded from or stored to in this loop)
        self.multiplies, self.sums, self.uses, self.products = 0, [], {}, set()

    def temp(self, text: str, operands=(), kind: str = "") -> Sym:
        name = f"x{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {text}")
        for operand in operands:
            self.use(operand)
        if kind == "*":
            self.multiplies += 1
            self.products.add(name)
        elif kind == "+":
            self.sums.append(tuple(operand.code for operand in operands))
        elif kind == "-" and operands[0].code in self.products:  # a negated product still fuses
            self.products.add(name)
        return Sym(self, name)

    def use(self, value: Sym) -> None:
        self.uses[value.code] = self.uses.get(value.code, 0) + 1

    def operations(self) -> int:
        """Multiplies and additions, less one for each addition that can take a product used by
        it alone (the multiply-add the compiler forms): a multiply-add counts once, as
        ``bench/regressor_passes.py`` counts them."""
        fused = sum(any(code in self.products and self.uses[code] == 1 for code in codes) for codes in self.sums)
        return self.multiplies + len(self.sums) - fused


class Sym:
    """A number of the kernel: a constant 0, 1, -1 (``value``) or a name in the generated source
    (data, or a constant read from the robot's arrays)."""

    __slots__ = ("writer", "code", "value")

    def __init__(self, writer, code: str, value: float | None = None):
        self.writer, self.code, self.value = writer, code, value

    def _other(self, other) -> Sym:
        return other if isinstance(other, Sym) else Sym(self.writer, repr(float(other)), float(other))

    def __neg__(self):
        if self.value is not None:
            return Sym(self.writer, repr(-self.value), -self.value)
        return self.writer.temp(f"-{self.code}", (self,), "-")

    def __mul__(self, other):
        other = self._other(other)
        for a, b in ((self, other), (other, self)):
            if a.value == 0.0:
                return Sym(self.writer, "0.0", 0.0)
            if a.value == 1.0:
                return b
            if a.value == -1.0:
                return -b
        return self.writer.temp(f"{self.code} * {other.code}", (self, other), "*")

    __rmul__ = __mul__

    def __add__(self, other):
        other = self._other(other)
        if other.value == 0.0:
            return self
        if self.value == 0.0:
            return other
        if self.value is not None and other.value is not None:
            return Sym(self.writer, repr(self.value + other.value), self.value + other.value)
        return self.writer.temp(f"{self.code} + {other.code}", (self, other), "+")

    __radd__ = __add__

    def __sub__(self, other):
        other = self._other(other)
        if other.value == 0.0:
            return self
        if self.value == 0.0:
            return -other
        if self.value is not None and other.value is not None:
            return Sym(self.writer, repr(self.value - other.value), self.value - other.value)
        return self.writer.temp(f"{self.code} - {other.code}", (self, other), "+")

    def __rsub__(self, other):
        return self._other(other) - self


@functools.cache
def _plain(kernel):
    """The Python function of a compiled kernel, calling the Python functions of the kernels it
    calls: runs on ``Sym``."""
    f = kernel.py_func
    names = dict(f.__globals__)
    for name in f.__code__.co_names:
        if isinstance(names.get(name), numba.core.dispatcher.Dispatcher):
            names[name] = _plain(names[name])
    return types.FunctionType(f.__code__, names, f.__name__, f.__defaults__, f.__closure__)


def _kind(x: float) -> str:
    """'0', '1', '-1' or 'x': how a constant enters the kernel."""
    for value, kind in ((0.0, "0"), (1.0, "1"), (-1.0, "-1")):
        if abs(x - value) <= TOLERANCE:
            return kind
    return "x"


def structure(robot) -> str:
    """What a generated kernel depends on: the tree, the kind of every constant and of gravity."""
    constants, parents, _, gravity = kernel_arrays(robot)
    return "|".join([",".join(map(str, parents)), "".join({"0": "0", "1": "p", "-1": "m", "x": "x"}[_kind(x)]
                                                          for x in np.concatenate([constants.ravel(), gravity]))])


def _constant(writer: _Writer, prologue: list, name: str, source: str, x: float) -> Sym:
    kind = _kind(x)
    if kind != "x":
        return Sym(writer, repr(float(kind)), float(kind))
    prologue.append(f"{name} = {source}")
    return Sym(writer, name)


def _row(writer: _Writer, row: int) -> Sym:
    value = writer.temp(f"ws[nb.uint64({row * LANES}) + k]")
    writer.rows[value.code] = int(row)
    return value


def source(robot) -> tuple[str, int, int]:
    """(Python source of the kernel's module, operations per sample folded, and not folded):
    ``forward_and_blocks(ws, constants, gravity)`` and its drivers (module docstring)."""
    constants, parents, slots, gravity = kernel_arrays(robot)

    n = len(parents)
    scratch = scratch_row(n, slots)
    children = {j: [c for c in range(n) if parents[c] == j] for j in range(n)}
    prologue, loops, folded, generic = [], [], 0, 0
    alias = {}  # block row (from scratch) -> ZERO_ROW, or the workspace row that holds its number: not stored
    for fold in (False, True):  # the same walk without folding: the operations it would take
        alias.clear()
        known = {}  # (joint, row) -> Sym of a constant, or None: in the workspace
        kept = {}  # (i, j) -> the six Syms of joint i's axis in frame j, for j's children
        for j in range(n):
            w = _Writer()
            if fold:
                K = [_constant(w, prologue, f"k{j}_{e}", f"constants[{j}, {e}]", x) for e, x in enumerate(constants[j])]
                g = [_constant(w, prologue, f"g{e}", f"-gravity[{e}]", -x) for e, x in enumerate(gravity)]
            else:
                K = [Sym(w, f"k{j}_{e}") for e in range(45)]
                g = [Sym(w, f"g{e}") for e in range(3)]
            general = not pure_rotation(constants[j])  # as forward_block chooses its loop
            c, s = _row(w, j * JR + R_C), _row(w, j * JR + R_S)
            x = _row(w, j * JR + R_Q) if general else Sym(w, "0.0", 0.0)
            qd, qdd = _row(w, j * JR + R_QD), _row(w, j * JR + R_QDD)
            p = parents[j]
            if p < 0:
                zero = Sym(w, "0.0", 0.0) if fold else Sym(w, "z")
                if not fold:
                    w.lines.append("z = 0.0 * k")  # data to the count: the base's rows
                parent = [(zero,) * 3] * 3 + [tuple(g)]
            else:
                parent = [tuple(_stored(w, known, p, row + e) for e in range(3)) for row in (R_W, R_V, R_DW, R_DV)]
            r, t, wj, vj, e, dv = _plain(joint_motion)(c, s, x, qd, qdd, K, *parent, general)
            if children[j]:
                for row, values in ((R_W, wj), (R_V, vj), (R_DW, e), (R_DV, dv)):
                    for a, value in enumerate(values):
                        known[j, row + a] = _store(w, (j * JR + row + a) * LANES, value)
            cc = _plain(cross3)(*wj, *vj)
            acc = (dv[0] + cc[0], dv[1] + cc[1], dv[2] + cc[2])
            terms = _plain(link_terms)(*wj, *e)
            own = tuple(K[39:45])
            _store_block(w, scratch, 10 * slots[j, j], _plain(link_block)(*own, *acc, *e, terms),
                         alias if fold else None)
            i = p
            while i >= 0:
                if i == p:
                    axis = (tuple(Sym(w, f"k{i}_{a}") if not fold else _constant(w, prologue, f"k{i}_{a}",
                                                                                  f"constants[{i}, {a}]",
                                                                                  constants[i, a])
                                  for a in range(39, 45)))
                else:
                    axis = tuple(_stored(w, kept, (i, p), a, pair_row(n, slots[i, p]) + a) for a in range(6))
                u, sv = _plain(carry_axis)(r, t, axis[:3], axis[3:])
                if children[j]:
                    for a, value in enumerate(u + sv):
                        kept[(i, j), a] = _store(w, (pair_row(n, slots[i, j]) + a) * LANES, value)
                _store_block(w, scratch, 10 * slots[i, j], _plain(link_block)(*u, *sv, *acc, *e, terms),
                             alias if fold else None)
                i = parents[i]
            if fold:
                folded += w.operations()
                loops.append(w.lines)
            else:
                generic += w.operations()
    head = sorted(set(prologue))
    rows = [alias.get(b, OWN_ROW) for b in range(10 * int(np.sum(slots >= 0)))]
    text = [*kernel_files.header(_sources_digest(), structure(robot)[:60]),
            "import numba as nb", "import numpy as np",
            "from dynid.dynamics.lanes import (CHUNK, FMA, LANES, lanes, load_block, new_workspace, scratch_row,",
            "                                  slots_used)",
            "from dynid.dynamics.regressor import (block_runs, fill_aliases, line_map, phase_line_maps, store_block,",
            "                                      write_lines, write_lines_phases)",
            "from dynid.dynamics.tiles import store_fence", "",
            "# the block rows not stored (lanes.ZERO_ROW: a constant 0; a row: that row holds the number)",
            f"ALIAS = np.array({rows}, dtype=np.int64)", ""]
    for j, lines in enumerate(loops):  # a function per joint: LLVM compiles small functions much faster
        body = "\n".join(lines)
        text += ["", "@nb.njit(cache=True, fastmath=FMA)", f"def joint_{j}(ws, constants, gravity):"]
        text += [f"    {line}" for line in head if re.search(rf"\b{line.split(' = ')[0]}\b", body)]
        text.append("    for k in range(lanes(ws)):")
        text += [f"        {line}" for line in lines]
        text.append("")
    text += ["", "@nb.njit(cache=True)", "def forward_and_blocks(ws, constants, gravity):"]
    text += [f"    joint_{j}(ws, constants, gravity)" for j in range(n)]
    text.append(_DRIVERS)
    return "\n".join(text) + "\n", folded, generic


def _stored(w: _Writer, known: dict, owner, index, row: int | None = None) -> Sym:
    """A value a parent's loop computed: its constant, else a load of its workspace row."""
    value = known.get((owner, index))
    if value is not None:
        return Sym(w, value.code, value.value)
    return _row(w, row if row is not None else owner * JR + index)


def _store(w: _Writer, offset: int, value: Sym):
    """Stores a non-constant value at a workspace offset; returns the constant otherwise (kept in
    the source instead of the workspace)."""
    if value.value is not None:
        return value
    w.use(value)
    w.lines.append(f"ws[nb.uint64({offset}) + k] = {value.code}")
    w.rows.setdefault(value.code, int(offset) // LANES)
    return None


def _store_block(w: _Writer, scratch: int, first: int, block, alias: dict | None) -> None:
    """Stores the ten numbers of a block in the rows scratch + first ..., but a constant 0 and a
    number that a row of this loop holds already (loaded, or stored for a child or another block):
    those go to ``alias`` (block row -> ZERO_ROW or that row; None: store all), for the line maps
    to read from there (``ALIAS``)."""
    for a, value in enumerate(block):
        if alias is not None and value.value == 0.0 and math.copysign(1.0, value.value) > 0.0:  # -0.0: stored
            alias[int(first + a)] = ZERO_ROW
            continue
        if alias is not None and value.value is None and value.code in w.rows:
            alias[int(first + a)] = w.rows[value.code]
            continue
        w.use(value)
        w.lines.append(f"ws[nb.uint64({(scratch + first + a) * LANES}) + k] = {value.code}")
        w.rows.setdefault(value.code, int(scratch + first + a))


_DRIVERS = '''

@nb.njit(cache=True, nogil=True)
def regressor_range(q, dq, ddq, constants, parents, slots, runs, ws, y, start, stop, stage, every, gravity):
    """dynid.dynamics.regressor.regressor_range with this structure's forward_and_blocks."""
    shift, lines, line_count = -1, np.zeros(5 * q.shape[1] ** 2 + 1, dtype=np.int64), 0
    scratch = scratch_row(q.shape[1], slots)
    for k0 in range(start, stop, LANES):
        m = min(LANES, stop - k0)
        load_block(q, dq, ddq, k0, m, ws)
        forward_and_blocks(ws, constants, gravity)
        fill_aliases(ws, ALIAS, scratch)
        shift, line_count = store_block(ws, constants, parents, slots, runs, m, y, k0, stage, shift, lines, line_count,
                                        every)
    if stage.size > 0:
        store_fence()


@nb.njit(cache=True, nogil=True)
def regressor_range_lines(q, dq, ddq, constants, slots, ws, y, start, stop, lmap, gravity, keep):
    """Y[start:stop] streamed without a stage when a sample of Y is whole cache lines
    (dynid.dynamics.regressor.write_lines, its ``line_map`` lmap, ``keep`` the line a block shares
    with the next; ws with a zero row after the blocks' rows, and one more)."""
    pending = False
    for k0 in range(start, stop, LANES):
        m = min(LANES, stop - k0)
        load_block(q, dq, ddq, k0, m, ws)
        forward_and_blocks(ws, constants, gravity)
        pending = write_lines(ws, lmap, m, y, k0, keep, pending, k0 + LANES < stop)
    store_fence()


@nb.njit(cache=True, nogil=True)
def regressor_range_phases(q, dq, ddq, constants, ws, y, start, stop, lmaps, counts, gravity, keep):
    """Y[start:stop] (whole blocks) streamed without a stage when a sample of Y is not whole lines
    (odd n): lanes in phase order (load_block(..., phases=True)), then
    dynid.dynamics.regressor.write_lines_phases with ``phase_line_maps`` lmaps, counts and ``keep``.
    No fence."""
    pending = False
    for k0 in range(start, stop, LANES):
        load_block(q, dq, ddq, k0, LANES, ws, True)
        forward_and_blocks(ws, constants, gravity)
        pending = write_lines_phases(ws, lmaps, counts, y, k0, keep, pending, k0 + LANES < stop)


@nb.njit(cache=True, nogil=True)
def range_of(q, dq, ddq, constants, parents, slots, gravity, y, start, stop, stage_samples, every):
    """Y[start:stop] in this thread: streamed by whole lines straight from the lanes when its
    samples are whole lines (``regressor_range_lines``); for an odd n its whole blocks so too, in
    phase order (``regressor_range_phases``), and the last samples as ``regressor_range`` does;
    not streamed (``stage_samples`` 0): as ``regressor_range`` does."""
    n = q.shape[1]
    used = 10 * slots_used(slots)
    ws = new_workspace(n, slots, constants, gravity, used + 2)  # a zero row, and one that lane 32 of it reads
    zero = scratch_row(n, slots) + used
    spare = np.zeros(16)
    keep = spare[(-(spare.ctypes.data // 8)) % 8:][:8]  # 64-byte aligned
    if stage_samples > 0 and (10 * n * n) % 8 == 0:
        lmap = line_map(slots, (8 - (y.ctypes.data // 8) % 8) % 8, zero, every, ALIAS)
        regressor_range_lines(q, dq, ddq, constants, slots, ws, y, start, stop, lmap, gravity, keep)
        return
    if stage_samples > 0:
        lmaps, counts = phase_line_maps(slots, y, start, zero, every, ALIAS)
        whole = start + (stop - start) // LANES * LANES
        regressor_range_phases(q, dq, ddq, constants, ws, y, start, whole, lmaps, counts, gravity, keep)
        start = whole
    stage = np.zeros(stage_samples * 10 * n * n + 8 * (stage_samples > 0))
    regressor_range(q, dq, ddq, constants, parents, slots, block_runs(slots), ws, y, start, stop, stage, every,
                    gravity)


@nb.njit(cache=True, nogil=True)
def regressor_serial(q, dq, ddq, constants, parents, slots, gravity, y, stage_samples, every):
    """dynid.dynamics.regressor.regressor_serial with this structure's kernel (``range_of``; start an
    int64, not the literal 0: one compiled range_of serves this and regressor_parallel)."""
    range_of(q, dq, ddq, constants, parents, slots, gravity, y, np.int64(0), q.shape[0], stage_samples, every)


@nb.njit(cache=True, parallel=True)
def regressor_parallel(q, dq, ddq, constants, parents, slots, gravity, y, threads, stage_samples, every):
    """dynid.dynamics.regressor._regressor_parallel with this structure's kernel (``range_of``)."""
    count = q.shape[0]
    parts = max(1, min(threads, count // CHUNK))
    for t in nb.prange(parts):
        range_of(q, dq, ddq, constants, parents, slots, gravity, y, t * count // parts, (t + 1) * count // parts,
                 stage_samples, every)
'''


@functools.cache
def _sources_digest() -> str:
    """Digest of the kernels' sources that a generated module calls or copies: a change to any of
    them makes a new module (Numba's cache would keep the compiled copies of the old ones)."""
    digest = hashlib.sha256()
    for name in ("lanes", "block_formulas", "regressor", "tiles", "sincos", "folded", "kernel_files"):
        digest.update((Path(__file__).parent / f"{name}.py").read_bytes())
    return digest.hexdigest()[:16]


def enabled() -> bool:
    """Generated kernels are used unless ``DYNID_FOLDED_KERNELS=0``."""
    return os.environ.get("DYNID_FOLDED_KERNELS", "1") != "0"


_modules: dict = {}
_by_structure: dict = {}  # structure and loop kinds -> module or None: a robot of a known structure writes no source


def kernel_for(robot):
    """The generated module of the robot's structure (``regressor_range``), or None when folding
    leaves out less than ``MIN_SAVING`` of the operations (cached on the robot and per structure)."""
    cached = robot.__dict__.get("_folded_kernel", False)
    if cached is not False:
        return cached
    constants = kernel_arrays(robot)[0]
    key = (structure(robot), tuple(bool(pure_rotation(k)) for k in constants))  # all that ``source`` depends on
    if key not in _by_structure:
        text, folded, generic = source(robot)
        _by_structure[key] = _load(text) if folded <= (1.0 - MIN_SAVING) * generic else None
    robot.__dict__["_folded_kernel"] = module = _by_structure[key]
    return module


def _load(text: str):
    key = hashlib.sha256(text.encode()).hexdigest()[:20]
    if key not in _modules:
        module = kernel_files.load(text, key, _sources_digest())
        if module is None:
            return None
        _modules[key] = module
    return _modules[key]
