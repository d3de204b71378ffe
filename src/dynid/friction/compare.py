"""Two robots of one model, several tests each (thesis 4.6, 5.2.4): "mix" fits and their contrast.

For every (joint, level) present in all analyses, the eq. 5.4 "mix" fit of each robot pools
the per-cycle friction points of its tests (each test's time from its own cold start), and
``compare_fits`` gives per parameter, and for the cold friction a + b + c, the difference
and its z-score. Levels are matched by index; a level whose speed differs by more than 5 %
between analyses (another protocol) is skipped with a note. Analyses may be
``FrictionAnalysis`` objects or their ``to_dict()`` / JSON form.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import DataError
from dynid.friction.drift import compare_fits, mix_fit


def _as_dict(analysis) -> dict:
    return analysis if isinstance(analysis, dict) else analysis.to_dict()


def level_points(analysis: dict, joint: int, level: int) -> tuple[np.ndarray, np.ndarray]:
    """(time (K,) [s], friction (K,)) of a 1-based joint and level of an analysis dict."""
    f = analysis["friction"]
    pick = (np.asarray(f["joint"]) == joint) & (np.asarray(f["level"]) == level)
    return np.asarray(f["time"], float)[pick], np.asarray(f["friction"], float)[pick]


def compare_robots(first: list, second: list, seed: int = 0) -> dict:
    """{"levels": [{"joint", "level", "speed", "first", "second", "contrast"}], "notes"} (1-based)."""
    first, second = [_as_dict(a) for a in first], [_as_dict(a) for a in second]
    everything = first + second
    if not first or not second:
        raise DataError("compare: give at least one analysis per robot")
    if len({a["n"] for a in everything}) != 1:
        raise DataError(f"compare: analyses of robots with different joint counts {[a['n'] for a in everything]}")
    out, notes = [], []
    for j in range(1, everything[0]["n"] + 1):
        speeds = [next((lv["speeds"] for lv in a["levels"] if lv["joint"] == j), []) for a in everything]
        for level in range(1, min(len(s) for s in speeds) + 1):
            v = np.array([s[level - 1] for s in speeds])
            if v.max() > 1.05 * v.min():
                notes.append(f"joint {j} level {level}: speeds differ between analyses {np.round(v, 3).tolist()}")
                continue
            try:
                mix1 = mix_fit([level_points(a, j, level) for a in first], seed=seed)
                mix2 = mix_fit([level_points(a, j, level) for a in second], seed=seed)
            except DataError as exc:
                notes.append(f"joint {j} level {level}: {exc}")
                continue
            out.append({"joint": j, "level": level, "speed": float(v.mean()), "first": mix1.to_dict(),
                        "second": mix2.to_dict(), "contrast": compare_fits(mix1, mix2)})
    return {"levels": out, "notes": notes}
