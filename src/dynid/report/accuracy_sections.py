"""Report sections of the accuracy tools: the diagnosis of the log (``dynid diagnose``)."""

from __future__ import annotations

from dynid.report.html import esc, note, paragraph, table
from dynid.report.inputs import load_json
from dynid.report.sections import Context, Section, missing

SEVERITY_CLASS = {"alarm": "missing", "warning": "note", "info": "small"}


def diagnosis(ctx: Context) -> Section:
    title = "Diagnosis of the log"
    if ctx.inputs.diagnosis is None:
        return missing("diagnosis", title, ctx.inputs.missing.get("diagnosis", "diagnosis not given"))
    found = load_json(ctx.inputs.diagnosis, "diagnosis")
    counts = found.get("counts", {})
    text = (f"{found.get('source', '?')}: {found.get('samples', '?')} samples at {found.get('rate_hz', 0):.4g} Hz "
            f"checked for a torque delay, torque sign and scale per joint, units, the logged velocity column, "
            f"clipped torques, the gravity direction and the excitation: {counts.get('alarm', 0)} alarm(s), "
            f"{counts.get('warning', 0)} warning(s), {counts.get('info', 0)} note(s).")
    body = paragraph(text)
    if not found.get("findings"):
        body += paragraph("Nothing to report.")
    rows = []
    for f in found.get("findings", []):
        joints = ", ".join(str(j) for j in f.get("joints", [])) or "all"
        rows.append([f["severity"], f["check"], joints, f["evidence"], f["fix"]])
    if rows:
        body += table(["severity", "check", "joints", "evidence", "fix"], rows, left=5)
    alarms = [f for f in found.get("findings", []) if f["severity"] == "alarm"]
    if alarms:
        body += note(f"{len(alarms)} alarm(s): the fit of this log is biased until they are fixed "
                     f"({esc(', '.join(f['check'] for f in alarms))}).")
    return Section("diagnosis", title, body)
