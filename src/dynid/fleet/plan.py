"""Planning a fleet identification: which groups, which model each, which to skip, what is wrong.

``task_units`` then cuts the work into Dask tasks of at most ``TASK_ROWS`` samples: whole
groups packed together (``Pack``: one task maps and solves them), and a group larger than
that split into batches of its files (``Split``: one task per batch, a reduce tree, a solve).
A task costs the scheduler about a millisecond whatever its size, so a task per file of a
fleet of 365 000 robot-days would make the scheduler the limit (docs/fleet.md).

Everything a user can get wrong is found here, before any result is written: a partition
without a model in fleet.yaml, a data set without files, ``--by`` keys the files lack, and
(``check_joint_counts``, from the Parquet footers) files of one robot with different joint
counts or a joint count other than its model's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dynid.errors import DataError
from dynid.fleet.dataset import FleetFile, discover, fingerprint, group_files
from dynid.fleet.tasks import FileInfo, GroupModel, Settings  # noqa: F401 - Settings is part of this API

TASK_ROWS = 4_000_000  # samples per task at most (a few seconds of CPU at ~1.5 us/sample)
TASKS_PER_WORKER = 4   # at least this many tasks per worker when the data allow (load balance)


@dataclass
class Group:
    keys: dict[str, str]
    files: list[FleetFile]
    model_id: str
    fingerprint: str

    @property
    def robot(self) -> str:
        return self.files[0].robot


@dataclass
class Plan:
    root: str
    by: tuple[str, ...]
    models: dict[str, GroupModel]
    todo: list[Group]
    kept: list[dict]                      # rows of earlier runs that stay (inputs unchanged)
    skipped: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[FleetFile]:
        return [f for g in self.todo for f in g.files]


def _models(config, robot_ids, settings: Settings) -> tuple[dict[str, GroupModel], dict[str, str]]:
    """One GroupModel per distinct (model spec, data layout); robot id -> its model id."""
    import dynid
    from dynid.identify.base import base_parameters

    models, which, loaded = {}, {}, {}
    for rid in sorted(robot_ids):
        entry = config.entry(rid)
        model_id = f"{entry.spec}|{entry.mapping.to_dict()}"
        if model_id not in models:
            if entry.spec not in loaded:
                try:
                    robot = dynid.load_robot(entry.spec)
                except FileNotFoundError as exc:
                    raise DataError(f"{config.source}: robots.{rid}: {exc}") from None
                loaded[entry.spec] = (robot, base_parameters(robot, settings.options, tol=settings.tol))
            robot, base = loaded[entry.spec]
            models[model_id] = GroupModel(entry.spec, robot, base, entry.mapping, settings)
        which[rid] = model_id
    return models, which


def make_plan(root: str, config, by: tuple[str, ...], settings: Settings, previous: list[dict] | None = None,
              previous_by: tuple[str, ...] | None = None, force: bool = False) -> Plan:
    """Groups to compute (and rows of ``previous`` results to keep: same group, same fingerprint)."""
    files = discover(root)
    groups = group_files(files, by)
    robot_ids = {f.robot for f in files}
    missing = sorted(rid for rid in robot_ids if rid not in config.robots)
    if missing:
        count = sum(f.robot == missing[0] for f in files)
        more = f" (and {len(missing) - 1} more robot(s): {missing[1:4]})" if len(missing) > 1 else ""
        raise DataError(f"partition robot={missing[0]} ({count} file(s)) has no model in {config.source}{more}; "
                        f"add '  {missing[0]}: er3a' (builtin name, .urdf or .yaml) under 'robots:'")
    models, which = _models(config, robot_ids, settings)
    notes = []
    old = {}
    if previous and not force:
        if previous_by != by:
            notes.append(f"earlier results were grouped by {','.join(previous_by or ())}: all groups are computed again")
        else:
            old = {tuple(r[k] for k in by): r for r in previous}
    todo, kept, skipped = [], [], 0
    for key, group_files_ in groups.items():
        rid = group_files_[0].robot
        entry = config.entry(rid)
        fp = fingerprint(group_files_, {"settings": settings.to_dict(), "robot": entry.to_dict(), "by": list(by)})
        earlier = old.pop(key, None)
        if earlier is not None and earlier.get("fingerprint") == fp:
            kept.append(earlier)
            skipped += 1
            continue
        todo.append(Group(dict(zip(by, key)), group_files_, which[rid], fp))
    if old:
        kept.extend(old.values())
        notes.append(f"kept {len(old)} earlier group(s) whose files are no longer in {root}")
    return Plan(root, by, models, todo, kept, skipped, notes)


def check_joint_counts(plan: Plan, infos: dict[str, FileInfo]) -> None:
    """DataError for mixed joint counts under one robot, or counts other than the model's
    (files whose footer could not be read are reported per group, not here)."""
    seen: dict[str, dict[int, str]] = {}
    for group in plan.todo:
        for f in group.files:
            info = infos[f.relpath]
            if info.error is None:
                seen.setdefault(f.robot, {}).setdefault(info.joints, f.relpath)
    for kept in plan.kept:  # earlier results of the same robot count too
        if kept.get("status") == "ok" and kept.get("n") and kept.get("robot") is not None:
            seen.setdefault(kept["robot"], {}).setdefault(int(kept["n"]), f"(earlier results of {kept['robot']})")
    robot_model = {g.robot: plan.models[g.model_id] for g in plan.todo}
    for rid, counts in sorted(seen.items()):
        if len(counts) > 1:
            shown = ", ".join(f"{n} in {path}" for n, path in sorted(counts.items()))
            raise DataError(f"robot={rid}: files with different joint counts ({shown}); "
                            "the files of one robot must share one joint layout")
        (count, path), = counts.items()
        model = robot_model.get(rid)
        if model is not None and count != model.robot.n:
            raise DataError(f"robot={rid}: {path} has {count} joint column(s) q1..q{count} but its model "
                            f"'{model.spec}' in fleet.yaml has {model.robot.n} joints")


@dataclass
class Pack:
    """Whole groups of one model that one task maps and solves (``tasks.identify_groups``)."""

    model_id: str
    groups: list[Group] = field(default_factory=list)


@dataclass
class Split:
    """A group too large for one task: batches of its readable files (``tasks.map_files``
    each), summed by a reduce tree and solved."""

    group: Group
    batches: list[list[FleetFile]]


def task_units(plan: Plan, infos: dict[str, FileInfo], workers: int, task_rows: int | None = None) -> list:
    """Packs and splits (module docstring) of at most ``task_rows`` samples each (default:
    ``TASK_ROWS`` or fewer, so that each worker gets ``TASKS_PER_WORKER`` tasks), in the order
    of the groups; a single file larger than that is one task."""
    def rows(f: FleetFile) -> int:
        return infos[f.relpath].rows if infos[f.relpath].error is None else 0

    total = sum(rows(f) for f in plan.files)
    limit = max(1, task_rows or min(TASK_ROWS, -(-total // (TASKS_PER_WORKER * max(1, workers)))))
    units, pack, pack_rows = [], None, 0
    for group in plan.todo:
        good = [f for f in group.files if infos[f.relpath].error is None]
        size = sum(rows(f) for f in good)
        if size > limit and len(good) > 1:
            batches, batch, batch_rows = [], [], 0
            for f in good:
                if batch and batch_rows + rows(f) > limit:
                    batches.append(batch)
                    batch, batch_rows = [], 0
                batch.append(f)
                batch_rows += rows(f)
            units.append(Split(group, batches + [batch]))
            continue
        if pack is None or pack.model_id != group.model_id or (pack.groups and pack_rows + size > limit):
            pack, pack_rows = Pack(group.model_id), 0
            units.append(pack)
        pack.groups.append(group)
        pack_rows += size
    return units
