"""Demo step of the drift-aware model (docs/identification.md, "Friction that drifts"): the
training log identified with a friction that drifts from cold to warm (``identify
--friction-drift time``, with the OLS result's preprocessing), then the static and the
drift-aware models on the validation log recorded right after the test and on the same motion
recorded at a cold start (each log's ``since_cold`` column says when). Their relative errors
are the demo's headline, beside the noise floor (the simulated truth's error on the same samples:
the torque noise alone); the sentence of what the user can trust goes to summary.json."""

from __future__ import annotations

import json

import numpy as np

from dynid.data.io import atomic_write_text
from dynid.demo.workspace import Workspace

STATIC, DRIFT = "static OLS", "drift-aware OLS"
TRUTH = "simulated truth (torque noise alone)"  # the noise floor: no model predicts a log better


def identify(ws: Workspace) -> dict:
    """result_drift.json: OLS of the static model and the eq. 5.4 drift (``Identification`` with
    ``friction_drift="time"``, the OLS result's model and cross-validated cutoff)."""
    from dynid.identify.identification import Identification
    from dynid.identify.result import load_result, result_model

    static = load_result(ws.path("result"))
    options, _, _, prep = result_model(static)  # the same model and cross-validated cutoff
    idn = Identification(ws.robot, friction=options.friction, rotor_inertia=options.rotor_inertia,
                         offset=options.offset, smooth_sign=options.smooth_sign, friction_drift="time",
                         **Identification.preprocessing_options(prep), drift_rows=6000, seed=ws.settings.seed,
                         spec=ws.settings.robot)
    drift = idn.fit_files([ws.path("data")]).relative_to(ws.dir)  # not the hidden work directory's paths
    drift.save(ws.path("drift_result"))
    return drift.document


def _drift_size(ws: Workspace) -> str:
    """How much the simulated friction falls from cold to warm, in words."""
    if ws.thesis:
        return "thesis eq. 5.4, Table 5.6: cold friction 1.8 to 9.6 times the warm one"
    s = ws.settings
    return (f"simulated: cold friction {1 + s.drift_r1 + s.drift_r2:.3g} times the warm one, time constants "
            f"{s.drift_t1:g} s and {s.drift_t2:g} s")


def _relative_error(pred: dict, tau_hat: np.ndarray) -> float:
    """||tau - tau_hat|| / ||tau|| [%] over a prediction's interior samples (tau: the log's)."""
    keep = pred["interior"]
    return float(100.0 * np.linalg.norm(pred["tau"][keep] - tau_hat[keep]) / np.linalg.norm(pred["tau"][keep]))


def _error(ws: Workspace, label: str, result: dict, role: str) -> tuple[float, dict]:
    """(relative error [%] of a model on a demo log, interior samples; the prediction), the
    prediction kept for the report (``report.builder``: it renders what was predicted)."""
    from dynid.identify.prediction import predict_file

    shared = ws.state.setdefault("predictions", {}).setdefault(ws.path(role), {})
    if label not in shared:
        shared[label] = predict_file(ws.robot, result, ws.path(role))
    pred = shared[label]
    return _relative_error(pred, pred["tau_hat"]), pred


def _noise_floor(ws: Workspace, role: str, pred: dict) -> float | None:
    """The simulated truth's relative error [%] on the same samples as ``pred``: the torque noise
    alone, below which no model predicts the log (None when the simulation's torques are not at hand)."""
    t, tau_true = ws.state.get("true_torque", {}).get(role, (None, None))
    if t is None:
        return None
    rows = np.clip(np.searchsorted(t, pred["t"] - 1e-9), 0, len(t) - 1)
    if not np.allclose(t[rows], pred["t"], rtol=0.0, atol=1e-6):
        return None
    return _relative_error(pred, tau_true[rows])


def drift_model(ws: Workspace, progress) -> None:
    """Identify with a drifting friction, validate both models cold and warm, write the headline.
    A log that cannot determine the drift (too short, a joint that never moves) is said in a note."""
    from dynid.errors import DynidError
    from dynid.identify.result import load_result

    try:
        drift = identify(ws)
    except DynidError as exc:
        ws.notes.append(f"the drift-aware model was not identified: {exc}")
        progress(1.0)
        return
    progress(0.6)
    static = load_result(ws.path("result"))
    labels = {STATIC: static["estimator"], DRIFT: f"{drift['estimator']} + drift"}  # the report's labels
    errors, floor = {}, {}
    for label, result in ((STATIC, static), (DRIFT, drift)):
        for role in ("validation", "validation_cold"):
            errors[label, role], pred = _error(ws, labels[label], result, role)
            floor[role] = _noise_floor(ws, role, pred)
    errors[DRIFT, "training"] = 100.0 * drift["fit"]["relative_error"]
    errors[STATIC, "training"] = 100.0 * static["fit"]["relative_error"]
    table = {label: {role: errors[label, role] for role in ("training", "validation", "validation_cold")}
             for label in (STATIC, DRIFT)}
    known = None not in floor.values()
    if known:
        table[TRUTH] = dict(floor)
    atomic_write_text(ws.dir / "validation_drift.json", json.dumps(table, indent=2) + "\n")
    headline = {
        f"validation error, {DRIFT}, log right after the test [%]": errors[DRIFT, "validation"],
        f"validation error, {STATIC} (cold and warm friction averaged), same log [%]": errors[STATIC, "validation"],
        f"validation error, {DRIFT}, log at a cold start [%]": errors[DRIFT, "validation_cold"],
        f"validation error, {STATIC}, log at a cold start [%]": errors[STATIC, "validation_cold"],
        f"fit error on the training log, {DRIFT} / {STATIC} [%]":
            f"{errors[DRIFT, 'training']:.3g} / {errors[STATIC, 'training']:.3g}",
    }
    if known:
        headline[f"validation error of the {TRUTH}, log right after the test / at a cold start [%]"] = \
            f"{floor['validation']:.3g} / {floor['validation_cold']:.3g}"
    ws.headline.update(headline)
    ws.figures.pop("validation relative error ols [%]", None)  # the headline's static OLS figure, same log
    ws.figures.update(headline)
    tc = np.array(drift["friction_drift"]["time_constants"], dtype=float) / 60.0
    ws.figures["drift-aware model: fast time constants t2 per joint [min]"] = ", ".join(f"{v:.3g}" for v in tc[:, 1])
    rel = [p["relative_std"] for p in static["base_parameters"] if p["relative_std"] is not None]
    ws.trust = (f"What you can trust: the model whose friction drifts from cold to warm predicts a separate log "
                f"recorded right after the test to {errors[DRIFT, 'validation']:.3g} % and one recorded at a cold "
                f"start to {errors[DRIFT, 'validation_cold']:.3g} % (its own training log: "
                f"{errors[DRIFT, 'training']:.3g} %"
                + (f"; the {TRUTH}: {floor['validation']:.3g} % and {floor['validation_cold']:.3g} %" if known else "")
                + f"), while the static model, whose friction is the test's "
                f"average, misses them by {errors[STATIC, 'validation']:.3g} % and "
                f"{errors[STATIC, 'validation_cold']:.3g} %; {sum(r < 5 for r in rel)} of the {len(rel)} base "
                f"parameters are determined to better than 5 %.")
    ws.notes.append(
        f"the static model (OLS) misses the validation log recorded right after the test by "
        f"{errors[STATIC, 'validation']:.3g} % and the same motion at a cold start by "
        f"{errors[STATIC, 'validation_cold']:.3g} %: fitted to the whole test, its friction is the test's average "
        f"of a friction that falls from cold to warm ({_drift_size(ws)}). The drift-aware "
        f"model (identify --friction-drift time) fits each joint's slow and fast time constants with the rest and "
        f"predicts each log at its own time since the cold start (its since_cold column): "
        f"{errors[DRIFT, 'validation']:.3g} % and {errors[DRIFT, 'validation_cold']:.3g} % "
        "(result_drift.json, validation_drift.json)")
    progress(1.0)
