"""Demo steps that study the data: identification (OLS per cycle, physically consistent),
cross-validation, friction drift, the KR500 per-body identification, export and report."""

from __future__ import annotations

import json

import numpy as np

from dynid.data.io import atomic_write_text
from dynid.demo.workspace import Workspace, skip_first


def identify(ws: Workspace, progress) -> None:
    """Least squares on the whole log and on each cycle (parameter evolution), with the essential
    parameters and the low-pass cutoff chosen by cross-validation; PC on the whole log."""
    from dynid.identify.identification import Identification

    options = ws.model_options()
    idn = Identification(ws.robot, friction=options.friction, lowpass_fallback=False, seed=ws.settings.seed,
                         excitation=ws.state.get("trajectory"),  # its highest harmonic narrows the cutoff grid
                         per="cycle", skip_first=skip_first(ws), essential=True, spec=ws.settings.robot)
    ols = idn.fit_files([ws.path("data")]).relative_to(ws.dir)
    ws.figures["low-pass cutoff chosen by cross-validation [Hz]"] = ols.document["lowpass_selection"]["chosen_hz"]
    ols.save(ws.path("result"))
    progress(0.7)
    pc = idn.clone(estimator="pc", **Identification.preprocessing_options(ols.preprocessing), per=None,
                   essential=False).fit_files(
        [ws.path("data")]).relative_to(ws.dir)
    pc.save(ws.path("pc_result"))
    rel = [p["relative_std"] for p in ols.document["base_parameters"] if p["relative_std"] is not None]
    ws.figures["base parameters"] = len(ols.names)
    ws.figures["condition number of the fit"] = ols.document["fit"]["condition_number"]
    ws.figures["base parameters with %sigma < 5"] = int(sum(r < 5 for r in rel))
    ws.figures["PC smallest pseudo-inertia eigenvalue"] = float(min(pc.document["lmi_min_eigenvalues"]))
    progress(1.0)


def validate(ws: Workspace, progress) -> None:
    """Both models on the separate validation log: RMSD per joint and the relative error."""
    from dynid.identify.prediction import predict_models
    from dynid.identify.result import load_result
    from dynid.identify.validation import validation_report

    results = [load_result(ws.path(role)) for role in ("result", "pc_result")]
    preds = predict_models(ws.robot, [(r["estimator"], r) for r in results], ws.path("validation"), with_std=True)
    ws.state["predictions"] = {ws.path("validation"): preds}  # the report shows these (report.builder)
    progress(0.8)
    reports = {}
    for label, pred in preds.items():
        keep = pred["interior"]
        report = validation_report(pred["tau"][keep], pred["tau_hat"][keep], pred["dq"][keep], 0.05)
        reports[label] = report
        ws.figures[f"validation relative error {label} [%]"] = 100.0 * report["relative_error"]
    atomic_write_text(ws.dir / "validation.json", json.dumps(reports, indent=2) + "\n")


def friction(ws: Workspace, progress) -> None:
    """Friction plateaus of the friction stage in every cycle and the eq. 5.4 drift fits."""
    from dynid.friction import load_and_analyze

    analysis = load_and_analyze(ws.robot, ws.path("data"), seed=ws.settings.seed)
    analysis.to_json(ws.path("friction"))
    progress(0.6)
    from dynid.demo.verify import drift_table
    drift_table(ws)
    d = analysis.to_dict()
    fits = [e for e in d["drift"] if e["parameters"].get("t1") is not None]
    ws.figures["friction drift fits (eq. 5.4)"] = len(fits)
    if fits:
        label = ("drift t1 median [s] of the per-level fits (Table 5.6: 770..3393 s)" if ws.thesis
                 else "drift t1 median [s] (simulated %g)" % ws.settings.drift_t1)
        ws.figures[label] = float(np.median([e["parameters"]["t1"] for e in fits]))
    progress(1.0)


def multibody(ws: Workspace, progress) -> None:
    """The seed papers' KR500 experiment: body data, then each body's mass and principal moments."""
    from dynid.multibody.bodydata import read_body_data
    from dynid.multibody.coordinates import angular_form
    from dynid.multibody.experiment import write_experiment_body_data
    from dynid.multibody.identification import identify as identify_bodies, true_values
    from dynid.robot import load_robot

    kr500 = load_robot("kr500")
    body_csv = ws.dir / "kr500_body.csv"
    write_experiment_body_data(kr500, "seed-kr500", body_csv)
    progress(0.3)
    data = read_body_data(body_csv)
    times = np.array([0.3, 0.6, 0.9, 1.2, 1.5])
    idx = np.array([int(np.argmin(np.abs(data.t - t))) for t in times])
    results = identify_bodies(kr500, data.select(idx), angular_form("quaternion"))
    payload = {"robot": kr500.name, "coordinates": "quaternion", "rounding_digits": None, "samples": int(idx.size),
               "times": data.t[idx].tolist(), "bodies": [r.as_json() for r in results]}
    atomic_write_text(ws.path("multibody"), json.dumps(payload, indent=2) + "\n")
    worst = 0.0
    for res, tv in zip(results, true_values(kr500)):
        for v, t in zip(list(res.mass) + list(res.moments), [tv["mass"]] * 3 + tv["moments"]):
            if v is not None and t:
                worst = max(worst, abs(v - t) / abs(t))
    ws.figures["KR500 per-body max relative error"] = worst
    progress(1.0)


def export(ws: Workspace, progress) -> None:
    """The physically consistent model as URDF and JSON."""
    from dynid.export import identified_model, model_dict, write_model_file, write_urdf
    from dynid.identify.result import load_result

    result = load_result(ws.path("pc_result"))
    model = identified_model(ws.robot, result, ws.path("pc_result").name)
    write_urdf(ws.dir / "model.urdf", model.robot, comment="identified by dynid demo (pc estimate)")
    write_model_file(ws.dir / "model.json", model_dict(model, result))
    progress(1.0)


def report(ws: Workspace, progress) -> None:
    from dynid.demo.workspace import write_summary
    from dynid.report import ReportInputs, build_report, write_report
    from dynid.report.builder import SECTION_IDS

    write_summary(ws)  # the report's overview shows it (what the user can trust, the key figures)

    done = []

    def step(name):
        done.append(name)
        progress(len(done) / len(SECTION_IDS))

    text = build_report(ReportInputs.gather(ws.dir), progress=step, predictions=ws.state.get("predictions"))
    write_report(ws.dir / "report.html", text)
    progress(1.0)
