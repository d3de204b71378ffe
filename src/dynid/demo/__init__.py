"""The end-to-end demo (``dynid demo``): every step of an identification study on a builtin
robot, written to one directory that ``dynid report --from`` reads.

    ws = start(DemoSettings(), "dynid-demo")
    for name, description, step in STEPS:
        step(ws, progress=lambda fraction: ...)
    finish(ws)
"""

from dynid.demo import accuracy, drift, generate, study, verify
from dynid.demo.workspace import DemoSettings, Workspace, abort, finish, start

STEPS = (
    ("excitation", "optimize the excitation trajectory", generate.excitation),
    ("protocol", "sample the test protocol", generate.protocol),
    ("simulate", "simulate measurements", generate.simulate),
    ("diagnose", "diagnose the training log", accuracy.diagnose),
    ("identify", "identify: OLS, per cycle, PC", study.identify),
    ("payload", "identify a payload on the flange", accuracy.payload),
    ("validate", "validate on a separate trajectory", study.validate),
    ("drift", "drift-aware model: validate cold and warm", drift.drift_model),
    ("verification", "verify per cycle, groups of cycles", verify.verification),
    ("friction", "analyze friction drift", study.friction),
    ("multibody", "KR500 per-body identification", study.multibody),
    ("export", "export URDF and JSON", study.export),
    ("report", "write the HTML report", study.report),
)

__all__ = ["STEPS", "DemoSettings", "Workspace", "abort", "finish", "start"]
