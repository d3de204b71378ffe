"""The demo's workspace: settings, the directory being written, and its atomic completion.

The demo is a straight pipeline of steps over a ``Workspace`` (``generate``, ``study``):

excitation -> protocol -> simulate -> identify (OLS, per cycle) -> identify (PC) -> validate ->
drift-aware model (identify with a drifting friction, validate cold and warm: the headline) ->
friction drift -> multibody (KR500 seed experiment) -> export -> report

Each step writes its files with the names of ``report.inputs.DEMO_FILES`` and records key
figures in ``ws.figures``. The workspace is a hidden temporary directory beside the target;
``finish`` moves it onto the target in one rename, so an interrupted demo never leaves a
half-written output directory (the previous one stays until the new one is complete).
Every random choice takes ``DemoSettings.seed``.

Limits: the demo excites, simulates and validates within the robot's joint limits. Where the
description lacks one (``kr500``, ``kr500-rail`` and ``planar6`` have none), ``demo_limits``
states it: a position range of one turn centred on 0 for a revolute joint and
``DEMO_TRAVEL`` for a prismatic one, a speed of ``DEMO_SPEED``, and the excite room's default
acceleration (``excite.limit_sources.resolve_limits``: from the effort limit and the inertia,
else full speed in 0.2 s). Every stated limit is printed and kept in summary.json ("limits")
and the trajectory file.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

from dynid.data.io import atomic_write_text
from dynid.files.outputs import finish_directory, start_directory


DEMO_SPEED = {"revolute": 2.0, "prismatic": 1.0}  # rad/s, m/s: where the description has no speed limit
DEMO_TRAVEL = (-1.0, 1.0)  # m: the range of a prismatic joint without one


def demo_limits(robot):
    """(the robot carrying every limit the demo needs, ``ResolvedLimits`` with their sources):
    the description's, else the stated ones (module docstring)."""
    import math

    from dynid.excite.limit_sources import LimitOptions, resolve_limits, robot_with_limits

    q_range, dq_max = {}, {}
    for i, joint in enumerate(robot.actuated_joints):
        kind = "revolute" if robot.is_revolute[i] else "prismatic"
        if kind == "prismatic" and not (math.isfinite(joint.limits.q_min) and math.isfinite(joint.limits.q_max)):
            q_range[i + 1] = DEMO_TRAVEL
        if not math.isfinite(joint.limits.dq_max):
            dq_max[i + 1] = DEMO_SPEED[kind]
    resolved = resolve_limits(robot, LimitOptions(q_range=q_range or None, dq_max=dq_max or None))
    stated = [f"joint {j} ({robot.joint_names[j - 1]}): {lo:g} .. {hi:g} m" for j, (lo, hi) in q_range.items()]
    stated += [f"joint {j} ({robot.joint_names[j - 1]}): {v:g} {'rad/s' if robot.is_revolute[j - 1] else 'm/s'}"
               for j, v in dq_max.items()]
    notes = list(resolved.notes)
    if stated:
        notes.insert(0, "limits the description lacks, stated by the demo: " + "; ".join(stated))
    return robot_with_limits(robot, resolved.limits), replace(resolved, notes=tuple(notes))


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
    notes: list = field(default_factory=list)  # how to read the figures: printed under them, kept in summary.json
    headline: dict = field(default_factory=dict)  # the figures shown first (also in ``figures``)
    trust: str = ""  # one sentence: what the user can trust (the report's first line)
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


def skip_first(ws: Workspace) -> int:
    """Warm-up cycles left out of the statistics: the thesis drops 5 of 24 (scaled to the demo's)."""
    from dynid.identify.cycle_stats import default_skip_first

    return default_skip_first(ws.settings.cycles)


def start(settings: DemoSettings, target: str | Path) -> Workspace:
    """A fresh hidden directory beside ``target`` for the run (``dynid.files.outputs.start_directory``)."""
    from dynid.robot import load_robot

    robot, limits = demo_limits(load_robot(settings.robot))
    work = start_directory(target, "demo")
    ws = Workspace(settings, Path(target), work, robot)
    ws.state["limits"] = limits
    return ws


def write_summary(ws: Workspace) -> None:
    """summary.json: settings, what the user can trust, the headline and all key figures, notes,
    limits. Written by the report step (the report reads it) and again by ``finish``."""
    limits = ws.state["limits"].to_dict(ws.robot) if "limits" in ws.state else None
    atomic_write_text(ws.path("summary"), json.dumps({"settings": ws.settings.__dict__, "trust": ws.trust,
                                                      "headline": ws.headline, "figures": ws.figures,
                                                      "notes": ws.notes, "limits": limits}, indent=2) + "\n")


def finish(ws: Workspace) -> Path:
    """Write summary.json and move the directory onto the target, which is replaced only when it is
    missing, empty or an earlier demo output (or with --force)."""
    write_summary(ws)
    return finish_directory(ws.dir, ws.target, "demo", ws.force)


def abort(ws: Workspace) -> None:
    """Remove the partial directory of a failed run (the target is left as it was)."""
    shutil.rmtree(ws.dir, ignore_errors=True)
