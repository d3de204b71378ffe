"""``dynid diagnose``: why a fit is bad. Checks a log (and optionally the model of a
result.json) for the mistakes real logs and descriptions carry, each finding with its
evidence and its fix.

Modules, one job each:
    context     the log piece, motion from q alone, the base regressor and the OLS fit
    findings    the Finding record (check, severity, evidence, fix, joints, values)
    timing      torque delay (D1: residual against a shift of the torque), logged velocity lag/scale
    signs       torque sign/scale against the description and against physics (each negative
                parameter's fix found by refitting), clipping, units
    offsets     a constant torque per joint the model lacks (--offset)
    excitation  condition number, joints barely moving, %sigma and which joint would help; gravity
    rest        Coulomb friction biased by rest samples fitted with the filtered velocity's sign

The checks run on at most ``context.BUDGET`` rows (the middle of a longer log) and fit at most
``context.MAX_ROWS`` samples, so a diagnosis takes seconds whatever the log's length.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dynid.data.columns import ColumnMapping
from dynid.data.preprocess import Preprocessing
from dynid.identify.diagnose.context import LogFit, log_fit
from dynid.identify.diagnose.excitation import excitation, gravity_direction
from dynid.identify.diagnose.findings import SEVERITIES, Finding
from dynid.identify.diagnose.offsets import torque_offsets
from dynid.identify.diagnose.rest import rest_friction
from dynid.identify.diagnose.signs import clipped_torques, description_fit, negative_parameters, units
from dynid.identify.diagnose.timing import torque_delay, velocity_column
from dynid.identify.model import ModelOptions

CHECKS = (units, velocity_column, torque_delay, description_fit, negative_parameters, torque_offsets,
          clipped_torques, gravity_direction, excitation, rest_friction)


@dataclass
class Diagnosis:
    source: str
    samples: int
    rate_hz: float
    cutoff_hz: float
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what reading the log did (rows dropped, a part read...)

    @property
    def alarms(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "alarm"]

    def to_dict(self) -> dict:
        return {"format": "dynid-diagnosis", "source": self.source, "samples": self.samples,
                "rate_hz": self.rate_hz, "lowpass_hz": self.cutoff_hz,
                "counts": {s: sum(f.severity == s for f in self.findings) for s in SEVERITIES},
                "findings": [f.to_dict() for f in self.findings], "notes": list(self.notes)}


def diagnose(robot, path, mapping: ColumnMapping = ColumnMapping(), nan: str = "drop",
             options: ModelOptions | None = None, prep: Preprocessing | None = None) -> Diagnosis:
    """Every check on the log at ``path``; findings sorted alarms first."""
    fit: LogFit = log_fit(robot, path, mapping, nan, options, prep)
    findings = [f for check in CHECKS for f in check(fit)]
    findings.sort(key=lambda f: SEVERITIES.index(f.severity))
    return Diagnosis(str(path), len(fit.raw), fit.fs, fit.cutoff, findings, list(dict.fromkeys(fit.raw.notes)))
