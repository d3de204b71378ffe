"""Drift of a fleet's models over days: trends, robust fleet statistics and flags.

Input: the rows of ``dynid fleet identify --by robot,date`` (results.py). For every robot and
every quantity k (the base parameters, among them the friction ``Fc<j>``, ``Fv<j>``, and the
per-joint RMSD ``rmsd<j>``, thesis eq. 5.1) with values y_d on its dates d:

    trend            Theil-Sen slope: median over date pairs of (y_j - y_i) / (d_j - d_i) [per day]
    baseline, recent the first ``baseline_days`` and the last ``recent_days`` dates;
                     L_b = median(baseline), L_r = median(recent), change = L_r - L_b
    own scatter      sigma = max(1.4826 MAD(baseline), 1.4826 MAD(day-to-day steps) / sqrt(2),
                     median of the estimates' std)
    own z            u = change / (1.2533 sigma sqrt(1/B + 1/R))   (1.2533: a median's standard error
                     is sqrt(pi/2) times a mean's for Gaussian scatter)
    fleet z          (u - median over robots of u) / (1.4826 MAD over robots of u), among the
                     robots of the same model: a change that stands out against the fleet's
                     changes (a change all robots share, e.g. the season, does not)
    level z          (L_r - median L_r) / (1.4826 MAD L_r) over the same robots

A robot is flagged against its own history when |u| > threshold and against the fleet when
|fleet z| > threshold or, for friction, |level z| > threshold (other parameters differ
between robots by payload and tooling, by design) (default 5: with ~60 quantities x 50 robots
a Gaussian |z| > 5 happens by chance once in ~5000 fleets). Robust statistics (median, MAD)
keep a few faulty robots from hiding themselves by inflating the fleet's spread.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field

import numpy as np

from dynid.errors import DataError

MAD_SCALE = 1.4826      # MAD -> Gaussian sigma
MEDIAN_SE = 1.2533      # sqrt(pi / 2)


@dataclass(frozen=True)
class DriftSettings:
    baseline_days: int = 7
    recent_days: int = 3
    threshold: float = 5.0

    def check(self) -> None:
        if self.baseline_days < 2 or self.recent_days < 1:
            raise DataError(f"--baseline-days must be >= 2 and --recent-days >= 1, got {self.baseline_days} "
                            f"and {self.recent_days}")
        if not self.threshold > 0:
            raise DataError(f"--threshold must be > 0, got {self.threshold}")


@dataclass
class RobotSeries:
    """One robot's quantities over its dates: values and std (D, P), day numbers (D,)."""

    robot: str
    model: str
    dates: list[str]
    days: np.ndarray
    names: list[str]
    values: np.ndarray
    std: np.ndarray


@dataclass
class FleetDrift:
    settings: DriftSettings
    series: dict[str, RobotSeries]
    trends: list[dict]                       # one per robot and quantity (trend table rows)
    flags: dict[str, list[dict]]             # robot -> its flagged quantities
    fleet: dict[str, dict]                   # model -> quantity -> {median, sigma} of recent levels
    failed: list[dict] = field(default_factory=list)
    file_errors: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    validation: list[dict] = field(default_factory=list)  # per identified group (``validation_rows``)


FRICTION_NAME = re.compile(r"^(Fv2|Fv3|Fcp|Fcn|Fvp|Fvn|Fc|Fv)(\d+)$")  # identify.model.FRICTION_MODELS + joint


def joint_of(name: str) -> int | None:
    """The joint a quantity belongs to: Fc3 -> 3, Fv21 (Fv2 of joint 1) -> 1, mx2R -> 2, rmsd4 -> 4."""
    m = FRICTION_NAME.match(name) or re.search(r"()(\d+)R?$", name)
    return int(m.group(2)) if m else None


def kind_of(name: str) -> str:
    """friction | rmsd | parameter."""
    if name.startswith("rmsd"):
        return "rmsd"
    return "friction" if FRICTION_NAME.match(name) else "parameter"


def collect(rows: list[dict], by: tuple[str, ...]) -> tuple[dict[str, RobotSeries], list[dict], list[dict]]:
    """Per-robot series from result rows; (series, failed rows, file errors)."""
    if "robot" not in by or "date" not in by:
        raise DataError(f"fleet drift needs results grouped by robot and date (these are grouped by {','.join(by)}); "
                        "run 'dynid fleet identify ROOT --by robot,date'")
    failed = [{k: r[k] for k in by} | {"error": r.get("error")} for r in rows if r["status"] != "ok"]
    errors = [{"robot": r["robot"], "date": r["date"], **e} for r in rows for e in (r.get("file_errors") or [])]
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        raise DataError("the results hold no identified group (status ok): nothing to analyze")
    first = min(datetime.date.fromisoformat(r["date"]) for r in ok)
    series = {}
    for rid in sorted({r["robot"] for r in ok}):
        mine = sorted((r for r in ok if r["robot"] == rid), key=lambda r: tuple(r[k] for k in by))
        names = list(mine[0]["parameter_names"])
        if any(list(r["parameter_names"]) != names for r in mine):
            raise DataError(f"robot={rid}: its groups have different base parameters (model or options changed "
                            "between runs); identify them again with the same settings")
        n = len(mine[0]["rmsd"])
        names_all = names + [f"rmsd{j + 1}" for j in range(n)]
        values = np.array([list(r["parameter_values"]) + list(r["rmsd"]) for r in mine], dtype=float)
        std = np.array([list(r["parameter_std"]) + [np.nan] * n for r in mine], dtype=float)
        days = np.array([(datetime.date.fromisoformat(r["date"]) - first).days for r in mine], dtype=float)
        series[rid] = RobotSeries(rid, mine[0]["robot_model"], [r["date"] for r in mine], days, names_all,
                                  values, std)
    return series, failed, errors


def theil_sen(days: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(P,) median pairwise slope of values (D, P) over days (D,) [per day]; NaN below 2 dates."""
    i, j = np.triu_indices(days.size, 1)
    dx = days[j] - days[i]
    keep = dx > 0
    if not keep.any():
        return np.full(values.shape[1], np.nan)
    slopes = (values[j[keep]] - values[i[keep]]) / dx[keep, None]
    return np.nanmedian(slopes, axis=0)


def own_history(s: RobotSeries, settings: DriftSettings) -> dict:
    """Baseline/recent levels, change, own z and trend of every quantity of one robot (arrays (P,))."""
    dates = sorted(set(s.dates))
    count = len(dates)
    b = min(settings.baseline_days, max(2, count // 2))
    r = min(settings.recent_days, max(1, count - b))
    base_mask = np.isin(s.dates, dates[:b])
    recent_mask = np.isin(s.dates, dates[count - r:])
    yb, yr = s.values[base_mask], s.values[recent_mask]
    level_b, level_r = np.median(yb, axis=0), np.median(yr, axis=0)
    mad = MAD_SCALE * np.median(np.abs(yb - level_b), axis=0)
    order = np.argsort(s.days, kind="stable")
    steps = np.diff(s.values[order], axis=0)  # day-to-day changes: a step or a steady drift moves few of them
    mad_steps = MAD_SCALE * np.median(np.abs(steps - np.median(steps, axis=0)), axis=0) / np.sqrt(2.0) \
        if steps.shape[0] >= 2 else np.zeros(s.values.shape[1])
    finite = np.isfinite(s.std)
    est_std = np.array([np.median(s.std[finite[:, k], k]) if finite[:, k].any() else 0.0
                        for k in range(s.values.shape[1])])  # loop over quantities, not samples
    tiny = 1e-9 * np.maximum(np.abs(level_b), 1e-12)
    sigma = np.maximum.reduce([mad, mad_steps, est_std, tiny])
    change = level_r - level_b
    u = change / (MEDIAN_SE * sigma * np.sqrt(1.0 / b + 1.0 / r))
    return {"baseline_dates": b, "recent_dates": r, "level_baseline": level_b, "level_recent": level_r,
            "change": change, "sigma": sigma, "z_own": u, "slope": theil_sen(s.days, s.values),
            "enough": count >= 4}


def _robust_z(x: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """(x - median) / (1.4826 MAD) along axis 0 (robots), NaN-safe, scale at least ``floor``."""
    med = np.nanmedian(x, axis=0)
    scale = np.maximum(MAD_SCALE * np.nanmedian(np.abs(x - med), axis=0), floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (x - med) / np.where(scale > 0, scale, np.nan), med, scale


def validation_rows(rows: list[dict]) -> list[dict]:
    """Per identified group: robot, date, model, the relative error of all joints on its own
    data (result.json fit.relative_error) and held out (``validation_relative_error``: leave
    one file or block of time out, fleet/validation.py), None when it has none."""
    import json

    out = []
    for r in rows:
        if r["status"] != "ok":
            continue
        fit = json.loads(r["result_json"])["fit"] if r.get("result_json") else {}
        out.append({"robot": r["robot"], "date": r["date"], "model": r["robot_model"],
                    "fit": fit.get("relative_error"), "held_out": r.get("validation_relative_error"),
                    "kind": r.get("validation_kind")})
    return out


def analyze(rows: list[dict], by: tuple[str, ...], settings: DriftSettings = DriftSettings()) -> FleetDrift:
    """Trends, fleet statistics and flags of a fleet's results (module docstring)."""
    settings.check()
    series, failed, errors = collect(rows, by)
    own = {rid: own_history(s, settings) for rid, s in series.items()}
    notes = [f"robot={rid}: {len(set(s.dates))} date(s), fewer than 4: no flags"
             for rid, s in series.items() if not own[rid]["enough"]]
    trends, flags, fleet = [], {rid: [] for rid in series}, {}
    for model in sorted({s.model for s in series.values()}):
        rids = [rid for rid, s in series.items() if s.model == model and own[rid]["enough"]]
        if not rids:
            continue
        names = series[rids[0]].names
        u = np.array([own[rid]["z_own"] for rid in rids])
        levels = np.array([own[rid]["level_recent"] for rid in rids])
        typical = np.array([own[rid]["sigma"] for rid in rids])
        z_fleet, _, _ = _robust_z(u, floor=1.0)
        z_level, med_level, scale_level = _robust_z(levels, floor=0.0)
        scale_level = np.maximum(scale_level, np.nanmedian(typical, axis=0))  # never below the day-to-day scatter
        z_level = (levels - med_level) / scale_level
        fleet[model] = {name: {"median": float(m), "sigma": float(sc), "robots": len(rids)}
                        for name, m, sc in zip(names, med_level, scale_level)}
        for a, rid in enumerate(rids):
            o = own[rid]
            for k, name in enumerate(names):
                tests = [("own", o["z_own"][k]), ("fleet", z_fleet[a, k])]
                if kind_of(name) == "friction":  # other levels differ by payload and tooling by design
                    tests.append(("level", z_level[a, k]))
                kinds = [kind for kind, z in tests if abs(z) > settings.threshold]
                row = {"robot": rid, "model": model, "quantity": name, "joint": joint_of(name), "kind": kind_of(name),
                       "slope_per_day": float(o["slope"][k]), "level_baseline": float(o["level_baseline"][k]),
                       "level_recent": float(o["level_recent"][k]), "change": float(o["change"][k]),
                       "sigma": float(o["sigma"][k]), "z_own": float(o["z_own"][k]),
                       "z_fleet": float(z_fleet[a, k]), "z_level": float(z_level[a, k]), "flags": ",".join(kinds)}
                trends.append(row)
                if kinds:
                    flags[rid].append(row)
    for rid in flags:
        flags[rid].sort(key=lambda f: -max(abs(f["z_own"]), abs(f["z_fleet"]), abs(f["z_level"])))
    return FleetDrift(settings, series, trends, {r: f for r, f in flags.items() if f}, fleet, failed, errors, notes,
                      validation_rows(rows))


def to_dict(drift: FleetDrift) -> dict:
    """drift.json: settings, per-robot flags, fleet statistics, failed groups, files left out."""
    return {"settings": {"baseline_days": drift.settings.baseline_days, "recent_days": drift.settings.recent_days,
                         "threshold": drift.settings.threshold},
            "robots": {rid: {"model": s.model, "dates": s.dates, "flagged": rid in drift.flags,
                             "flags": drift.flags.get(rid, [])} for rid, s in drift.series.items()},
            "fleet": drift.fleet, "failed_groups": drift.failed, "file_errors": drift.file_errors,
            "notes": drift.notes}

