"""The demo's workspace: settings, the directory being written, and its atomic completion.

The demo is a straight pipeline of steps over a ``Workspace`` (``generate``, ``study``):

excitation -> protocol -> simulate -> identify (OLS, per cycle) -> identify (PC) -> validate ->
friction drift -> multibody (KR500 seed experiment) -> export -> report

Each step writes its files with the names of ``report.inputs.DEMO_FILES`` and records key
figures in ``ws.figures``. The workspace is a hidden temporary directory beside the target;
``finish`` moves it onto the target in one rename, so an interrupted demo never leaves a
half-written output directory (the previous one stays until the new one is complete).
Every random choice takes ``DemoSettings.seed``.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from dynid.data.io import atomic_write_text
from dynid.data.output import finish_directory, start_directory


@dataclass(frozen=True)
class DemoSettings:
    """robot: builtin name; seed: of every random choice; generations, polish_iterations:
    the optimizer's fixed budget; cycles: test cycles; warming [s]: warming stage per cycle;
    rate [Hz]: controller rate; noise: torque noise std as a share of each joint's RMS torque;
    thesis_friction: on the er3a, simulate the thesis' friction (Table H, polynomial model) and
    drift (Table 5.6) and identify with the polynomial model (``simulate.thesis_friction``);
    drift_t1, drift_t2 [s], drift_r1, drift_r2: cold-to-warm friction drift (eq. 5.4 shape) of
    other robots;
    validation_seconds: length of the separate validation log."""

    robot: str = "er3a"
    seed: int = 0
    generations: int = 10
    polish_iterations: int = 30
    cycles: int = 6
    warming: float = 20.0
    level_duration: float = 4.0
    rate: float = 100.0
    noise: float = 0.02
    thesis_friction: bool = True
    drift_r1: float = 0.6
    drift_t1: float = 400.0
    drift_r2: float = 0.3
    drift_t2: float = 60.0
    validation_seconds: float = 30.0


@dataclass
class Workspace:
    settings: DemoSettings
    target: Path
    dir: Path
    robot: object = None
    figures: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)
    force: bool = False  # replace a target the demo did not write

    @property
    def thesis(self) -> bool:
        """Whether the run simulates the thesis' friction and drift (er3a only)."""
        from dynid.simulate.thesis_friction import applies_to

        return self.settings.thesis_friction and applies_to(self.robot)

    def model_options(self):
        """The identification model: the thesis' polynomial friction on a thesis run."""
        from dynid.identify.model import ModelOptions

        return ModelOptions("polynomial") if self.thesis else ModelOptions()

    def path(self, role: str) -> Path:
        from dynid.report.inputs import DEMO_FILES

        return self.dir / DEMO_FILES.get(role, role)


def start(settings: DemoSettings, target: str | Path) -> Workspace:
    """A fresh hidden directory beside ``target`` for the run (``dynid.data.output.start_directory``)."""
    from dynid.robot import load_robot

    work = start_directory(target, "demo")
    return Workspace(settings, Path(target), work, load_robot(settings.robot))


def finish(ws: Workspace) -> Path:
    """Write summary.json and move the directory onto the target, which is replaced only when it is
    missing, empty or an earlier demo output (or with --force)."""
    atomic_write_text(ws.path("summary"), json.dumps({"settings": ws.settings.__dict__, "figures": ws.figures},
                                                     indent=2) + "\n")
    return finish_directory(ws.dir, ws.target, "demo", ws.force)


def abort(ws: Workspace) -> None:
    """Remove the partial directory of a failed run (the target is left as it was)."""
    shutil.rmtree(ws.dir, ignore_errors=True)
