"""A synthetic fleet for demos, tests and benchmarks (``dynid fleet simulate``).

Every robot runs the same test cycle once a day (a random multi-sine of the fleet's seed,
from a cold start) and logs it at ``rate`` Hz to ROOT/robot=<id>/date=<yyyy-mm-dd>/part-<k>.parquet
(``files_per_day`` consecutive pieces). Each robot has its own

- payload: a point mass on the last link (0.5-2.5 kg, 2-8 cm along its z axis);
- warm friction: the model's ``simulate.default_friction`` times a log-normal factor
  (12 % spread) per coefficient, scaled each day by 1 - 1 %/degC x (ambient - 20 degC)
  (the day's ambient temperature: the robot's mean + N(0, 1.5 degC));
- cold-start drift of eq. 5.4 (``simulate.drift.FrictionDrift``): within a day the friction
  decays as a + b e^(-t/t1) + c e^(-t/t2) with, per joint, t1 in 12-57 min, t2 in 0.5-7.5
  min, b/a in 0.25-0.65, c/a in 0.3-1.0 (the ranges of the thesis' Table 5.6, c/a capped);
  joint temperatures (temp1..tempn) rise with t1 (``simulate.drift.Warmup``), logged to 0.1 degC;
- sensors: torque noise 0.05-0.15 N m, a 2^16-count motor encoder (``simulate.Measurement``).

``faults`` robots (default one in ten, at least one) develop a fault from a day in the
middle of the period: Coulomb friction rising by 5 % of its value per day on one of the three
joints with the largest Coulomb friction (wear where friction matters), a
payload change (+1.5 kg), or an encoder offset of joint 2 or 3 growing by 2 mrad per day.
The truth (every robot's parameters, its fault and each day's ambient temperature, friction
factor, payload and offset) goes to ROOT/_truth.json (skipped by the data set reader).
"""

from __future__ import annotations

import datetime
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from dynid.errors import DataError

FAULT_KINDS = ("coulomb", "payload", "encoder")
TRUTH_FILE = "_truth.json"


@dataclass(frozen=True)
class FleetSpec:
    robots: int = 50
    days: int = 30
    minutes: float = 1.0
    rate: float = 500.0
    model: str = "er3a"
    seed: int = 0
    faults: int | None = None
    files_per_day: int = 1
    start: str = "2026-01-05"
    temperature: bool = True

    def check(self) -> None:
        for name in ("robots", "days", "files_per_day"):
            if getattr(self, name) < 1:
                raise DataError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if not self.minutes > 0 or not self.rate > 0:
            raise DataError(f"--minutes and --rate must be > 0, got {self.minutes} and {self.rate}")
        try:
            datetime.date.fromisoformat(self.start)
        except ValueError:
            raise DataError(f"--start {self.start}: expected a yyyy-mm-dd date") from None

    @property
    def fault_count(self) -> int:
        return min(self.robots, max(1, self.robots // 10) if self.faults is None else self.faults)

    def dates(self) -> list[str]:
        first = datetime.date.fromisoformat(self.start)
        return [(first + datetime.timedelta(days=d)).isoformat() for d in range(self.days)]


def robot_ids(count: int) -> list[str]:
    width = max(3, len(str(count - 1)))
    return [f"r{i:0{width}d}" for i in range(count)]


def draw_truth(spec: FleetSpec, robot) -> dict:
    """Every robot's parameters, fault and daily conditions (module docstring), seeded."""
    from dynid.identify.model import ModelOptions
    from dynid.simulate import default_friction

    n = robot.n
    warm0 = default_friction(robot, ModelOptions())
    ids = robot_ids(spec.robots)
    pick = np.random.default_rng([spec.seed, 1])
    faulty = sorted(pick.choice(spec.robots, size=spec.fault_count, replace=False).tolist())
    robots = {}
    for i, rid in enumerate(ids):
        rng = np.random.default_rng([spec.seed, 2, i])
        warm = warm0 * np.exp(rng.normal(0.0, 0.12, warm0.shape))
        t1 = rng.uniform(12.0, 57.0, n) * 60.0
        drift = {"ratio1": rng.uniform(0.25, 0.65, n).tolist(), "t1": t1.tolist(),
                 "ratio2": rng.uniform(0.3, 1.0, n).tolist(), "t2": (rng.uniform(0.5, 7.5, n) * 60.0).tolist()}
        ambient_mean = rng.uniform(18.0, 26.0)
        ambient = ambient_mean + rng.normal(0.0, 1.5, spec.days)
        entry = {"model": spec.model, "payload_mass": rng.uniform(0.5, 2.5),
                 "payload_com": [0.0, 0.0, rng.uniform(0.02, 0.08)], "friction_warm": warm.tolist(),
                 "drift": drift, "warmup_rise": rng.uniform(15.0, 30.0, n).tolist(),
                 "tau_noise": rng.uniform(0.05, 0.15), "encoder_counts": 2**16, "fault": None}
        fault = None
        if i in faulty:
            kind = FAULT_KINDS[faulty.index(i) % len(FAULT_KINDS)]
            first = int(rng.integers(spec.days // 3, max(spec.days // 3 + 1, spec.days // 2 + 1)))
            strongest = np.argsort(-warm[:, 0])[:3]  # wear where the friction matters: the 3 largest
            joint = {"coulomb": int(rng.choice(strongest)), "encoder": int(rng.integers(1, 3)), "payload": n - 1}[kind]
            fault = {"kind": kind, "joint": joint + 1, "first_day": first, "date": spec.dates()[first],
                     "rate_per_day": {"coulomb": 0.05, "payload": 0.0, "encoder": 0.002}[kind],
                     "step": {"coulomb": 0.0, "payload": 1.5, "encoder": 0.0}[kind]}
        entry["fault"] = fault
        entry["days"] = [_day_conditions(entry, d, ambient[d]) for d in range(spec.days)]
        robots[rid] = entry
    return {"spec": asdict(spec), "robots": robots, "dates": spec.dates(),
            "units": {"time": "s", "friction_warm": "[Fc N m, Fv N m s/rad] per joint",
                      "payload_mass": "kg", "encoder_offset": "rad", "ambient": "degC"}}


def _day_conditions(entry: dict, day: int, ambient: float) -> dict:
    fault = entry["fault"]
    age = day - fault["first_day"] + 1 if fault is not None and day >= fault["first_day"] else 0
    coulomb = np.ones(len(entry["friction_warm"]))
    payload, offset = entry["payload_mass"], np.zeros(len(entry["friction_warm"]))
    if age > 0 and fault["kind"] == "coulomb":
        coulomb[fault["joint"] - 1] += fault["rate_per_day"] * age
    if age > 0 and fault["kind"] == "payload":
        payload += fault["step"]
    if age > 0 and fault["kind"] == "encoder":
        offset[fault["joint"] - 1] = fault["rate_per_day"] * age
    return {"ambient": float(ambient), "friction_factor": float(1.0 - 0.01 * (ambient - 20.0)),
            "coulomb_factor": coulomb.tolist(), "payload_mass": float(payload), "encoder_offset": offset.tolist()}


def day_parameters(robot, entry: dict, day: dict) -> tuple[np.ndarray, np.ndarray]:
    """(theta (p,) warm full parameters with the day's payload and friction, warm friction (n, 2))."""
    from dynid.identify.model import ModelOptions, full_parameters
    from dynid.robot.inertia import from_mass_com_inertia

    friction = np.asarray(entry["friction_warm"]) * day["friction_factor"]
    friction[:, 0] *= np.asarray(day["coulomb_factor"])
    theta = full_parameters(robot, ModelOptions(), friction)
    n = robot.n
    theta[10 * (n - 1):10 * n] += from_mass_com_inertia(day["payload_mass"], entry["payload_com"], np.zeros(6))
    return theta, friction


def simulate_day(root: str, robot, rid: str, entry: dict, spec: FleetSpec, day: int, chunk: int = 50_000) -> list[str]:
    """Write one robot-day (``files_per_day`` files, atomically) on one compute thread (days
    are the parallelism); returns their paths."""
    from dynid.identify.threads import one_compute_thread

    with one_compute_thread():
        return _simulate_day(root, robot, rid, entry, spec, day, chunk)


def _simulate_day(root: str, robot, rid: str, entry: dict, spec: FleetSpec, day: int, chunk: int) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dynid.identify.model import ModelOptions
    from dynid.simulate import Measurement, random_multisine, simulate_joint_data
    from dynid.simulate.drift import FrictionDrift, Warmup

    conditions = entry["days"][day]
    theta, _ = day_parameters(robot, entry, conditions)
    drift = FrictionDrift(**{k: np.asarray(v) for k, v in entry["drift"].items()})
    warmup = Warmup(conditions["ambient"], np.asarray(entry["warmup_rise"]), np.asarray(entry["drift"]["t1"]))
    sensors = Measurement(tau_noise=entry["tau_noise"], encoder_counts=entry["encoder_counts"])
    traj = random_multisine(robot, seed=spec.seed, f0=0.1, harmonics=5)
    offset = np.asarray(conditions["encoder_offset"])
    total = int(round(spec.minutes * 60.0 * spec.rate))
    per_file = -(-total // spec.files_per_day)
    folder = Path(root) / f"robot={rid}" / f"date={spec.dates()[day]}"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for part in range(spec.files_per_day):
        path = folder / f"part-{part}.parquet"
        tmp = folder / f".part-{part}.parquet.tmp"
        writer = None
        try:
            for s in range(part * per_file, min((part + 1) * per_file, total), chunk):
                k = np.arange(s, min(s + chunk, (part + 1) * per_file, total))
                t = k / spec.rate
                q, dq, ddq = traj.sample(t)
                data, _, _ = simulate_joint_data(robot, t, q, dq, ddq, ModelOptions(), measurement=sensors,
                                                 seed=int(np.random.SeedSequence([spec.seed, 3, int(rid[1:]), day, s])
                                                          .generate_state(1)[0]),
                                                 theta=theta, drift=drift, cold_start=0.0)
                cols = {"t": data.t}
                cols.update({f"q{j + 1}": data.q[:, j] + offset[j] for j in range(robot.n)})
                cols.update({f"tau{j + 1}": data.tau[:, j] for j in range(robot.n)})
                if spec.temperature:
                    temp = np.round(warmup.temperatures(t, robot.n), 1).astype(np.float32)
                    cols.update({f"temp{j + 1}": temp[:, j] for j in range(robot.n)})
                table = pa.table(cols)
                if writer is None:
                    writer = pq.ParquetWriter(tmp, table.schema)
                writer.write_table(table)
            if writer is not None:
                writer.close()
                writer = None
                os.replace(tmp, path)
                written.append(str(path))
        finally:
            if writer is not None:
                writer.close()
            if tmp.exists():
                tmp.unlink()
    return written


def simulate_fleet(target: str, spec: FleetSpec, client=None, say=print, force: bool = False) -> dict:
    """Write the fleet (module docstring): data files, fleet.yaml and _truth.json; returns the
    truth. The data set is built in a hidden folder beside ``target`` and moved onto it when
    complete (``files.outputs``: an earlier fleet is replaced, a foreign folder only with ``force``)."""
    import shutil

    import dynid
    from dynid.files.outputs import finish_directory, start_directory

    spec.check()
    robot = dynid.load_robot(spec.model)
    truth = draw_truth(spec, robot)
    work = start_directory(target, "fleet simulate")
    try:
        from dynid.fleet.config import written_spec

        # fleet.yaml names a model file relative to its own folder (fleet/config.py reads it so)
        _write_fleet(str(work), spec, robot, truth, client, say, written_spec(spec.model, Path(target)))
        finish_directory(work, target, "fleet simulate", force)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return truth


def _write_fleet(root: str, spec: FleetSpec, robot, truth: dict, client, say, model: str | None = None) -> None:
    from dynid.data.io import atomic_write_text
    from dynid.fleet.config import config_text

    root_path = Path(root)
    jobs = [(rid, d) for rid in truth["robots"] for d in range(spec.days)]
    if client is None:
        for k, (rid, d) in enumerate(jobs):
            simulate_day(root, robot, rid, truth["robots"][rid], spec, d)
            if (k + 1) % max(1, len(jobs) // 10) == 0:
                say(f"simulated {k + 1}/{len(jobs)} robot-days")
    else:
        futures = [client.submit(simulate_day, root, robot, rid, truth["robots"][rid], spec, d, pure=False)
                   for rid, d in jobs]
        from distributed import as_completed

        for k, _ in enumerate(as_completed(futures, loop=client.loop)):
            if (k + 1) % max(1, len(jobs) // 10) == 0:
                say(f"simulated {k + 1}/{len(jobs)} robot-days")
        client.gather(futures)
    atomic_write_text(root_path / "fleet.yaml", config_text(
        {rid: model or spec.model for rid in truth["robots"]},
        header=f"written by 'dynid fleet simulate' (seed {spec.seed}): robot id -> model"))
    atomic_write_text(root_path / TRUTH_FILE, json.dumps(truth, indent=1) + "\n")
