"""A finding of ``dynid diagnose``: what is wrong, the evidence, and the fix.

Severities: ``alarm`` (a mistake in the log or the description that biases any fit: sign,
scale, delay, units, velocity column, clipping, gravity), ``warning`` (the log cannot
determine the model well: poor excitation), ``info`` (worth knowing, not a mistake).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEVERITIES = ("alarm", "warning", "info")


@dataclass
class Finding:
    """check: short name of the check (e.g. "torque sign"); joints: 1-based joints concerned
    (empty: the whole log); evidence and fix: one sentence each; values: the numbers behind
    the evidence (JSON-safe)."""

    check: str
    severity: str
    evidence: str
    fix: str
    joints: list[int] = field(default_factory=list)
    values: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity '{self.severity}' unknown, expected one of {SEVERITIES}")

    def to_dict(self) -> dict:
        return {"check": self.check, "severity": self.severity, "joints": list(self.joints),
                "evidence": self.evidence, "fix": self.fix, "values": self.values}
