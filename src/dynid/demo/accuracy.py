"""Demo steps of the accuracy tools: the diagnosis of the training log (``dynid diagnose``)."""

from __future__ import annotations

import json

from dynid.data.io import atomic_write_text
from dynid.demo.workspace import Workspace


def diagnose(ws: Workspace, progress) -> None:
    """Check the training log for delay, sign/scale, units, clipping, gravity, excitation."""
    from dynid.identify.diagnose import diagnose as run_checks

    result = run_checks(ws.robot, ws.path("data"), options=ws.model_options())
    atomic_write_text(ws.path("diagnosis"), json.dumps(result.to_dict(), indent=2) + "\n")
    ws.figures["diagnosis alarms"] = len(result.alarms)
    progress(1.0)
