"""fleet_results.parquet: one row per group of ``dynid fleet identify`` (docs/formats.md).

Columns: the group keys (``--by``, strings), ``status`` (ok | failed) and ``error``; the
model (``robot_model``, ``n``, ``estimator``); the inputs (``files``: used file paths below
ROOT, ``file_errors``: list of {path, error} of the files left out, ``samples``,
``t_start``/``t_end``: time span of the data [s], ``fingerprint``: sha256 of the files'
size + modification time and the run's settings, which reruns compare); the identification
(``parameter_names``, ``parameter_values``, ``parameter_std``, ``rmsd`` and
``relative_rmsd`` per joint (thesis eq. 5.1, on the group's own data), held out
(``validation.py``: ``validation_rmsd`` and ``validation_relative_rmsd`` per joint,
``validation_relative_error`` of all joints, ``validation_folds``, ``validation_kind``),
``condition_number``,
``warnings``) and ``result_json``: the group's complete result.json, as ``dynid identify``
writes it (``dynid predict`` can use it). The schema metadata holds the grouping keys.
Written atomically (``data.io.atomic_write_bytes``).
"""

from __future__ import annotations

import json
import math

from dynid import __version__
from dynid.errors import DataError

BY_META = b"dynid.fleet.by"
ROOT_META = b"dynid.fleet.root"


def _floats(values) -> list:
    return [None if v is None or not math.isfinite(float(v)) else float(v) for v in values]


def _base_row(keys: dict, meta: dict, part) -> dict:
    row = dict(keys)
    row.update({"robot_model": meta.get("spec", ""), "files": list(part.files),
                "file_errors": [{"path": p, "error": e} for p, e in part.errors],
                "samples": int(part.samples), "t_start": meta.get("t_start"), "t_end": meta.get("t_end"),
                "fingerprint": meta.get("fingerprint", ""), "dynid_version": __version__})
    return row


NO_VALIDATION = {"validation_rmsd": None, "validation_relative_rmsd": None, "validation_relative_error": None,
                 "validation_folds": 0, "validation_kind": None}


def failed_row(keys: dict, meta: dict, part, error: str) -> dict:
    row = _base_row(keys, meta, part)
    row.update({"status": "failed", "error": error, "n": meta.get("n"), "estimator": meta.get("estimator"),
                "parameter_names": [], "parameter_values": [], "parameter_std": [], "rmsd": [],
                "relative_rmsd": [], "condition_number": None, "warnings": [], "result_json": None})
    row.update(NO_VALIDATION)
    return row


def row_from(keys: dict, meta: dict, part, result: dict, validation: dict | None = None) -> dict:
    """A row from a group's result.json dictionary (``identify.result.build_result``) and its
    held-out validation (``validation.held_out``)."""
    row = _base_row(keys, meta, part)
    params = result["base_parameters"]
    row.update({"status": "ok", "error": None, "n": int(result["n"]), "estimator": result["estimator"],
                "parameter_names": [p["name"] for p in params],
                "parameter_values": _floats(p["value"] for p in params),
                "parameter_std": _floats(p["std"] for p in params),
                "rmsd": _floats(result["fit"]["rmsd"]), "relative_rmsd": _floats(result["fit"]["relative_rmsd"]),
                "condition_number": result["fit"].get("condition_number"),
                "warnings": list(result.get("warnings", [])), "result_json": json.dumps(result)})
    row.update(NO_VALIDATION)
    row.update({k: v for k, v in (validation or {}).items() if k in NO_VALIDATION})
    return row


def schema(by: tuple[str, ...]):
    import pyarrow as pa

    fields = [pa.field(k, pa.string()) for k in by]
    fields += [
        pa.field("status", pa.string()), pa.field("error", pa.string()),
        pa.field("robot_model", pa.string()), pa.field("n", pa.int32()), pa.field("estimator", pa.string()),
        pa.field("files", pa.list_(pa.string())),
        pa.field("file_errors", pa.list_(pa.struct([("path", pa.string()), ("error", pa.string())]))),
        pa.field("samples", pa.int64()), pa.field("t_start", pa.float64()), pa.field("t_end", pa.float64()),
        pa.field("fingerprint", pa.string()),
        pa.field("parameter_names", pa.list_(pa.string())), pa.field("parameter_values", pa.list_(pa.float64())),
        pa.field("parameter_std", pa.list_(pa.float64())), pa.field("rmsd", pa.list_(pa.float64())),
        pa.field("relative_rmsd", pa.list_(pa.float64())),
        pa.field("validation_rmsd", pa.list_(pa.float64())), pa.field("validation_relative_rmsd", pa.list_(pa.float64())),
        pa.field("validation_relative_error", pa.float64()), pa.field("validation_folds", pa.int32()),
        pa.field("validation_kind", pa.string()),
        pa.field("condition_number", pa.float64()),
        pa.field("warnings", pa.list_(pa.string())), pa.field("result_json", pa.string()),
        pa.field("dynid_version", pa.string()),
    ]
    return pa.schema(fields)


def write_results(path, rows: list[dict], by: tuple[str, ...], root: str = "") -> None:
    """All rows, sorted by their keys, to ``path`` atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dynid.data.io import atomic_write_bytes

    rows = sorted(rows, key=lambda r: tuple(r[k] for k in by))
    sch = schema(by).with_metadata({BY_META: ",".join(by).encode(), ROOT_META: str(root).encode()})
    table = pa.Table.from_pylist([{f.name: r.get(f.name) for f in sch} for r in rows], schema=sch)
    atomic_write_bytes(path, lambda tmp: pq.write_table(table, tmp))


def read_results(path) -> tuple[list[dict], tuple[str, ...], str]:
    """(rows, grouping keys, ROOT) of a results file written by ``write_results``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if "://" not in str(path):  # a local file: named when missing, registered as an input
        from dynid.files.inputs import input_file

        input_file(path, "fleet results file (dynid fleet identify --out)")
    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{path}: not a readable Parquet file ({' '.join(str(exc).split())})") from exc
    meta = table.schema.metadata or {}
    if BY_META not in meta:
        raise DataError(f"{path}: not a fleet results file (no '{BY_META.decode()}' in its schema metadata); "
                        "expected the output of 'dynid fleet identify'")
    by = tuple(meta[BY_META].decode().split(","))
    return table.to_pylist(), by, meta.get(ROOT_META, b"").decode()
