"""Builtin robots, by name. Each module documents where its numbers come from."""

from __future__ import annotations

from dynid.robot.builtin import er3a, kr500, planar, scara5, tx40

BUILTINS = {
    "kr500": kr500.kr500,
    "kr500-rail": kr500.kr500_rail,
    "er3a": er3a.er3a,
    "planar6": planar.planar6,
    "scara5": scara5.scara5,
    "planar2": planar.planar2,
    "tx40": tx40.tx40,
}


def builtin_summaries() -> dict[str, str]:
    """Name -> one-line description (the first line of the builder's docstring)."""
    return {name: (fn.__doc__ or "").strip().splitlines()[0] for name, fn in BUILTINS.items()}
