"""Report section: how the low-pass cutoff was chosen (``identify --lowpass auto``), with the
cross-validation curve (held-out relative torque error against the candidate cutoff)."""

from __future__ import annotations

from dynid.report.html import figure, fmt, note, paragraph, table
from dynid.report.sections import Context, Section, missing

TITLE = "Preprocessing: low-pass cutoff"


def cv_curve_figure(cutoffs, scores, chosen: float, title: str) -> str:
    """Held-out relative error [%] against the cutoff [Hz] (log axis), the choice marked."""
    from dynid.report.figures import data_uri, plt

    pairs = [(c, 100.0 * s) for c, s in zip(cutoffs, scores) if s is not None]
    fig, ax = plt.subplots(figsize=(8, 3.4))
    ax.plot([c for c, _ in pairs], [s for _, s in pairs], "o-", lw=1.2, ms=4, label="cross-validation score")
    ax.axvline(chosen, color="C3", lw=1.0, ls="--", label=f"chosen {chosen:.3g} Hz")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("low-pass cutoff [Hz]")
    ax.set_ylabel("held-out relative torque error [%]")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return data_uri(fig)


def preprocessing(ctx: Context) -> Section:
    if ctx.result is None:
        return missing("preprocessing", TITLE, ctx.inputs.missing.get("result", "result not given"))
    prep = ctx.result.get("preprocessing", {})
    selection = ctx.result.get("lowpass_selection")
    cutoff = prep.get("lowpass_hz")
    if selection is None:
        text = ("no low-pass filter (cutoff 0)" if cutoff == 0 else
                f"cutoff {fmt(cutoff)} Hz given with --lowpass" if cutoff is not None else
                "the fixed default cutoff min(20 Hz, fs/10)")
        return Section("preprocessing", TITLE, paragraph(f"Low-pass: {text}; not cross-validated."))
    if "candidates_hz" not in selection:  # the fallback: the fixed default cutoff (and why)
        return Section("preprocessing", TITLE, note(f"Low-pass cutoff not cross-validated ({fmt(cutoff)} Hz used): "
                                                    f"{selection.get('reason')}"))
    grid = selection.get("grid", {})
    text = (f"Cutoff {selection['chosen_hz']:.3g} Hz, chosen by {selection['folds']}-fold blocked cross-validation "
            f"on contiguous time folds of the training log ({selection['samples']} samples in "
            f"{selection['blocks']} block(s)): each candidate cutoff is applied to the whole pipeline, the model is "
            "refitted without one fold and scored on it. Grid "
            f"{fmt(grid.get('low_hz'), '.3g')}-{fmt(grid.get('high_hz'), '.3g')} Hz from the {grid.get('source', '?')}."
            + (" The torque is low-passed like the positions (parallel filtering): that predicted the measured torque "
               "better." if selection.get("filter_torque") else ""))
    img = cv_curve_figure(selection["candidates_hz"], selection["scores"], selection["chosen_hz"],
                          "held-out relative torque error against the low-pass cutoff")
    rows = [[fmt(c, ".4g"), fmt(None if s is None else 100.0 * s, ".4f"), "chosen" if c == selection["chosen_hz"] else ""]
            for c, s in zip(selection["candidates_hz"], selection["scores"])]
    body = paragraph(text) + figure(img, TITLE) + table(["cutoff [Hz]", "held-out relative error [%]", ""], rows)
    for fc, reason in selection.get("failures", {}).items():
        body += note(f"{fc} Hz not scored: {reason}")
    return Section("preprocessing", TITLE, body)
