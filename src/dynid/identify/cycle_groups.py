"""Selected groups of cycles ("units", thesis 5.1.5.2, Table 5.5) and their identification.

A selection is written as a list of cycles and ranges, ``6-24`` or ``3,9,16,22`` or
``1-3,10``, or as a named group. The thesis names three groups of its 24-cycle tests
(section 5.1.5.2; Table 5.5 marks them, its cells are lost in the seed text):

    unit1: cycles 10, 15, 20     (late: close to the warm end of the test)
    unit2: cycles 3, 9, 16, 22   (spread over the test: about its average)
    unit3: cycles 3, 5, 10       (early: close to the cold start)

``lastK`` (e.g. ``last19``) names the last K cycles of the data, as Table 5.4's "Last 19 Cycles".

A log of fewer than the thesis' 24 cycles gets the units scaled to its cycles (``scaled_units``):
cycle c of 24 becomes round(c C / 24), at least 1, so each unit keeps its place in the test (late,
spread, early); on 6 cycles unit1 = 2,4,5, unit2 = 1,2,4,6, unit3 = 1,2,2 -> 1,2.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError

THESIS_UNITS = {"unit1": (10, 15, 20), "unit2": (3, 9, 16, 22), "unit3": (3, 5, 10)}
THESIS_CYCLES = 24


def parse_cycles(spec: str, available=None) -> list[int]:
    """Cycle numbers of a selection (module docstring), sorted; ``available`` (the data's cycles)
    resolves ``lastK`` and is checked against when given."""
    text = str(spec).strip().lower()
    if not text:
        raise DataError("--cycles: empty selection")
    have = None if available is None else sorted(int(c) for c in np.unique(np.asarray(available)))
    if text in THESIS_UNITS:
        cycles = list(THESIS_UNITS[text])
    elif text.startswith("last") and text[4:].isdigit():
        if have is None:
            raise DataError(f"--cycles {spec}: 'lastK' needs the data's cycles")
        cycles = have[-int(text[4:]):] if int(text[4:]) > 0 else []
    else:
        cycles = []
        for part in text.replace(";", ",").split(","):
            part = part.strip()
            if not part:
                continue
            try:
                if "-" in part:
                    a, b = part.split("-", 1)
                    lo, hi = int(a), int(b)
                    if hi < lo:
                        raise ValueError
                    cycles.extend(range(lo, hi + 1))
                else:
                    cycles.append(int(part))
            except ValueError:
                raise DataError(f"--cycles: '{part}' is not a cycle number or range; expected e.g. '6-24', "
                                f"'3,9,16,22', 'last19' or one of {sorted(THESIS_UNITS)}") from None
    cycles = sorted(set(cycles))
    if not cycles:
        raise DataError(f"--cycles {spec}: selects no cycle")
    if have is not None:
        missing = [c for c in cycles if c not in have]
        if missing:
            raise DataError(f"--cycles {spec}: cycles {missing} are not in the data (cycles {have[0]}..{have[-1]})")
    return cycles


def cycle_mask(cycle_column, spec: str, source: str = "<data>") -> np.ndarray:
    """(N,) samples whose ``cycle`` is in the selection ``spec``."""
    if cycle_column is None:
        raise DataError(f"{source}: no 'cycle' column; --cycles needs the cycle number of every sample")
    column = np.asarray(cycle_column)
    return np.isin(column.astype(np.int64), parse_cycles(spec, column))


def parse_groups(specs: list[str]) -> list[tuple[str, str]]:
    """(name, selection) pairs from ``NAME=SELECTION`` or bare selections (named by themselves)."""
    out = []
    for spec in specs:
        name, _, selection = spec.partition("=")
        if not selection:
            name, selection = spec, spec
        out.append((name.strip(), selection.strip()))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise DataError(f"--group: names must differ, got {names}")
    return out


def scaled_units(cycle_column, source: str = "<data>") -> tuple[list[tuple[str, str]], str | None]:
    """The thesis' units as (name, selection) for the cycles of ``cycle_column`` (module
    docstring): as printed with 24 cycles or more, scaled to the C cycles present otherwise (then
    a note saying so)."""
    if cycle_column is None:
        raise DataError(f"{source}: no 'cycle' column; groups of cycles need the cycle of every sample")
    have = sorted(int(c) for c in np.unique(np.asarray(cycle_column)))
    if len(have) >= THESIS_CYCLES:
        return [(name, name) for name in THESIS_UNITS], None
    count = len(have)
    specs = []
    for name, cycles in THESIS_UNITS.items():
        picked = sorted({have[min(count, max(1, round(c * count / THESIS_CYCLES))) - 1] for c in cycles})
        specs.append((name, ",".join(str(c) for c in picked)))
    note = (f"{source} has {count} cycles, not the thesis' {THESIS_CYCLES}: its units scaled to them (cycle c -> "
            f"round(c x {count} / {THESIS_CYCLES})): " + "; ".join(f"{n} = {s}" for n, s in specs))
    return specs, note
