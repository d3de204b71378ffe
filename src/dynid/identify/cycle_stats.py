"""Statistics of per-cycle values as the thesis tabulates them (Tables 5.1, 5.4, F.x, H.x).

The thesis identifies the model on every cycle of a test and summarizes each parameter (and
each per-cycle RMSD) over the cycles with six figures (Appendix H names them MIN, MAX, D/MM,
D/SE, Sdv). Their definitions are not printed; the printed rows fix them:

    Mean = (1/C) sum_c x_c
    MIN  = min_c x_c,   MAX = max_c x_c
    D/MM = (MAX - MIN) / |MAX|                       "difference between minimum and maximum"
    D/SE = |x_end - x_start| / |x_start|             "difference between start and end cycles"
    Sdv  = sqrt(1/(C-1) sum_c (x_c - Mean)^2)        (MATLAB's std, the thesis' tool)

Evidence (Table H.1, Robot 1 Test 1): J1_IZZ has MIN 377.9726, MAX 404.6069, D/MM 0.0658 =
26.6343 / 404.6069 (over MAX; over the mean it would be 0.0674) and D/SE 0.0705 = 26.6343 /
377.9726 (> D/MM, so not over MAX: the start cycle is the minimum and the divisor is the
start). J2_mPx: D/SE 0.0842 over all cycles (start 2.2733 = MIN) puts the end cycle at
2.4647; without the first 5 cycles the start is cycle 6 = MIN 2.3836 and D/SE
= (2.4647 - 2.3836) / 2.3836 = 0.0340, as printed. J2_IXX (negative values): D/MM 0.4910 =
0.3666 / |-0.7464| (over |MAX|). The standard deviation (ddof = 1) cannot be checked from
the tables (per-cycle values are not printed); it is MATLAB's default.

"Without the first k cycles" (Table H: k = 5, Table 5.4: "Last 19 Cycles" of 24) drops the
warm-up cycles; Table 5.4's "Difference" is Sdv(last) - Sdv(all).

Table 5.1 puts each test's MIN, MAX, D/MM, D/SE and Sdv of the self-verification (per joint,
over the cycles) beside "All Tests" columns (``all_tests_statistics``). The seed text has lost
the table's layout; its numbers fix these: MIN and MAX over all tests' cycles, D/MM of those,
D/SE the largest of the tests' (the text: "the maximum differences between the start cycle and
end cycle are 7.3 %, 6.2 % and 13.8 %", the largest per-test D/SE of the three joints: Robot 1
joint 4's tests print 0.0505, 0.0001, 0.0623, 0.0145), Sdv over the cycles of all tests pooled
(Robot 1 joint 3: tests 0.0020, 0.0013, 0.0012, 0.0017, all 0.0021: above every test's, as a
pooled spread of tests with different means is).
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError

STATISTICS = ("mean", "min", "max", "d_mm", "d_se", "sdv")
THESIS_CYCLES, THESIS_SKIP = 24, 5  # the thesis' tests: 24 cycles, statistics also without the first 5


def default_skip_first(cycles: int) -> int:
    """The warm-up cycles left out by default: the thesis' 5 of 24, scaled to ``cycles`` when
    there are fewer (at least 1: a 6-cycle log leaves out its first)."""
    if cycles >= THESIS_CYCLES:
        return THESIS_SKIP
    return max(1, round(THESIS_SKIP * cycles / THESIS_CYCLES))
HEADERS = {"mean": "Mean", "min": "MIN", "max": "MAX", "d_mm": "D/MM", "d_se": "D/SE", "sdv": "Sdv"}


def _safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)


def cycle_statistics(values: np.ndarray) -> dict:
    """Thesis statistics (module docstring) of per-cycle values (C, ...) over axis 0, cycles in
    time order. Returns {name: array (...)} for ``STATISTICS`` plus ``cycles`` (C)."""
    x = np.asarray(values, dtype=float)
    if x.ndim == 0 or x.shape[0] == 0:
        raise DataError("cycle statistics need at least one cycle")
    lo, hi = np.nanmin(x, axis=0), np.nanmax(x, axis=0)
    start, end = x[0], x[-1]
    sdv = np.nanstd(x, axis=0, ddof=1) if x.shape[0] > 1 else np.full(x.shape[1:], np.nan)
    return {"mean": np.nanmean(x, axis=0), "min": lo, "max": hi,
            "d_mm": _safe_ratio(hi - lo, np.abs(hi)),
            "d_se": _safe_ratio(np.abs(end - start), np.abs(start)),
            "sdv": sdv, "cycles": int(x.shape[0])}


def thesis_statistics(values: np.ndarray, labels=None, skip_first: int | None = THESIS_SKIP) -> dict:
    """Table H layout: statistics over all cycles and without the first ``skip_first`` cycles
    (None: ``default_skip_first`` of the cycles given).

    values: (C, p) per-cycle values in time order; labels: C cycle labels (default 1..C).
    Returns {"labels", "skip_first", "all": stats, "without_first": stats or None (fewer
    than 2 cycles left), "sdv_difference": Sdv(without) - Sdv(all) (Table 5.4) or None}.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    labels = list(range(1, x.shape[0] + 1)) if labels is None else list(labels)
    if len(labels) != x.shape[0]:
        raise DataError(f"{len(labels)} cycle labels for {x.shape[0]} cycles")
    if skip_first is None:
        skip_first = default_skip_first(x.shape[0])
    if skip_first < 0:
        raise DataError(f"--skip-first must be >= 0, got {skip_first}")
    if skip_first and x.shape[0] - skip_first < 2:  # the second block of Table H cannot exist: said, not silent
        import warnings

        from dynid.errors import DynidWarning

        left = max(x.shape[0] - skip_first, 0)
        warnings.warn(DynidWarning(f"--skip-first {skip_first} leaves {left} of the {x.shape[0]} cycles "
                                   f"({labels[0]}..{labels[-1]}): no statistics without the first {skip_first} "
                                   "(they need 2 cycles or more)"), stacklevel=2)
    out = {"labels": [str(v) for v in labels], "skip_first": int(skip_first), "all": cycle_statistics(x),
           "without_first": None, "sdv_difference": None}
    if x.shape[0] - skip_first >= 2:
        later = cycle_statistics(x[skip_first:])
        out["without_first"] = later
        out["sdv_difference"] = later["sdv"] - out["all"]["sdv"]
    return out


def statistics_to_json(stats: dict, names: list[str] | None = None) -> dict:
    """Plain JSON of ``thesis_statistics``: per block {statistic: [p floats or None]}, and the
    parameter names when given."""

    def floats(a):
        return [float(v) if np.isfinite(v) else None for v in np.atleast_1d(np.asarray(a, dtype=float))]

    def block(s):
        if s is None:
            return None
        return {**{k: floats(s[k]) for k in STATISTICS}, "cycles": s["cycles"]}

    out = {"definitions": "D/MM = (MAX - MIN)/|MAX|, D/SE = |end - start|/|start|, Sdv with ddof = 1 "
                          "(thesis Appendix H)",
           "labels": stats["labels"], "skip_first": stats["skip_first"],
           "all": block(stats["all"]), "without_first": block(stats["without_first"]),
           "sdv_difference": None if stats["sdv_difference"] is None else floats(stats["sdv_difference"])}
    if names is not None:
        out["names"] = list(names)
    return out


def all_tests_statistics(per_test: list[np.ndarray]) -> dict:
    """Table 5.1: {"tests": [``cycle_statistics`` of each test], "all": the "All Tests" columns
    (module docstring: MIN, MAX, D/MM over all tests' cycles, D/SE the largest test's, Sdv pooled,
    Mean over all cycles)}; per_test: each test's per-cycle values (C_t, ...) in time order."""
    if not per_test:
        raise DataError("Table 5.1 needs at least one test")
    tests = [cycle_statistics(np.asarray(x, dtype=float)) for x in per_test]
    pooled = np.concatenate([np.asarray(x, dtype=float) for x in per_test], axis=0)
    lo, hi = np.nanmin(pooled, axis=0), np.nanmax(pooled, axis=0)
    every = {"mean": np.nanmean(pooled, axis=0), "min": lo, "max": hi, "d_mm": _safe_ratio(hi - lo, np.abs(hi)),
             "d_se": np.nanmax(np.array([t["d_se"] for t in tests]), axis=0),
             "sdv": np.nanstd(pooled, axis=0, ddof=1) if pooled.shape[0] > 1 else np.full(pooled.shape[1:], np.nan),
             "cycles": int(pooled.shape[0])}
    return {"tests": tests, "all": every}
