"""Write docs/api.md, the reference of the Python API, from the docstrings.

    python docs/api_reference.py          # rewrites docs/api.md
    python docs/api_reference.py --check  # exit 1 when docs/api.md is not current

The page lists what ``import dynid`` exports (``dynid.__all__``) and, for the classes of the
identification API, their public methods and properties, each with its signature and its
docstring as written in the code. tests/test_api_reference.py checks that the page is current.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "api.md"

GROUPS = (
    ("Robots", ("load_robot", "Robot")),
    ("Batched dynamics (time-major arrays, no per-sample Python loop)",
     ("inverse_dynamics", "regressor", "mass_matrix", "gravity_torques", "coriolis_torques", "forward_dynamics",
      "forward_kinematics", "kinetic_energy", "potential_energy")),
    ("Identification", ("Identification", "IdentificationResult", "load_result")),
    ("Errors", ("DynidError", "DataError", "ModelError", "IllConditionedError")),
)
MEMBERS = {  # classes whose methods and properties are listed (public, defined by the class itself)
    "Identification": ("fit", "fit_files", "clone", "base_parameters", "preprocessing", "make_estimator",
                       "accumulate", "solve", "refit", "document"),
    "IdentificationResult": ("names", "values", "std", "covariance", "undetermined", "diagnostics", "rmsd",
                             "relative_rmsd", "estimator", "friction", "warnings", "model", "base",
                             "preprocessing", "mapping", "predict", "validate", "validate_files", "relative_to",
                             "save", "from_dict"),
}


def _annotation(value) -> str:
    return value.strip("'\"") if isinstance(value, str) else inspect.formatannotation(value)


def _signature(obj) -> str:
    """``(a: type = default, ...) -> type`` with the annotations as written (no quotes)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""
    parts, star = [], False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        text = ("**" if p.kind is p.VAR_KEYWORD else "*" if p.kind is p.VAR_POSITIONAL else "") + p.name
        if p.kind is p.VAR_POSITIONAL:
            star = True
        if p.annotation is not p.empty:
            text += f": {_annotation(p.annotation)}"
        if p.default is not p.empty:
            text += (" = " if p.annotation is not p.empty else "=") + repr(p.default)
        parts.append(text)
    ret = "" if sig.return_annotation is sig.empty else f" -> {_annotation(sig.return_annotation)}"
    return f"({', '.join(parts)}){ret}"


def _entry(title: str, obj, level: str = "###") -> list[str]:
    doc = inspect.getdoc(obj) or "(no docstring)"
    return [f"{level} `{title}`", "", "```text", doc, "```", ""]


def _member(cls, name: str) -> list[str]:
    raw = inspect.getattr_static(cls, name)
    if isinstance(raw, property):
        return _entry(f"{cls.__name__}.{name}  (property)", raw, "####")
    func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
    return _entry(f"{cls.__name__}.{name}{_signature(func)}", func, "####")


def page() -> str:
    """The text of docs/api.md."""
    import dynid

    lines = ["# Python API reference", "",
             "Generated from the docstrings by `python docs/api_reference.py` (tests/test_api_reference.py "
             "checks that it is current); what `import dynid` exports. Arrays are time-major, `(N, n)` for N "
             "samples of n joints, in SI units. Examples that run: [examples/](../examples/).", ""]
    listed = [name for _, names in GROUPS for name in names]
    missing = sorted(set(dynid.__all__) - set(listed))
    if missing:
        raise SystemExit(f"docs/api_reference.py: exported but not placed in a group: {missing}")
    for title, names in GROUPS:
        lines += [f"## {title}", ""]
        for name in names:
            obj = getattr(dynid, name)
            if inspect.isclass(obj) and issubclass(obj, Exception):
                lines += _entry(f"dynid.{name}", obj)
            elif inspect.isclass(obj):
                lines += _entry(f"dynid.{name}{_signature(obj) if name in MEMBERS else ''}", obj)
                for member in MEMBERS.get(name, ()):
                    lines += _member(obj, member)
            else:
                lines += _entry(f"dynid.{name}{_signature(obj)}", obj)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    text = page()
    if "--check" in argv:
        current = PAGE.read_text() if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE} is not current: run python docs/api_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
