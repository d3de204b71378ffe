"""Predicting and validating on long logs in bounded memory (issue 18 section 4).

``predict`` and ``validate`` read each log as ``identify`` does: ``predict_chunks`` prepares
a file (or arrays in memory, ``data.arrays.ArrayLog``) chunk by chunk (``data.stream``:
overlapping windows per segment, O(chunk_rows + filter margin) rows in memory) and evaluates
the model's torques on each chunk. Here the chunks are
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
from dataclasses import replace
from pathlib import Path

import numpy as np

from dynid.data.arrays import ArrayLog
from dynid.data.columns import ColumnMapping
from dynid.data.stream import prepared_chunks, with_edges
from dynid.errors import DataError, DynidWarning
from dynid.identify.bands import parameter_covariance, torque_std
from dynid.identify.drift import log_covariate, stored_drift, trained_entry
from dynid.identify.model import identification_regressor
from dynid.identify.plausibility import fit_warnings
from dynid.identify.result import result_model
from dynid.identify.threads import single_blas_thread
from dynid.identify.validation import ValidationSums


PREDICT_BLOCK = 8192  # samples per regressor evaluation in ``predict_chunks``


def predict_chunks(robot, result: dict, path, mapping: ColumnMapping | None = None, chunk_rows: int = 50_000,
                   filter_torque: bool = False, prep_override: dict | None = None,
                   with_std: bool = False, since_cold: float | None = None) -> Iterator[dict]:
    """Model torques on a data file, chunk by chunk (bounded memory: ``data.stream``), preprocessed
    as in training (without decimation). Each chunk: {"t" (N,), "tau_hat" (N, n), "tau" (N, n) or
    None (measured, unfiltered unless ``filter_torque``), "q", "dq", "ddq" (N, n) the preprocessed
    motion the torques are computed from, "interior" (N,) False for the
    ``edge_samples`` at both ends of every segment (a segment shorter than both is predicted whole,
    with a note: ``data.stream.prepared_chunks(keep_short=True)``), "segment" (N,) segment index
    (``data.segments``), "stage" (N,) the log's stage labels or None, "notes", "filled" (N,) True
    where resampling filled a hole of the log (rows dropped for NaN), or None}; chunks of length 0
    carry only notes. A torque that is not finite (parameters of
    absurd size) is an error. prep_override: preprocessing fields to change ({"segments": "auto"}).
    with_std: each chunk also holds "tau_std" (N, n), the standard deviation of each predicted
    torque from the parameter covariance (``bands.torque_std``; needs the result's "covariance").
    A result with a friction drift (``identify.drift``) adds the drift's torque at the log's
    operating time (``since_cold``: seconds since the cold start at its first sample, inf for
    warm; else the log's ``since_cold`` column or the identification's record) or temperatures."""
    if result["n"] != robot.n:
        raise DataError(f"result has n = {result['n']} joints but robot '{robot.name}' has {robot.n}")
    options, base, beta, prep = result_model(result)
    prep = replace(prep, decimate=1, min_velocity=0.0, filter_torque=filter_torque, **(prep_override or {}))
    mapping = mapping or ColumnMapping.from_dict(result.get("column_mapping"))
    cov = parameter_covariance(result) if with_std else None
    drift = stored_drift(result, options)
    if drift is not None:
        drift, drift_cov = drift
        covariate = log_covariate(drift.mode, path, mapping, robot.n, since_cold, trained_entry(result, path))
        coefficients = np.nan_to_num(drift.coefficients).reshape(-1)
        if with_std:
            if drift_cov is None:
                raise DataError("the result holds no covariance of its friction drift (friction_drift.covariance)")
            cov = drift_cov
    with single_blas_thread():  # see pipeline.accumulate_sources
        for chunk, keep, _ in with_edges(prepared_chunks(path, robot, mapping, prep, chunk_rows, keep_short=True), prep):
            tau_hat = np.empty((len(chunk), robot.n))
            tau_std = None if cov is None else np.empty((len(chunk), robot.n))
            for s in range(0, len(chunk), PREDICT_BLOCK):
                sl = slice(s, s + PREDICT_BLOCK)
                y = identification_regressor(robot, chunk.q[sl], chunk.dq[sl], chunk.ddq[sl], options)
                y = y[..., base.independent]
                if drift is not None:  # the drift's own columns, placed after the base parameters
                    load = drift.load(robot, chunk.q[sl], chunk.dq[sl], chunk.ddq[sl])
                    own = drift.columns(chunk.dq[sl], covariate.at(chunk.t[sl]), load)
                    y = np.concatenate([y, drift.place(own)], axis=2)
                tau_hat[sl] = y @ (beta if drift is None else np.concatenate([beta, coefficients]))
                if cov is not None:
                    tau_std[sl] = torque_std(y, cov)
            if not np.all(np.isfinite(tau_hat)):
                k = int(np.flatnonzero(~np.all(np.isfinite(tau_hat), axis=1))[0])
                raise DataError(f"{path}: the model's torque is not finite at t = {chunk.t[k]:.6g} s; the result's "
                                f"parameters (largest |value| {np.max(np.abs(beta)):.3g}) cannot be right")
            segment = np.zeros(len(chunk), dtype=np.int64) if chunk.segment is None else chunk.segment
            out = {"t": chunk.t, "tau_hat": tau_hat, "tau": chunk.tau, "q": chunk.q, "dq": chunk.dq, "ddq": chunk.ddq,
                   "interior": keep, "segment": segment, "stage": chunk.stage, "notes": list(chunk.notes),
                   "filled": chunk.filled}
            if cov is not None:
                out["tau_std"] = tau_std
            yield out


def predict_file(robot, result: dict, path, mapping: ColumnMapping | None = None, chunk_rows: int = 50_000,
                 filter_torque: bool = False, prep_override: dict | None = None, with_std: bool = False,
                 since_cold: float | None = None) -> dict:
    """``predict_chunks`` of a whole file in memory: the same keys, arrays over all samples
    ("tau" None when the file has no torques; "tau_std" with ``with_std``); for long logs prefer
    the chunks."""
    parts = {key: [] for key in ("t", "tau_hat", "tau", "q", "dq", "ddq", "interior", "segment", "stage")
             + (("tau_std",) if with_std else ())}
    notes = []
    for chunk in predict_chunks(robot, result, path, mapping, chunk_rows, filter_torque, prep_override, with_std,
                                since_cold):
        notes.extend(chunk["notes"])
        if len(chunk["t"]) == 0:
            continue
        for key, values in parts.items():
            if chunk[key] is not None:
                values.append(chunk[key])
    out = {key: np.concatenate(values) if values else None for key, values in parts.items()}
    out["notes"] = list(dict.fromkeys(notes))
    return out


def predict_models(robot, models: list[tuple[str, dict]], path, with_std: bool = False) -> dict:
    """{label: ``predict_file`` output} of each (label, result) on one log; ``with_std``: with the
    standard deviation of the predicted torque ("tau_std") for the results that hold a
    covariance. What the report shows of a log, computed once (``report.builder.load_context``,
    the demo's validation step)."""
    return {label: predict_file(robot, result, path, with_std=with_std and "covariance" in result)
            for label, result in models}


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
    figures of each file on its interior samples, plus "segments" (count) and "notes" (what
    reading it did: a truncated last line dropped, rows with NaN...); a report that explains
    none of the torque warns (``fit_warnings``) and keeps the lines under "warnings"."""
    trained = {Path(p).resolve() for p in [result.get("data", "")] + [s["path"] for s in result.get("sources", [])]}
    trained_on = lambda path: Path(path).resolve() in trained if not isinstance(path, ArrayLog) else False  # noqa: E731
    reports, total = {}, ValidationSums(robot.n, min_velocity)
    for path in paths:
        sums, segments, notes = ValidationSums(robot.n, min_velocity), set(), []
        for chunk in predict_chunks(robot, result, path, mapping, chunk_rows, prep_override=prep_override,
                                    since_cold=since_cold):
            notes.extend(chunk["notes"])
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
        report["kind"] = "self" if trained_on(path) else "cross"
        report["segments"] = len(segments)
        report["notes"] = list(dict.fromkeys(notes))  # what reading did: rows dropped, resampled, a part read
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
