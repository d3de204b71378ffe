"""Report sections of the accuracy tools: diagnosis of the log (``dynid diagnose``), payload
(``dynid payload identify``), essential parameters (``identify --essential``) and prediction bands."""

from __future__ import annotations

import numpy as np

from dynid.report.html import esc, figure, note, paragraph, table
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


def payload(ctx: Context) -> Section:
    title = "Payload"
    if ctx.inputs.payload is None:
        return missing("payload", title, ctx.inputs.missing.get("payload", "payload not given"))
    found = load_json(ctx.inputs.payload, "payload")
    value = lambda f: "not determined" if f["value"] is None else format(f["value"], ".5g")  # noqa: E731
    deviation = lambda f: "-" if f["std"] is None else format(f["std"], ".2g")  # noqa: E731
    rows = [["mass [kg]", value(found["mass"]), deviation(found["mass"])]]
    rows += [[f"centre of mass {a} [m]", value(c), deviation(c)] for a, c in zip("xyz", found["com"])]
    rows += [[f"{k} about the centre of mass [kg m^2]", value(v), deviation(v)]
             for k, v in found["inertia_about_com"].items()]
    body = paragraph(f"A load fixed to the flange, identified {found.get('mode', '')} "
                     f"({found.get('samples', '?')} samples; {found.get('frame', 'link frame of the last joint')}). "
                     "Physically consistent (pseudo-inertia positive semidefinite: smallest eigenvalue "
                     f"{found.get('lmi_min_eigenvalue', float('nan')):.3g}); standard deviations "
                     + ("from the jackknife over clusters of the motion's states, never below Khalil-Gautier's "
                        "white-noise ones." if "uncertainty" in found else "Khalil-Gautier."))
    body += table(["payload", "value", "std"], rows, cls="kv")
    for text in found.get("notes", []):
        body += note(text)
    return Section("payload", title, body)


def essential(ctx: Context) -> Section:
    title = "Essential parameters"
    block = (ctx.result or {}).get("essential")
    if block is None:
        return missing("essential", title, *(["result not given"] if ctx.result is None else
                                              ["the result holds no essential parameters (identify --essential)"]))
    rows = [[p["name"], format(p["value"], ".6g"), format(p["std"], ".3g"),
             "-" if p["relative_std"] is None else format(p["relative_std"], ".2f")] for p in block["parameters"]]
    err = block["relative_error"]
    body = paragraph(f"{block['count']} of {block['of']} parameters explain the torques as well as all of them: "
                     f"relative error {100 * err['essential']:.3f} % against {100 * err['base']:.3f} %. "
                     f"Method: {block['method']}. Eliminated, in order: "
                     + (", ".join(s["removed"] for s in block["eliminated"]) or "none") + ".")
    body += '<div class="scroll">' + table(["essential parameter", "value", "std", "%sigma"], rows) + "</div>"
    return Section("essential", title, body)


def band(ctx: Context) -> Section:
    """The validation log's torques against the model's +-2 sigma bands (identify/bands.py)."""
    title = "Prediction band"
    log = ctx.inputs.validation
    if ctx.result is None or ctx.robot is None or log is None:
        return missing("band", title, *[r for r in (ctx.inputs.missing.get("result") if ctx.result is None else "",
                                                    ctx.robot_problem if ctx.robot is None else "",
                                                    ctx.inputs.missing.get("validation") if log is None else "") if r])
    if "covariance" not in ctx.result:
        return missing("band", title, "the result holds no parameter covariance (identified by an older dynid)")
    from dynid.identify.bands import band_std, coverage
    from dynid.report.figures import data_uri, plt
    from dynid.report.sections import models, predictions

    pred = predictions(ctx, log)[models(ctx)[0][0]]
    if pred["tau"] is None:
        return missing("band", title, f"{log} holds no torques")
    k = pred["interior"]
    model = pred["tau_std"][k]
    measured = band_std(model, ctx.result, "measurement")
    t, tau, hat = pred["t"][k], pred["tau"][k], pred["tau_hat"][k]
    share = coverage(tau, hat, measured)
    shown = t <= t[0] + 20.0
    n = tau.shape[1]
    fig, axes = plt.subplots(n, 1, figsize=(13, 1.7 * n + 0.6), sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.fill_between(t[shown], (hat - 2 * measured)[shown, j], (hat + 2 * measured)[shown, j], color="C0",
                        alpha=0.2, lw=0, label="+-2 sigma (measurement)")
        ax.fill_between(t[shown], (hat - 2 * model)[shown, j], (hat + 2 * model)[shown, j], color="C1", alpha=0.6,
                        lw=0, label="+-2 sigma (model)")
        ax.plot(t[shown], tau[shown, j], color="0.4", lw=0.6, label="measured")
        ax.plot(t[shown], hat[shown, j], color="C0", lw=0.8, label="predicted")
        ax.set_ylabel(f"tau{j + 1} [N m]")
    axes[0, 0].legend(fontsize=8, ncol=4, loc="upper right")
    axes[-1, 0].set_xlabel("t [s]")
    fig.tight_layout()
    rows = [[f"joint {j + 1}", format(float(np.median(model[:, j])), ".3g"),
             format(float(np.median(measured[:, j])), ".3g"), format(100 * share[j], ".1f")] for j in range(n)]
    text = (f"{log.name}: the model's torque with its standard deviation from the parameter covariance (model band, "
            "where the noise-free torque lies) and with the residual variance added (measurement band). "
            f"{100 * float(np.mean(share)):.1f} % of the measured torques lie within +-2 sigma of the measurement band "
            "(about 95 % when the model is right and the noise white; far fewer: the model misses an effect of the "
            "data, such as friction drift).")
    return Section("band", title, paragraph(text) + figure(data_uri(fig), title)
                   + table(["joint", "median model std [N m]", "median measurement std [N m]",
                            "measured within +-2 sigma [%]"], rows))
