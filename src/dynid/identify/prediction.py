"""Predicting and validating on long logs in bounded memory (issue 18 section 4).

``predict`` and ``validate`` read each log as ``identify`` does: ``result.predict_chunks`` prepares
a file chunk by chunk (``data.stream``: overlapping windows per segment, O(chunk_rows + filter
margin) rows in memory) and evaluates the model's torques on each chunk. Here the chunks are
consumed as they come:

- ``prediction_columns`` turns them into column chunks ``t, tau1..taun`` (plus ``segment`` when
  a file has several segments, ``source`` when there are several files) at the log's own time
  stamps (rows dropped for NaN are left out, not filled in; an irregular log is predicted on its
  uniform grid, as the note of its resampling says) for a streaming writer
  (``data.convert.write_stream``), and sums the validation figures of the files that hold
  measured torques, so a prediction that explains none of them warns;
- ``validate_sources`` sums the figures of eq. 5.1 per file and over all files
  (``validation.ValidationSums``) on the interior samples (the filter's edge samples of every
  segment are left out, as in training).

Nothing holds a whole log: the peak memory of both commands is that of ``identify``'s streaming
pass, whatever the log's length (README, "Memory").
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from dynid.identify.plausibility import fit_warnings
from dynid.errors import DataError, DynidWarning
from dynid.identify.result import predict_chunks
from dynid.identify.validation import ValidationSums


def segment_column_needed(robot, result: dict, paths: list, mapping=None, prep_override: dict | None = None) -> bool:
    """Whether any file has several segments (then predictions carry a ``segment`` column): a
    first pass over the time columns alone (``data.stream.count_segments``), with the result's
    column mapping and segmentation unless overridden."""
    from dataclasses import replace

    from dynid.data.columns import ColumnMapping
    from dynid.data.preprocess import Preprocessing
    from dynid.data.stream import count_segments

    mapping = mapping or ColumnMapping.from_dict(result.get("column_mapping"))
    prep = replace(Preprocessing.from_dict(result["preprocessing"]), **(prep_override or {}))
    return any((count_segments(path, mapping, prep, robot) or 1) > 1 for path in paths)


def prediction_columns(robot, result: dict, paths: list, mapping=None, prep_override: dict | None = None,
                       segment_column: bool = False, chunk_rows: int = 50_000,
                       std: str | None = None, since_cold: float | None = None,
                       notes: list[str] | None = None) -> Iterator[dict]:
    """Column chunks {"t", "tau1"..,  ["std1"..], ["segment"], ["source"]} of the model's torques on
    every file in turn (module docstring); ``std`` "model" | "measurement": the standard deviation
    of each predicted torque (``bands.band_std``). Warns after the last chunk when the model
    explains none of the measured torque of a file (``identify.plausibility.fit_warnings``). since_cold: a
    drifting friction's operating time at each log's first sample (``result.predict_chunks``). ``notes``
    collects what reading did (rows dropped for NaN, resampling), each once, prefixed with the file
    when there are several: why a row of a log has no prediction."""
    from dynid.identify.bands import band_std

    for path in paths:
        sums = ValidationSums(robot.n)
        for chunk in predict_chunks(robot, result, path, mapping, chunk_rows, prep_override=prep_override,
                                    with_std=std is not None, since_cold=since_cold):
            if notes is not None:
                prefix = f"{path}: " if len(paths) > 1 else ""
                notes.extend(prefix + n for n in chunk["notes"] if prefix + n not in notes)
            if len(chunk["t"]) == 0:
                continue
            if chunk["tau"] is not None:
                k = chunk["interior"]
                sums.add(chunk["tau"][k], chunk["tau_hat"][k])
            own = slice(None) if chunk["filled"] is None else ~chunk["filled"]  # the log's own time stamps
            cols = {"t": chunk["t"][own]}
            cols.update({f"tau{j + 1}": chunk["tau_hat"][own, j] for j in range(robot.n)})
            if std is not None:
                band = band_std(chunk["tau_std"], result, std)
                cols.update({f"std{j + 1}": band[own, j] for j in range(robot.n)})
            if segment_column:
                cols["segment"] = chunk["segment"][own]
            if len(paths) > 1:
                cols["source"] = np.full(cols["t"].size, str(path))
            if cols["t"].size:
                yield cols
        if sums.samples:
            report = sums.report()
            for text in fit_warnings(report["relative_error"], report["relative_rmsd"], str(path),
                                     "the result's model", report["torque_scale"]):
                warnings.warn(DynidWarning(text), stacklevel=2)


def validate_sources(robot, result: dict, paths: list, mapping=None, prep_override: dict | None = None,
                     min_velocity: float = 0.0, chunk_rows: int = 50_000, since_cold: float | None = None) -> dict:
    """{str(path): report, ...} (and "overall" for several files): ``validation.validation_report``
    figures of each file on its interior samples, plus "segments" (count); a report that explains
    none of the torque warns (``fit_warnings``) and keeps the lines under "warnings"."""
    trained = {Path(p).resolve() for p in [result.get("data", "")] + [s["path"] for s in result.get("sources", [])]}
    reports, total = {}, ValidationSums(robot.n, min_velocity)
    for path in paths:
        sums, segments = ValidationSums(robot.n, min_velocity), set()
        for chunk in predict_chunks(robot, result, path, mapping, chunk_rows, prep_override=prep_override,
                                    since_cold=since_cold):
            if len(chunk["t"]) == 0:
                continue
            if chunk["tau"] is None:
                raise DataError(f"{path}: no torques (tau1..taun) or currents to validate against")
            k = chunk["interior"]
            sums.add(chunk["tau"][k], chunk["tau_hat"][k], chunk["dq"][k])
            segments.update(np.unique(chunk["segment"]).tolist())
        if sums.samples == 0:
            raise DataError(f"{path}: no sample left to validate on after preprocessing")
        report = sums.report()
        report["kind"] = "self" if Path(path).resolve() in trained else "cross"
        report["segments"] = len(segments)
        reports[str(path)] = report
        total.merge(sums)
    if len(paths) > 1:
        reports["overall"] = total.report()
    for where, report in reports.items():
        texts = fit_warnings(report["relative_error"], report["relative_rmsd"], where, "the result's model",
                             report["torque_scale"])
        for text in texts:
            warnings.warn(DynidWarning(text), stacklevel=2)
        if texts:
            report["warnings"] = texts
    return reports
