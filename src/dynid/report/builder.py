"""The whole report: load the inputs once, build every section, write one HTML file."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

from dynid import __version__
from dynid.data.io import atomic_write_text
from dynid.errors import DataError, DynidError
from dynid.report import html, sections
from dynid.report.friction_section import friction
from dynid.report.inputs import ReportInputs, load_json
from dynid.report.accuracy_sections import band, diagnosis, essential, payload
from dynid.report.preprocessing_section import preprocessing
from dynid.report.thesis_section import postures, verification

SECTION_BUILDERS = (sections.overview, diagnosis, sections.torques, band, sections.parameters, essential,
                    preprocessing, sections.identifiability, sections.excitation, sections.evolution, verification, friction,
                    payload, sections.multibody, postures)
SECTION_IDS = ("overview", "diagnosis", "torques", "band", "parameters", "essential", "preprocessing",
               "identifiability", "excitation", "evolution", "verification", "friction", "payload", "multibody",
               "postures")


def load_context(inputs: ReportInputs, force: bool = False, predictions: dict | None = None) -> sections.Context:
    """Read the JSON inputs and the robot (explicit --robot, else the one the result names); a
    result identified on another robot is refused unless ``force`` (then noted in the report).
    The models' predictions on the validation and training logs are computed here, once
    (``identify.prediction.predict_models``), unless ``predictions`` ({log path: its output})
    gives them already (the demo's validation step)."""
    from dynid.identify.result import load_result
    from dynid.identify.result_schema import check_result_robot

    ctx = sections.Context(inputs=inputs)
    ctx.result = load_result(inputs.result) if inputs.result else None
    ctx.pc_result = (ctx.result if inputs.pc_result == inputs.result
                     else load_result(inputs.pc_result) if inputs.pc_result else None)
    ctx.drift_result = load_result(inputs.drift_result) if inputs.drift_result else None
    ctx.trajectory = load_json(inputs.trajectory, "trajectory")
    if inputs.friction is not None:
        from dynid.friction.io import read_friction_analysis
        ctx.friction = read_friction_analysis(inputs.friction)
    ctx.multibody = load_json(inputs.multibody, "multibody result")
    if ctx.multibody is not None and "bodies" not in ctx.multibody:
        raise DynidError(f"{inputs.multibody}: no 'bodies' list; expected a 'dynid multibody identify' result")
    ctx.summary = load_json(inputs.summary, "demo summary")
    spec = inputs.robot_spec(ctx.result)
    named = {str(path): r.get("robot") for path, r in ((inputs.result, ctx.result), (inputs.pc_result, ctx.pc_result))
             if r is not None}
    if inputs.robot is None and len(set(named.values())) > 1 and not force:  # which one is foreign is the user's call
        raise DataError("the results name different robots: " + ", ".join(f"{p} ({r})" for p, r in named.items())
                        + "; give --robot for the one the report is about (the other is then refused), or results "
                        "of one robot")
    if spec is None:
        ctx.robot_problem = "no robot: give --robot or a result.json that names it"
    else:
        from dynid.robot import load_robot

        ctx.robot = load_robot(spec)
        for path, result in ((inputs.result, ctx.result), (inputs.pc_result, ctx.pc_result),
                             (inputs.drift_result, ctx.drift_result)):
            if result is not None and check_result_robot(result, ctx.robot, str(path), force):
                ctx.robot_problem = (f"{path} was identified on another robot than '{ctx.robot.name}' "
                                     "(report made with --force)")
    ctx.predictions = dict(predictions or {})
    if ctx.robot is not None and ctx.result is not None:
        from dynid.identify.prediction import predict_models

        plateaus = ctx.friction is not None and ctx.friction.get("friction")
        needed = [(inputs.validation, True)]  # torques and the band (with std)
        needed += [(inputs.data, False)] if inputs.validation is None or not plateaus else []  # torques, friction
        for log, with_std in needed:
            if log is None:
                continue
            given = ctx.predictions.get(log, {})
            todo = [(label, result) for label, result in sections.models(ctx) if label not in given]
            done = predict_models(ctx.robot, todo, log, with_std) if todo else {}
            ctx.predictions[log] = {label: given.get(label, done.get(label)) for label, _ in sections.models(ctx)}
    return ctx


def build_report(inputs: ReportInputs, title: str | None = None, progress=None, force: bool = False,
                 predictions: dict | None = None) -> str:
    """HTML text of the report. progress: optional callable(section_id) before each section;
    force: report a result identified on another robot; predictions: the models' predictions
    on logs, computed already (``load_context``)."""
    ctx = load_context(inputs, force, predictions)
    built = []
    for make, sid in zip(SECTION_BUILDERS, SECTION_IDS):
        if progress is not None:
            progress(make.__name__)
        try:
            built.append(make(ctx))
        except DynidError:
            raise
        except (KeyError, IndexError, TypeError, ValueError) as exc:  # input files of an unexpected layout
            if os.environ.get("DYNID_DEBUG", "") not in ("", "0"):
                raise
            # never a report with a section silently missing or an exception's text in the page
            raise DataError(f"report section '{sid}': an input file has an unexpected layout "
                            f"({type(exc).__name__}: {str(exc)[:120]}); expected the files dynid writes") from None
    robot = ctx.robot.name if ctx.robot is not None else "unknown robot"
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return html.page(title or f"dynid identification report: {robot}",
                     f"generated {stamp} by dynid {__version__}", built)


def write_report(path: str | Path, text: str) -> None:
    atomic_write_text(path, text)
