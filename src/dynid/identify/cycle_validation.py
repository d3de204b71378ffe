"""Per-cycle (or per-stage) verification, thesis 5.1.2-5.1.4, Tables 5.1-5.3 and F.x, Figs 5.4-5.7.

The thesis scores a model by the RMSD of eq. 5.1 and its relative value, cycle by cycle, with
and without the low-velocity samples (5.1.3), for three kinds of parameters:

- ``own``   (self-verification): each cycle's torques predicted by the parameters identified
  on that very cycle (ordinary least squares, the thesis' estimator);
- ``paired`` (cross-verification, Figs 5.6-5.7): each cycle of another test predicted by the
  parameters identified on the same cycle of the reference test (a result written by
  ``dynid identify --per cycle``);
- ``whole``: each cycle predicted by one model (the result's own parameters: the whole log,
  a group of cycles (``--cycles``) or another test).

For every kind and cycle: RMSD_j, relative RMSD_j = RMSD_j / RMS(tau_j) (``validation``) over
all interior samples and over the samples with |dq_j| >= ``min_velocity`` ("moving"), and the
thesis statistics of the relative RMSD over the cycles (``cycle_stats``: Mean, MIN, MAX, D/MM,
D/SE, Sdv, all cycles and without the first k: the columns of Tables F.x; Table 5.3 is the
mean without the first 5). Samples are scored in blocks, so memory stays bounded by a block.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dynid.data.columns import ColumnMapping, JointData
from dynid.data.preprocess import edge_mask, edge_samples, prepare, sample_rate, segments
from dynid.errors import DataError
from dynid.identify.cycle_stats import default_skip_first, statistics_to_json, thesis_statistics
from dynid.identify.drift import log_covariate, stored_drift, trained_entry
from dynid.identify.model import identification_regressor, own_columns

BLOCK = 20_000  # samples per regressor evaluation


def _figures(err2, tau2, count) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        rmsd = np.sqrt(err2 / np.maximum(count, 1))
        rms = np.sqrt(tau2 / np.maximum(count, 1))
        rel = np.where((rms > 0) & (count > 0), rmsd / np.where(rms > 0, rms, 1.0), np.nan)
    return np.where(count > 0, rmsd, np.nan), rel


def score_segments(robot, ready: JointData, options, base, parameters: dict, by: str = "cycle",
                   min_velocity: float = 0.05, keep: np.ndarray | None = None, added: dict | None = None) -> dict:
    """RMSD figures per segment for each set of parameters.

    ready: prepared data (q, dq, ddq, tau); parameters: kind -> beta (b,) for every segment,
    or kind -> {label: beta (b,)} (segments without a beta are skipped for that kind);
    keep: (N,) samples to score (default: all); added: kind -> (N, n) torque added to that kind's
    model (a friction drift's, ``identify.drift``). Returns {"labels", kind: {"rmsd", "relative_rmsd",
    "moving_rmsd", "moving_relative_rmsd" (C, n) lists, "samples" (C,), "moving_samples" (C, n)}}.
    """
    if ready.tau is None:
        raise DataError(f"{ready.source}: no torques (tau1..taun) or currents to validate against")
    segs = segments(ready, by)
    n = robot.n
    sums = {kind: np.zeros((len(segs), 6, n)) for kind in parameters}  # err2, tau2, count; moving: same
    for c, (label, idx) in enumerate(segs):
        if keep is not None:
            idx = idx[keep[idx]]
        wanted = {k: (p if not isinstance(p, dict) else p.get(label)) for k, p in parameters.items()}
        wanted = {k: np.asarray(b, dtype=float) for k, b in wanted.items() if b is not None}
        for s in range(0, idx.size, BLOCK):  # blocks of samples, not single samples
            rows = idx[s:s + BLOCK]
            y = identification_regressor(robot, ready.q[rows], ready.dq[rows], ready.ddq[rows], options)
            y = y[..., base.independent]
            tau = ready.tau[rows]
            moving = np.abs(ready.dq[rows]) >= min_velocity
            for kind, beta in wanted.items():
                model = y @ beta if kind not in (added or {}) else y @ beta + added[kind][rows]
                err2 = (model - tau) ** 2
                acc = sums[kind][c]
                acc[0] += err2.sum(0)
                acc[1] += (tau**2).sum(0)
                acc[2] += tau.shape[0]
                acc[3] += np.where(moving, err2, 0.0).sum(0)
                acc[4] += np.where(moving, tau**2, 0.0).sum(0)
                acc[5] += moving.sum(0)
    out = {"labels": [label for label, _ in segs]}
    for kind, acc in sums.items():
        rmsd, rel = _figures(acc[:, 0], acc[:, 1], acc[:, 2])
        m_rmsd, m_rel = _figures(acc[:, 3], acc[:, 4], acc[:, 5])
        out[kind] = {"rmsd": rmsd, "relative_rmsd": rel, "moving_rmsd": m_rmsd, "moving_relative_rmsd": m_rel,
                     "samples": acc[:, 2, 0].astype(int), "moving_samples": acc[:, 5].astype(int)}
    return out


def own_parameters(robot, ready: JointData, options, base, prep, by: str = "cycle") -> tuple[dict, dict]:
    """({label: beta} of each segment identified alone by OLS, {label: reason} of those that failed)."""
    from dynid.identify.pipeline import fit_data, make_estimator

    betas, failed = {}, {}
    for label, idx in segments(ready, by):
        try:
            est = fit_data(robot, ready.select(idx), options, base, make_estimator("ols", robot, options, base),
                           prep, prepared=True)
            betas[label] = est.coef_
        except (DataError, np.linalg.LinAlgError) as exc:  # a short or static segment: reported, not fatal
            failed[label] = str(exc)
    return betas, failed


def validate_segments(robot, data: JointData, result: dict, by: str = "cycle", min_velocity: float = 0.05,
                      skip_first: int | None = None, self_data: bool = False, mapping=None,
                      since_cold: float | None = None) -> dict:
    """Per-segment verification of ``result`` on raw joint data (module docstring).

    self_data: ``data`` is the log the result was identified on (its per-cycle values, when
    stored, are then the ``own`` parameters). A result with a friction drift scores its ``whole``
    model with the drift at the log's operating time (``since_cold``, else the log's column or
    the identification's record; ``mapping``: the log's layout). Returns a JSON-ready dict.
    """
    from dynid.identify.result import result_model

    if "base" not in result:
        raise DataError("per-cycle validation needs a least-squares or PC result of 'dynid identify' "
                        "(this result has no base-parameter model)")
    options, base, beta, prep = result_model(result)
    labels_column = data.cycle if by == "cycle" else data.stage
    if labels_column is None:
        raise DataError(f"{data.source}: no '{by}' column; --per {by} needs the {by} of every sample")
    fit_prep = replace(prep, decimate=1)
    ready = prepare(data, fit_prep, joint_columns=own_columns(robot, options))
    interior = edge_mask(len(ready), edge_samples(fit_prep, sample_rate(ready.t)))
    stored = result.get(f"per_{by}")
    stored_betas = None
    if stored and stored.get("values") is not None:
        stored_betas = {str(k): np.asarray(v, dtype=float) for k, v in zip(stored["labels"], stored["values"])}
    parameters: dict = {"whole": beta}
    failed = {}
    if self_data and stored_betas is not None:
        parameters["own"] = stored_betas
    else:
        parameters["own"], failed = own_parameters(robot, ready, options, base, fit_prep, by)
        if stored_betas is not None:
            parameters["paired"] = stored_betas
    added = None
    stored = stored_drift(result, options)
    if stored is not None:  # the whole model's drifting friction (identify.drift)
        timing = log_covariate(stored[0].mode, data.source, mapping or ColumnMapping.from_dict(
            result.get("column_mapping")), robot.n, since_cold, trained_entry(result, data.source))
        added = {"whole": stored[0].torque(ready.dq, timing.at(ready.t))}
    scores = score_segments(robot, ready, options, base, parameters, by, min_velocity, interior, added)
    if skip_first is None:  # the thesis' 5 of 24, scaled to the cycles present
        skip_first = default_skip_first(len(scores["labels"]))
    out = {"by": by, "labels": scores["labels"], "min_velocity": min_velocity, "skip_first": skip_first,
           "kinds": {}, "failed": failed, "source": data.source}
    for kind in parameters:
        s = scores[kind]
        block = {k: _lists(v) for k, v in s.items()}
        rel = s["moving_relative_rmsd"] if min_velocity > 0 else s["relative_rmsd"]
        ok = np.all(np.isfinite(rel), axis=1)
        if ok.sum() >= 1 and by == "cycle":
            stats = thesis_statistics(rel[ok], np.asarray(scores["labels"])[ok], skip_first)
            block["statistics"] = statistics_to_json(stats, [f"joint {j + 1}" for j in range(robot.n)])
        out["kinds"][kind] = block
    return out


def _lists(a) -> list:
    """JSON lists of (C,) or (C, n) arrays; non-finite floats become None."""
    a = np.asarray(a)
    if a.dtype.kind in "iu":
        return a.tolist()
    return np.where(np.isfinite(a), a, None).tolist()


def stage_start_end(robot, data: JointData, result: dict, stage: str = "warming", cycle=None,
                    seconds: float | None = None, mapping=None, since_cold: float | None = None) -> dict:
    """Thesis Fig. 5.15: the model errors at the start and at the end of one stage of one cycle
    (default: the first cycle's warming stage, where the friction still falls fast).

    Two models: ``own``, the cycle's own OLS parameters (the thesis' per-cycle identification),
    and ``whole``, the result's model (with its friction drift when it has one). Windows: the
    first and the last ``seconds`` of the stage (default a quarter of it, at most 20 s).
    Returns {"cycle", "stage", "seconds", "windows": {"start"|"end": {"t", "tau", "own", "whole"}
    (lists)}, "rmsd": {"start"|"end": {"own", "whole"} (n,)}}."""
    from dynid.identify.pipeline import fit_data, make_estimator
    from dynid.identify.result import result_model

    options, base, beta, prep = result_model(result)
    if data.cycle is None or data.stage is None:
        raise DataError(f"{data.source}: Fig. 5.15 needs the 'cycle' and 'stage' columns")
    fit_prep = replace(prep, decimate=1)
    ready = prepare(data, fit_prep, joint_columns=own_columns(robot, options))
    cycles = [label for label, _ in segments(ready, "cycle")]
    label = cycles[0] if cycle is None else str(cycle)
    if label not in cycles:
        raise DataError(f"{data.source}: no cycle {label} (cycles {cycles[0]}..{cycles[-1]})")
    in_cycle = np.flatnonzero(np.asarray(ready.cycle).astype(str) == label)
    rows = in_cycle[np.asarray(ready.stage)[in_cycle].astype(str) == stage]
    if rows.size < 4:
        raise DataError(f"{data.source}: cycle {label} has no '{stage}' stage (stages "
                        f"{sorted(set(np.asarray(ready.stage).astype(str).tolist()))})")
    t = ready.t[rows]
    span = float(t[-1] - t[0])
    seconds = min(20.0, span / 4.0) if seconds is None else float(seconds)
    if not 0 < seconds <= span / 2:
        raise DataError(f"--stage-seconds {seconds:g}: expected a window in (0, {span / 2:g}] s of the "
                        f"{span:.4g} s stage")
    own = fit_data(robot, ready.select(in_cycle), options, base, make_estimator("ols", robot, options, base),
                   fit_prep, prepared=True).coef_
    stored = stored_drift(result, options)
    windows, rmsd = {}, {}
    for name, pick in (("start", rows[t <= t[0] + seconds]), ("end", rows[t >= t[-1] - seconds])):
        y = identification_regressor(robot, ready.q[pick], ready.dq[pick], ready.ddq[pick], options)
        y = y[..., base.independent]
        whole = y @ beta
        if stored is not None:
            timing = log_covariate(stored[0].mode, data.source, mapping or ColumnMapping.from_dict(
                result.get("column_mapping")), robot.n, since_cold, trained_entry(result, data.source))
            timing.t_first = float(ready.t[0])
            whole = whole + stored[0].torque(ready.dq[pick], timing.at(ready.t[pick]))
        tau = ready.tau[pick]
        windows[name] = {"t": ready.t[pick].tolist(), "tau": tau.tolist(), "own": (y @ own).tolist(),
                         "whole": whole.tolist()}
        rmsd[name] = {"own": np.sqrt(np.mean((y @ own - tau) ** 2, axis=0)).tolist(),
                      "whole": np.sqrt(np.mean((whole - tau) ** 2, axis=0)).tolist()}
    return {"cycle": label, "stage": stage, "seconds": seconds, "windows": windows, "rmsd": rmsd,
            "whole_has_drift": stored is not None}
