"""Calibrating the drives from logs: read, prepare, fit the gains (``gains``), report.

The logs hold motor currents ``i1..in`` (no torques); they are read with unit gains, so the
prepared "torque" of a sample is its current [A], filtered and aligned as ``identify`` would
a torque. Every log is prepared alone (its segments too), as in ``identify``; the logs without
and with the load add their rows to one set of per-joint normal equations (``GainEquations``).
The result (``DriveGains.to_dict``, docs/formats.md "drive gains") holds the gains with their
standard deviations, the string that ``--current-gain`` takes (or the file itself), the
robot's base parameters in torque units and the load's unknown parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from dynid.data.bags import is_bag
from dynid.data.columns import ColumnMapping
from dynid.data.preprocess import Preprocessing
from dynid.data.sources import header_names
from dynid.drives.gains import GainEquations, GainFit, KnownLoad, fit_gains, gain_names
from dynid.errors import DataError
from dynid.identify.base import base_parameters
from dynid.identify.model import ModelOptions
from dynid.identify.pipeline import prepared_sources


def unit_gains(robot, mapping: ColumnMapping) -> ColumnMapping:
    """``mapping`` reading currents as they are logged (K = 1 on every joint)."""
    return replace(mapping, current_gain=",".join(["1"] * robot.n))


def check_currents(robot, paths, mapping: ColumnMapping) -> None:
    """Each file holds currents i1..in and no torques (then the gains would not be used)."""
    for path in paths:
        if is_bag(path):  # a bag's effort is read as currents when a gain is given (data/bags.py)
            continue
        names = set(header_names(path, mapping))
        if "tau1" in names:
            raise DataError(f"{path}: the log has torques (tau1..tau{robot.n}); drive gains are calibrated from motor "
                            f"currents i1..i{robot.n} (rename the current columns with --rename, e.g. cur1=i1)")
        missing = [f"i{j + 1}" for j in range(robot.n) if f"i{j + 1}" not in names]
        if missing:
            raise DataError(f"{path}: no current column(s) {missing}; drive gains are calibrated from motor currents "
                            f"i1..i{robot.n} (map yours with --rename)")


@dataclass
class DriveGains:
    """A calibration: the fit (``gains.GainFit``), its parameter names, the load, what was read."""

    fit: GainFit
    names: list
    load: KnownLoad
    unknown: np.ndarray
    base_rank: int
    options: ModelOptions
    prep: Preprocessing
    samples: dict
    notes: list
    extra: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.names) - self.base_rank - self.unknown.size

    def gains(self) -> tuple[np.ndarray, np.ndarray]:
        return self.fit.gains(self.n)

    def current_gain_text(self) -> str:
        """The ``--current-gain`` value: the gains, comma-separated, to 7 significant digits."""
        return ",".join(f"{k:.7g}" for k in self.gains()[0])

    def to_dict(self) -> dict:
        """docs/formats.md "drive gains JSON": strict JSON (an unknown the logs do not determine
        is null, with the reason beside it; never a bare NaN)."""
        n, b, u = self.n, self.base_rank, self.unknown.size
        std = np.sqrt(np.maximum(np.diag(self.fit.cov), 0.0))

        def entry(k: int) -> dict:
            if not np.isfinite(self.fit.x[k]):  # gains.fit_gains: held at 0, not determined
                return {"name": self.names[k], "value": None, "std": None,
                        "note": "not determined by the logs (held at 0 in the fit)"}
            return {"name": self.names[k], "value": float(self.fit.x[k]), "std": _finite(std[k])}

        gains, gain_std = self.gains()
        out = {"format": "dynid-drive-gains", "method": self.fit.method,
               "gains": [float(k) for k in gains], "std": [_finite(s) for s in gain_std],
               "relative_std": [_finite(s / abs(k)) for k, s in zip(gains, gain_std)],
               "current_gain": self.current_gain_text(), "load": self.load.to_dict(),
               "load_unknown": [entry(b + i) for i in range(u)],
               "base_parameters": [entry(k) for k in range(b)],
               "model": self.options.to_dict(), "preprocessing": self.prep.to_dict(),
               "fit": {"rms_current": [float(v) for v in self.fit.rms_current],
                       "condition_number": _finite(self.fit.cond)},
               "samples": dict(self.samples), "notes": list(self.notes) + list(self.fit.notes)}
        out.update(self.extra)
        if self.fit.svd_gains is not None:
            out["tls_svd_gains"] = [float(k) for k in self.fit.svd_gains]
        return out


def _finite(x) -> float | None:
    """x as a JSON number, or null when it is not finite."""
    return float(x) if np.isfinite(x) else None


def calibrate_drives(robot, unloaded, loaded, load: KnownLoad, options: ModelOptions = ModelOptions(),
                     prep: Preprocessing = Preprocessing(), mapping: ColumnMapping = ColumnMapping(),
                     method: str = "tls", nan: str = "drop", max_condition: float = 1e7,
                     notes: list | None = None) -> DriveGains:
    """The drive gains of ``robot`` from current logs without (``unloaded``) and with
    (``loaded``) the known ``load`` (module docstring); ``prep``: their preprocessing."""
    if robot.is_coupled:
        raise DataError(f"robot '{robot.name}' has a coupled transmission: drive gains are calibrated per joint and "
                        "not yet per coupled motor")
    unloaded, loaded = list(unloaded), list(loaded)
    if not unloaded or not loaded:
        raise DataError("drive gains need logs without the load (--unloaded) and with it (--loaded)")
    mapping = unit_gains(robot, mapping)
    check_currents(robot, unloaded + loaded, mapping)
    base = base_parameters(robot, options)
    known, values, unknown = load.split()
    eqs = GainEquations.empty(robot.n, base.rank, unknown.size)
    read_notes = []
    for paths, with_load in ((unloaded, None), (loaded, load)):
        for ready in prepared_sources(robot, paths, options, mapping, prep, nan):
            eqs.add_log(robot, ready, options, base, prep, with_load)
            read_notes += [f"{ready.source}: {note}" for note in ready.notes if not note.startswith("torques from")]
    names = gain_names(base.names, unknown, robot.n)
    pc = None
    if method == "pc":
        from dynid.drives.gains_pc import consistent_fit
        pc = consistent_fit(robot, options, base, known, values, unknown)
    fit = fit_gains(eqs, names, method, pc, max_condition)
    return DriveGains(fit, names, load, unknown, base.rank, options, prep, dict(eqs.samples),
                      list(notes or []) + list(dict.fromkeys(read_notes)))


def calibrate_with_cutoff(robot, unloaded, loaded, load: KnownLoad, options: ModelOptions = ModelOptions(),
                          prep: Preprocessing = Preprocessing(), mapping: ColumnMapping = ColumnMapping(),
                          method: str = "tls", nan: str = "drop", max_condition: float = 1e7,
                          lowpass: float | str | None = "auto", lowpass_fallback: bool = True,
                          rest: str = "auto") -> DriveGains:
    """``calibrate_drives`` with the preprocessing steps of ``identify`` (``dynid.Identification``,
    same options and defaults): ``rest="auto"`` measures the rest bands on every log (each rest's
    held current a level of its own, ``gains.GainEquations.add_log``); ``lowpass="auto"``
    chooses the cutoff as ``identify`` does (its folds, condition limit and, with
    ``lowpass_fallback``, the fixed default min(20 Hz, fs/10) with a note for a log too short
    for the folds; without it, an error), on the logs without the load read as torques with
    the gains of a first calibration at that default cutoff: a model fitted to raw currents
    would be wrong by each joint's gain, and so would its cross-validation. A number: that
    cutoff [Hz] (0 = off); None: the default. The result's "lowpass_selection" is that of the
    second pass, "rest_detection" the bands'."""
    from dynid.identify.identification import Identification

    given = {**Identification.preprocessing_options(prep), "lowpass": lowpass, "rest": rest,
             "filter_torque": None if lowpass == "auto" else prep.filter_torque}  # None: chosen, as identify
    idn = Identification(robot, friction=options.friction, offset=options.offset, rotor_inertia=options.rotor_inertia,
                         smooth_sign=options.smooth_sign, lowpass_fallback=lowpass_fallback, nan=nan,
                         max_condition=max_condition, **given)
    rested, extra, notes = idn.rest_detection(list(unloaded) + list(loaded), unit_gains(robot, mapping))
    if lowpass == "auto":
        first = calibrate_drives(robot, unloaded, loaded, load, options, replace(rested, lowpass_hz=None), mapping,
                                 "tls", nan, max_condition)
        torques = replace(mapping, current_gain=first.current_gain_text())
        rested, extra["lowpass_selection"], more = idn.cutoff_selection(list(unloaded), torques,
                                                                        base_parameters(robot, options), rested)
        notes += more
    out = calibrate_drives(robot, unloaded, loaded, load, options, rested, mapping, method, nan, max_condition, notes)
    out.extra.update(extra)
    return out
