"""Fleet identification on Dask: map files to normal equations, sum them per group, solve.

Data flow (only the normal equations travel, never the samples):

    plan (plan.py: files, groups, models, skips)       on the client
      -> inspect_files x batches of 256 files  (Parquet footers: joint counts, rows, time span)
      -> check_joint_counts     (bad input stops here: nothing is written)
      -> task_units (plan.py)   tasks of at most TASK_ROWS samples:
           identify_groups x packs of whole groups   (map each file, sum, solve: one task)
           map_files x batches of a large group -> merge_partials tree -> solve_group
      -> rows, written atomically to --out every ``checkpoint`` s (or 10x the last write's
         time, when rewriting a large results file takes longer) and at the end

Why the numbers equal ``dynid identify`` on the same files: a group's normal equations are
the sums of its files' (thesis eq. 2.9 as sums), each file's come from the same
``Identification.accumulate`` as the in-process path, and the estimator sees the same sums up to
rounding (the order of additions differs, ~1e-15 relative).

Why few tasks: a Dask task costs about 1 ms of scheduler CPU and 1 ms of worker CPU whatever
it does (bench/fleet.py and docs/fleet.md); a task is a few seconds of work here, never a
footer read or a single short file.

Reliability: tasks are retried (``retries``) when they raise (a transient read error); a
worker that dies is restarted by its nanny and the scheduler runs its tasks again (a task
that kills ``distributed.scheduler.allowed-failures`` + 1 = 4 workers fails its groups, and
the rows say so). The task layout depends only on the data and the worker count, and the
reduce tree has a fixed shape, so results do not depend on which worker ran what. Memory per
worker: one task at a time (one thread per worker), and a task holds one file's streaming
window (``chunk_rows`` rows plus the filter margin), the running sum of the group it maps (and
those of its validation folds, at most ``validation.MAX_FOLDS``) and the rows of the groups it solved (or at most ``FAN_IN`` partial sums of O(n b^2) floats, 134
kB pickled for the er3a, in a merge): a group never has to fit in memory (bench/fleet.py:
peak memory per worker process in docs/fleet.md). Merge and solve tasks run before further
map tasks (Dask priorities), so partial sums do not pile up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from dynid.fleet.plan import Pack, Plan, check_joint_counts, task_units
from dynid.fleet.results import failed_row, write_results
from dynid.fleet.tasks import (
    Partial, identify_groups, inspect_files, map_files, merge_partials, recorded_warnings, solve_group,
)

FAN_IN = 8
INSPECT_BATCH = 256


@dataclass
class Summary:
    """What a run did; ``rows``: all rows written (kept ones included)."""

    rows: list[dict]
    computed: int = 0
    skipped: int = 0
    failed: int = 0
    files: int = 0
    file_errors: list[tuple[str, str]] = field(default_factory=list)
    samples: int = 0
    seconds: float = 0.0
    tasks: int = 0
    worker_memory_mb: dict = field(default_factory=dict)


def _same(value):
    return value


def reduce_tree(client, parts: list, retries: int, keep: int = 1) -> tuple[list, int]:
    """(futures or values whose sum is the sum of ``parts``, at most ``keep`` of them: the
    caller's task sums those; merge tasks submitted): merge nodes of FAN_IN inputs, level by level."""
    merges = 0
    while len(parts) > max(1, keep):
        nodes = [parts[i:i + FAN_IN] for i in range(0, len(parts), FAN_IN)]
        parts = [client.submit(merge_partials, *node, pure=False, retries=retries, priority=1) if len(node) > 1
                 else node[0] for node in nodes]
        merges += sum(len(node) > 1 for node in nodes)
    return parts, merges


def _inspect(client, plan: Plan, retries: int) -> tuple[dict, int]:
    """(FileInfo per relpath, tasks): footers read by the workers, INSPECT_BATCH files per task."""
    futures = []
    for model_id in dict.fromkeys(g.model_id for g in plan.todo):
        files = [(f.url, f.relpath) for g in plan.todo if g.model_id == model_id for f in g.files]
        mapping = plan.models[model_id].mapping
        futures += [client.submit(inspect_files, files[i:i + INSPECT_BATCH], mapping, pure=False, retries=retries)
                    for i in range(0, len(files), INSPECT_BATCH)]
    return {info.relpath: info for batch in client.gather(futures) for info in batch}, len(futures)


def _meta(group, model, infos) -> dict:
    spans = [(infos[f.relpath].t_min, infos[f.relpath].t_max) for f in group.files
             if infos[f.relpath].error is None and infos[f.relpath].t_min is not None]
    where = "/".join(f"{k}={v}" for k, v in group.keys.items())
    return {"spec": model.spec, "n": model.robot.n, "estimator": model.settings.estimator,
            "fingerprint": group.fingerprint,
            "t_start": min(s[0] for s in spans) if spans else None,
            "t_end": max(s[1] for s in spans) if spans else None,
            "where": f"{where} ({len(group.files)} file(s))"}


def _left_out(group, infos) -> list[tuple[str, str]]:
    return [(f.relpath, infos[f.relpath].error) for f in group.files if infos[f.relpath].error]


def _folds(group, infos) -> dict[str, tuple[int, tuple]]:
    """relpath -> (fold, block cut times) of the group's readable files (``validation.fold_plan``)."""
    from dynid.fleet.validation import fold_plan

    good = [f.relpath for f in group.files if infos[f.relpath].error is None]
    return dict(zip(good, fold_plan([(infos[p].t_min, infos[p].t_max) for p in good])))


def _readable(files, infos, folds) -> list[tuple]:
    """(url, relpath, fold, cuts) of the readable ones of ``files`` (``map_files``)."""
    return [(f.url, f.relpath, *folds[f.relpath]) for f in files if infos[f.relpath].error is None]


def _submit(client, plan: Plan, infos: dict, retries: int, workers: int,
            task_rows: int | None) -> tuple[dict, list, int, int]:
    """Submit every unit's tasks (module docstring); returns (key -> what it brings, futures to
    follow, rows to read, other tasks: models sent, merges). A followed task is ("map", rows,
    files) or ("rows", rows, files, [(group, meta)]): the latter's result is the groups' rows."""
    model_futures = {mid: client.submit(_same, m, pure=False) for mid, m in plan.models.items()}
    kinds, pending, total_rows, merges = {}, [], 0, len(model_futures)
    units = task_units(plan, infos, workers, task_rows)
    for unit in units:
        if isinstance(unit, Pack):
            model = plan.models[unit.model_id]
            metas = [(g, _meta(g, model, infos)) for g in unit.groups]
            items = [(_readable(g.files, infos, _folds(g, infos)), _left_out(g, infos), g.keys, meta) for g, meta in metas]
            rows = sum(infos[f[1]].rows for item in items for f in item[0])
            fut = client.submit(identify_groups, items, model_futures[unit.model_id], pure=False, retries=retries,
                                priority=0)
            kinds[fut.key] = ("rows", rows, sum(len(item[0]) for item in items), metas)
            total_rows += rows
            pending.append(fut)
            continue
        group, model = unit.group, plan.models[unit.group.model_id]
        parts, folds = [], _folds(group, infos)
        for batch in unit.batches:
            files = _readable(batch, infos, folds)
            rows = sum(infos[f[1]].rows for f in files)
            fut = client.submit(map_files, files, model_futures[group.model_id], pure=False, retries=retries,
                                priority=0)
            kinds[fut.key] = ("map", rows, len(files))
            total_rows += rows
            parts.append(fut)
            pending.append(fut)
        meta = _meta(group, model, infos)
        parts, count = reduce_tree(client, parts, retries, FAN_IN)
        merges += count
        solve = client.submit(solve_group, model_futures[group.model_id], group.keys, meta,
                              Partial(errors=_left_out(group, infos)), *parts, pure=False, retries=retries, priority=2)
        kinds[solve.key] = ("rows", 0, 0, [(group, meta)])
        pending.append(solve)
    return kinds, pending, total_rows, merges


def identify_fleet(client, plan: Plan, out, say=print, retries: int = 2, checkpoint: float = 30.0,
                   progress_every: float = 2.0, task_rows: int | None = None) -> Summary:
    """Run ``plan`` on ``client`` and write the results to ``out`` (module docstring);
    ``task_rows``: samples per task at most (default: ``plan.task_units``')."""
    from distributed import as_completed

    t0 = time.perf_counter()
    summary = Summary(rows=list(plan.kept), skipped=plan.skipped)
    if not plan.todo:
        write_results(out, summary.rows, plan.by, plan.root)
        return summary
    infos, inspect_tasks = _inspect(client, plan, retries)
    check_joint_counts(plan, infos)
    say(f"inspected {len(infos)} file(s) in {time.perf_counter() - t0:.1f} s; "
        f"{len(plan.todo)} group(s) to identify, {plan.skipped} unchanged group(s) skipped")
    workers = max(1, len(client.scheduler_info()["workers"]))
    kinds, pending, total_rows, merges = _submit(client, plan, infos, retries, workers, task_rows)
    summary.tasks = inspect_tasks + len(kinds) + merges
    files_total = sum(k[2] for k in kinds.values())
    completed = as_completed(pending, loop=client.loop)
    del pending  # the reduce trees hold what they need: finished partials are released
    done_rows, files_done, write_seconds = [], 0, 0.0
    last_say = last_write = time.perf_counter()
    for fut in completed:
        kind = kinds.pop(fut.key)
        files_done += kind[2]
        summary.samples += kind[1]
        if kind[0] == "rows":
            try:
                rows = fut.result()
                rows = rows if isinstance(rows, list) else [rows]
            except Exception as exc:  # noqa: BLE001 - a task that kept failing: its groups' rows say why
                rows = [failed_row(group.keys, meta, Partial(), f"{type(exc).__name__}: {exc}")
                        for group, meta in kind[3]]
            done_rows += rows
        del fut
        now = time.perf_counter()
        if now - last_say >= progress_every or not kinds:
            rate = summary.samples / max(now - t0, 1e-9)
            say(f"files {files_done}/{files_total}, groups {len(done_rows)}/{len(plan.todo)}, "
                f"{summary.samples / 1e6:.2f} M of {total_rows / 1e6:.2f} M samples, {rate / 1e6:.2f} M samples/s")
            last_say = now
        if now - last_write >= max(checkpoint, 10.0 * write_seconds) and kinds:
            write_results(out, summary.rows + done_rows, plan.by, plan.root)
            last_write = time.perf_counter()
            write_seconds = last_write - now  # a large file is rewritten less often: <= 10 % of the time
    summary.rows += done_rows
    write_results(out, summary.rows, plan.by, plan.root)
    summary.seconds = time.perf_counter() - t0
    summary.computed = len(done_rows)
    summary.failed = sum(r["status"] != "ok" for r in done_rows)
    summary.files = files_total
    summary.file_errors = [(e["path"], e["error"]) for r in done_rows for e in r["file_errors"]]
    try:
        from dynid.fleet.cluster import worker_peak_memory

        summary.worker_memory_mb = worker_peak_memory(client)
    except Exception:  # noqa: BLE001 - a figure for the log only
        summary.worker_memory_mb = {}
    return summary


def identify_in_process(plan: Plan, threads: int | None = None) -> list[dict]:
    """The same groups without Dask, as ``dynid identify --data F1 --data F2 ...`` streams them:
    ``Identification.accumulate`` over a group's readable files with ``threads``
    compute threads (default one per core), one solve per group. The reference of the tests
    and of bench/fleet.py (a file that fails while streaming fails its group here)."""
    from dynid.errors import DynidError
    from dynid.fleet.validation import add_folds

    infos = {info.relpath: info for g in plan.todo
             for info in inspect_files([(f.url, f.relpath) for f in g.files], plan.models[g.model_id].mapping)}
    check_joint_counts(plan, infos)
    rows = []
    for group in plan.todo:
        model = plan.models[group.model_id]
        good = [f for f in group.files if infos[f.relpath].error is None]
        part = Partial(errors=_left_out(group, infos))
        plan_folds = _folds(group, infos)
        try:
            with recorded_warnings(part.warnings):
                acc = model.identification.accumulate([f.url for f in good], model.mapping, model.base,
                                                      model.settings.prep, threads,
                                                      cuts=[plan_folds[f.relpath][1] for f in good])
            folds: dict = {}
            for f, source in zip(good, acc.sources):
                add_folds(folds, plan_folds[f.relpath][0], source.blocks)
            acc.sources = []  # their blocks are the folds
            part = merge_partials(part, Partial(acc, [f.relpath for f in good], folds=folds, urls=[f.url for f in good]))
        except DynidError as exc:
            part.errors.append(("(group)", str(exc)))
        rows.append(solve_group(model, group.keys, _meta(group, model, infos), part))
    return rows
