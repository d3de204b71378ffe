"""Demo steps of the thesis' chapter 5 (docs/thesis-chapter5.md): per-cycle verification and
groups of cycles, and the friction drift of eq. 5.4 fitted to every sample (Table 5.6)."""

from __future__ import annotations

import json

from dynid.data.io import atomic_write_text
from dynid.demo.workspace import Workspace, skip_first


def verification(ws: Workspace, progress) -> None:
    """Per-cycle self-verification and the one-model RMSD per cycle (Tables F.x, Figs 5.4-5.5);
    identification on groups of cycles (Table 5.5)."""
    from dynid.data.io import load_joint_data
    from dynid.identify.cycle_validation import validate_segments
    from dynid.identify.group_study import group_study
    from dynid.identify.result import load_result

    data = load_joint_data(ws.path("data"), ws.robot)
    result = load_result(ws.path("result"))
    k = skip_first(ws)
    report = validate_segments(ws.robot, data, result, "cycle", 0.05, k, self_data=True)
    atomic_write_text(ws.path("cycle_validation"), json.dumps({ws.path("data").name: report}, indent=1) + "\n")
    own = report["kinds"]["own"].get("statistics")
    if own:
        ws.figures["self-verification relative RMSD, mean over joints and cycles"] = float(
            sum(own["all"]["mean"]) / len(own["all"]["mean"]))
    headline(ws, report["kinds"].get("whole", {}))
    progress(0.5)
    if ws.settings.cycles > k:
        from dynid.data.preprocess import Preprocessing
        from dynid.identify.cycle_groups import scaled_units

        specs, scaled = scaled_units(data.cycle, ws.path("data").name)  # the thesis' units, scaled to the cycles
        if scaled:
            ws.notes.append(scaled)
        study = group_study(ws.robot, data, specs, ws.model_options(), k,
                            Preprocessing.from_dict(result["preprocessing"]))  # identify's own (auto cutoff)
        atomic_write_text(ws.path("groups"), json.dumps(study, indent=1) + "\n")
        ws.figures["thesis units closest to their block (unit1 late -> rest, unit3 early -> first)"] = (
            f"{study['groups']['unit1']['closest']}, {study['groups']['unit3']['closest']}")
    progress(1.0)


def headline(ws: Workspace, whole: dict) -> None:
    """The whole-log (static) model on its first (cold) and last (warm) cycle: it averages the
    friction of the test, so it misses the cold cycle most (the drift step explains it, ``demo.drift``)."""
    import numpy as np

    rel = np.asarray(whole.get("relative_rmsd", []), dtype=float)  # (cycles, joints)
    if rel.ndim != 2 or rel.shape[0] < 2:
        return
    cold, warm = (float(100.0 * np.nanmean(rel[c])) for c in (0, -1))
    ws.figures["static whole-log model, relative RMSD on the first (cold) cycle, mean over joints [%]"] = cold
    ws.figures["static whole-log model, relative RMSD on the last (warm) cycle, mean over joints [%]"] = warm


def drift_table(ws: Workspace) -> None:
    """Eq. 5.4 per joint from every sample of the training log, in Table 5.6's layout."""
    from dynid.data.io import load_joint_data
    from dynid.friction.drift_joint import table
    from dynid.identify.drift_constants import fit_log

    options = ws.model_options()
    fits = fit_log(ws.robot, load_joint_data(ws.path("data"), ws.robot), options, max_rows=6000)
    result = table(fits, ws.robot, options, 0.6)
    atomic_write_text(ws.path("drift_table"), json.dumps({"robot": ws.robot.name, "friction": options.friction,
                                                         **result}, indent=1) + "\n")
    if ws.thesis:
        t2 = result["joints"][5]["t2"]
        ws.figures["joint 6 fast drift t2 [min], every sample (Table 5.6: 0.310)"] = (
            "not determined" if t2 is None else round(t2, 3))
