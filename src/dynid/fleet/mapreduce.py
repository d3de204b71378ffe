"""Fleet identification on Dask: map each file to normal equations, tree-reduce per group, solve.

Data flow (one Dask task per box; only the normal equations travel, never the samples):

    plan (plan.py: files, groups, models, skips)       on the client
      -> inspect_file x files   (Parquet footers: joint counts, rows, time span)
      -> check_joint_counts     (bad input stops here: nothing is written)
      -> map_file x files       (each worker reads its file itself: accumulate_file, bounded memory)
      -> merge_partials tree    (fan-in 8 per node, per group)
      -> solve_group x groups   (estimator -> one result row)
      -> rows, written atomically to --out every ``checkpoint`` s and at the end

Why the numbers equal ``dynid identify`` on the same file: a group's normal equations are
the sums of its files' (thesis eq. 2.9 as sums), each file's come from the same
``accumulate_file`` as the in-process path, and the estimator sees the same sums up to
rounding (the order of additions differs, ~1e-15 relative).

Reliability: tasks are retried (``retries``) when they raise (a transient read error); a
worker that dies is restarted by its nanny and the scheduler runs its tasks again (a task
that kills ``distributed.scheduler.allowed-failures`` + 1 = 4 workers fails its group, and the
row says so). The reduce tree has a fixed shape, so results do not depend on which worker
ran what. Memory per worker: one task at a time (one thread per worker), and a task holds
one file's streaming window (``chunk_rows`` rows plus the filter margin) and at most
``FAN_IN`` partial sums of O(n b^2) floats (134 kB pickled for the er3a): a group never has to
fit in memory (bench/fleet.py: 355-376 MB peak per worker process, ~300 MB of it Python,
NumPy, Numba kernels and Dask). Reduce and solve tasks run before further
map tasks (Dask priorities), so partial sums do not pile up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from dynid.fleet.plan import Plan, check_joint_counts
from dynid.fleet.results import failed_row, write_results
from dynid.fleet.tasks import Partial, inspect_file, map_file, merge_partials, solve_group

FAN_IN = 8


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
    worker_memory_mb: dict = field(default_factory=dict)


def _same(value):
    return value


def reduce_tree(client, parts: list, retries: int):
    """One future (or value) whose result is the sum of ``parts``: merge nodes of FAN_IN inputs."""
    while len(parts) > 1:
        parts = [client.submit(merge_partials, *parts[i:i + FAN_IN], pure=False, retries=retries, priority=1)
                 if len(parts[i:i + FAN_IN]) > 1 else parts[i] for i in range(0, len(parts), FAN_IN)]
    return parts[0] if parts else Partial()


def _inspect(client, plan: Plan, retries: int) -> dict:
    files = plan.files
    mappings = [plan.models[g.model_id].mapping for g in plan.todo for _ in g.files]
    futures = client.map(inspect_file, [f.url for f in files], [f.relpath for f in files], mappings,
                         pure=False, retries=retries)
    return {info.relpath: info for info in client.gather(futures)}


def _meta(group, model, infos) -> dict:
    spans = [(infos[f.relpath].t_min, infos[f.relpath].t_max) for f in group.files
             if infos[f.relpath].error is None and infos[f.relpath].t_min is not None]
    where = "/".join(f"{k}={v}" for k, v in group.keys.items())
    return {"spec": model.spec, "n": model.robot.n, "estimator": model.settings.estimator,
            "fingerprint": group.fingerprint,
            "t_start": min(s[0] for s in spans) if spans else None,
            "t_end": max(s[1] for s in spans) if spans else None,
            "where": f"{where} ({len(group.files)} file(s))"}


def _submit(client, plan: Plan, infos: dict, retries: int) -> tuple[dict, list, int]:
    """Submit every group's map tasks, reduce tree and solve; returns (key -> what, futures, rows)."""
    model_futures = {mid: client.submit(_same, m, pure=False) for mid, m in plan.models.items()}
    kinds, pending, total_rows = {}, [], 0
    for group in plan.todo:
        model = plan.models[group.model_id]
        bad = [(f.relpath, infos[f.relpath].error) for f in group.files if infos[f.relpath].error]
        parts = [Partial(errors=bad)] if bad else []
        for f in group.files:
            if infos[f.relpath].error is None:
                fut = client.submit(map_file, f.url, f.relpath, model_futures[group.model_id], pure=False,
                                    retries=retries, priority=0)
                kinds[fut.key] = ("map", infos[f.relpath].rows)
                total_rows += infos[f.relpath].rows
                parts.append(fut)
                pending.append(fut)
        meta = _meta(group, model, infos)
        solve = client.submit(solve_group, reduce_tree(client, parts, retries), model_futures[group.model_id],
                              group.keys, meta, pure=False, retries=retries, priority=2)
        kinds[solve.key] = ("solve", group, meta)
        pending.append(solve)
    return kinds, pending, total_rows


def identify_fleet(client, plan: Plan, out, say=print, retries: int = 2, checkpoint: float = 30.0,
                   progress_every: float = 2.0) -> Summary:
    """Run ``plan`` on ``client`` and write the results to ``out`` (module docstring)."""
    from distributed import as_completed

    t0 = time.perf_counter()
    summary = Summary(rows=list(plan.kept), skipped=plan.skipped)
    if not plan.todo:
        write_results(out, summary.rows, plan.by, plan.root)
        return summary
    infos = _inspect(client, plan, retries)
    check_joint_counts(plan, infos)
    say(f"inspected {len(infos)} file(s) in {time.perf_counter() - t0:.1f} s; "
        f"{len(plan.todo)} group(s) to identify, {plan.skipped} unchanged group(s) skipped")
    kinds, pending, total_rows = _submit(client, plan, infos, retries)
    files_total = sum(1 for k in kinds.values() if k[0] == "map")
    completed = as_completed(pending, loop=client.loop)
    del pending  # the reduce tree holds what it needs: finished partials are released
    done_rows, files_done, groups_done = [], 0, 0
    last_say = last_write = time.perf_counter()
    for fut in completed:
        kind = kinds.pop(fut.key)
        if kind[0] == "map":
            files_done += 1
            summary.samples += kind[1]
        else:
            groups_done += 1
            try:
                row = fut.result()
            except Exception as exc:  # noqa: BLE001 - a task that kept failing: the group's row says why
                row = failed_row(kind[1].keys, kind[2], Partial(), f"{type(exc).__name__}: {exc}")
            done_rows.append(row)
        del fut
        now = time.perf_counter()
        if now - last_say >= progress_every or (groups_done == len(plan.todo) and not kinds):
            rate = summary.samples / max(now - t0, 1e-9)
            say(f"files {files_done}/{files_total}, groups {groups_done}/{len(plan.todo)}, "
                f"{summary.samples / 1e6:.2f} M of {total_rows / 1e6:.2f} M samples, {rate / 1e6:.2f} M samples/s")
            last_say = now
        if now - last_write >= checkpoint and kinds:
            write_results(out, summary.rows + done_rows, plan.by, plan.root)
            last_write = now
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
    ``identify.pipeline.accumulate_sources`` over a group's readable files with ``threads``
    compute threads (default one per core), one solve per group. The reference of the tests
    and of bench/fleet.py (a file that fails while streaming fails its group here)."""
    from dynid.errors import DynidError
    from dynid.identify.pipeline import accumulate_sources

    infos = {f.relpath: inspect_file(f.url, f.relpath, plan.models[g.model_id].mapping)
             for g in plan.todo for f in g.files}
    check_joint_counts(plan, infos)
    rows = []
    for group in plan.todo:
        model, st = plan.models[group.model_id], plan.models[group.model_id].settings
        good = [f for f in group.files if infos[f.relpath].error is None]
        part = Partial(errors=[(f.relpath, infos[f.relpath].error) for f in group.files if infos[f.relpath].error])
        try:
            acc = accumulate_sources(model.robot, [f.url for f in good], st.options, model.base, model.mapping,
                                     st.prep, st.chunk_rows, st.nan, threads)
            part = merge_partials(part, Partial(acc.ne, acc.samples, [f.relpath for f in good], [], acc.notes, acc.fs))
        except DynidError as exc:
            part.errors.append(("(group)", str(exc)))
        rows.append(solve_group(part, model, group.keys, _meta(group, model, infos)))
    return rows
