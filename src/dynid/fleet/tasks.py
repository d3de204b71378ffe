"""What the workers run: inspect files, map files to normal equations, merge, solve groups.

These are plain functions of picklable values (no Dask import here), so the same code runs
in-process, on a ``LocalCluster`` or on any Dask cluster:

- ``inspect_files``: Parquet footers only: joint count (columns q1..qn), rows, time span;
- ``map_file``: ``Identification.accumulate`` (``identify.identification``) on one file (one compute thread: the
  cluster's workers are the parallelism) -> a ``Partial`` with its per-joint normal
  equations (thesis eq. 2.9 as sums, ``identify.normal_equations``), O(n b^2) floats;
  ``map_files``: the sum of several files' partials, in order (one task for a batch of files);
- ``merge_partials``: sums of partials (a node of the reduce tree; addition of sums is
  exact up to rounding, and the tree's shape is fixed, so the result does not depend on
  which worker ran what);
- ``solve_group``: ``Identification.solve`` on the summed equations -> one result row
  (``results.py``), its std those of the residuals' correlation in time (``honest_std``: pieces of
  the group's files read again at its estimate, as ``dynid identify`` does), holding the base parameters the group's data leave undetermined as
  ``dynid identify`` does (``identify.undetermined``), with a held-out validation from the equations of its folds
  (each file, or blocks of time of a group's one file: ``validation.py``);
  ``identify_groups``: map and solve whole groups in one task (the usual case: a group is a
  robot-day of one or a few files, and one task per file would make the scheduler the limit).

A file that cannot be read or is not valid joint data becomes an entry of ``Partial.errors``
(which file, why) instead of an exception, so the run goes on; transient I/O errors
(connection, timeout) are raised, so that Dask retries the task.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from dataclasses import dataclass, field, fields

import numpy as np

from dynid.errors import DataError, DynidError, DynidWarning

FILE_ERRORS = (DynidError, OSError, EOFError)  # plus pyarrow.ArrowException (added at run time)
TRANSIENT = (ConnectionError, TimeoutError)
# Identification options a fleet run does not apply (Settings.of refuses them when not at their defaults)
NOT_CARRIED = ("friction_drift", "per", "cycles", "essential", "regularize", "prior_bound", "irls_iterations", "seed")


def refuse_chosen_friction(friction: str) -> None:
    """A friction model chosen or fitted on a group's samples (``--friction auto|stribeck``,
    ``identify.stribeck``) is one error: the fleet sums each file's normal equations, which hold
    no Stribeck velocity to fit and no held-out folds to choose a model by."""
    from dynid.identify.identification import CHOSEN_FRICTION

    if friction in CHOSEN_FRICTION:
        raise DataError(f"--friction {friction}: the fleet sums normal equations and cannot choose or fit a friction "
                        "model per group: give none, coulomb-viscous, polynomial or asymmetric (dynid identify on a "
                        "group's files does it)")


@dataclass(frozen=True)
class Settings:
    """The identification settings of a run (they enter every group's fingerprint)."""

    options: object          # identify.model.ModelOptions
    prep: object             # data.preprocess.Preprocessing
    estimator: str = "ols"
    max_condition: float = 1e7
    chunk_rows: int = 50_000
    nan: str = "drop"
    tol: float | None = None
    still_range: float = 0.05  # identify.undetermined.STILL_RANGE, as 'dynid identify --still-range'
    std: str = "correlated"  # "white": Khalil-Gautier's std, no second read of the files (``honest_std``)

    def to_dict(self) -> dict:
        return {"model": self.options.to_dict(), "preprocessing": self.prep.to_dict(), "estimator": self.estimator,
                "max_condition": self.max_condition, "nan": self.nan, "tol": self.tol,
                "still_range": self.still_range, "std": self.std}

    @classmethod
    def of(cls, idn) -> "Settings":
        """The settings of a ``dynid.Identification`` (its lowpass a cutoff or None: the fleet
        does not cross-validate it per group, ``lowpass="auto"`` is refused, and so are
        ``bridge_gap="auto"`` and ``tau_delay="auto"``: nothing is measured on a group's files before
        its fit). Options the fleet does not carry (``NOT_CARRIED``, rest detection: rest="off",
        friction chosen or fitted on the samples: auto, stribeck) are refused rather than dropped."""
        if idn.lowpass == "auto":
            raise DataError("the fleet identifies with a fixed low-pass cutoff: give lowpass=HZ, or None for "
                            "min(20 Hz, fs/10)")
        refuse_chosen_friction(idn.friction)
        if idn.bridge_gap == "auto":
            raise DataError("the fleet does not measure the motion's bandwidth per group to bridge dropped cycles: give "
                            "bridge_gap=SECONDS (0.02: the fixed rule of the fleet's command)")
        if idn.rest != "off":
            raise DataError("the fleet does not detect rests per group (its settings carry no rest bands): give "
                            "rest='off'")
        if idn.tau_delay == "auto":
            raise DataError("the fleet does not measure the torque's delay per group: give tau_delay=SECONDS (0: the "
                            "fleet command's default)")
        defaults = {f.name: f.default for f in fields(idn)}
        dropped = [f"{name}={getattr(idn, name)!r}" for name in NOT_CARRIED if getattr(idn, name) != defaults[name]]
        if dropped:
            raise DataError(f"the fleet does not carry {', '.join(dropped)}: leave them at their defaults "
                            "(dynid identify on a group's files does them)")
        return cls(idn.options, idn.prep, idn.estimator, idn.max_condition, idn.chunk_rows, idn.nan, idn.tol,
                   idn.still_range)

    def identification(self, robot, spec: str):
        """The ``dynid.Identification`` of these settings on ``robot`` (named ``spec`` in results)."""
        from dynid.identify.identification import Identification

        o = self.options
        idn = Identification(robot, estimator=self.estimator, friction=o.friction, offset=o.offset,
                             rotor_inertia=o.rotor_inertia, smooth_sign=o.smooth_sign,
                             **Identification.preprocessing_options(self.prep), still_range=self.still_range,
                             nan=self.nan, chunk_rows=self.chunk_rows, max_condition=self.max_condition, tol=self.tol,
                             spec=spec)
        if idn.options != o:
            raise ValueError(f"settings not expressible as identify options: {o}")
        return idn


@dataclass
class GroupModel:
    """Everything a worker needs to map and solve the groups of one robot entry."""

    spec: str
    robot: object
    base: object             # identify.base.BaseParameters
    mapping: object          # data.columns.ColumnMapping
    settings: Settings
    threads: int | None = 1  # compute threads of the accumulation (None: one per core, as 'dynid identify')

    @property
    def identification(self):
        """The ``dynid.Identification`` that maps and solves this model's groups."""
        return self.settings.identification(self.robot, self.spec)


@dataclass
class FileInfo:
    """Footer facts of one file (``inspect_file``); error: why it could not be read, else None."""

    relpath: str
    joints: int | None = None
    rows: int = 0
    t_min: float | None = None
    t_max: float | None = None
    error: str | None = None


@dataclass
class Partial:
    """Some files of one group: ``acc`` their streamed pass (``identify.pipeline.Accumulated``:
    summed normal equations, samples, notes, rate, joint position range; None when no file could
    be used), the files used and those left out (``errors``: (path, why)), the DynidWarnings of
    reading them, and ``folds``: fold -> the equations of its files or blocks of time
    (``validation.fold_plan``), whose sum is ``acc.ne``; ``urls``: the files used, where they are."""

    acc: object | None = None
    files: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # DynidWarnings of reading the files (``recorded_warnings``)
    folds: dict = field(default_factory=dict)
    urls: list[str] = field(default_factory=list)  # where the files used are (``honest_std`` reads pieces again)

    @property
    def samples(self) -> int:
        return 0 if self.acc is None else self.acc.samples


def _file_errors() -> tuple:
    import pyarrow as pa

    return FILE_ERRORS + (pa.ArrowException,)


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if isinstance(exc, DynidError) else f"{type(exc).__name__}: {text}"


@contextlib.contextmanager
def local_copy(url: str):
    """A local path of ``url``: the path itself, or a temporary copy of a remote object."""
    if "://" not in url:
        yield url
        return
    import fsspec

    fs, path = fsspec.core.url_to_fs(url)
    fd, tmp = tempfile.mkstemp(suffix=".parquet", prefix="dynid-fleet-")
    os.close(fd)
    try:
        fs.get(path, tmp)
        yield tmp
    finally:
        os.unlink(tmp)


def joint_count(names: list[str], mapping) -> int:
    """Number of joints of a file: the longest run q1, q2, ... among its (mapped) column names."""
    have = {mapping.contract_name(c) for c in names}
    n = 0
    while f"q{n + 1}" in have:
        n += 1
    return n


@contextlib.contextmanager
def _footer_source(url: str):
    """What ``pyarrow.parquet.read_metadata`` reads: a local path, or an open remote file
    (only the footer's bytes are fetched)."""
    if "://" not in url:
        yield url
        return
    import fsspec

    with fsspec.open(url, "rb") as fh:
        yield fh


def inspect_file(url: str, relpath: str, mapping) -> FileInfo:
    """Joint count, rows and time span from the Parquet footer (no data pages read)."""
    import pyarrow.parquet as pq

    from dynid.data.columns import TIME_UNITS

    try:
        with _footer_source(url) as source:
            meta = pq.read_metadata(source)
        names = list(meta.schema.names)
        t_min = t_max = None
        t_name = next((c for c in names if mapping.contract_name(c) == "t"), None)
        if t_name is not None:
            col = names.index(t_name)
            lows, highs = [], []
            for g in range(meta.num_row_groups):
                stats = meta.row_group(g).column(col).statistics
                if stats is not None and stats.has_min_max:
                    lows.append(float(stats.min))
                    highs.append(float(stats.max))
            if lows:
                unit = TIME_UNITS[mapping.time_unit]
                t_min, t_max = min(lows) * unit, max(highs) * unit
        joints = joint_count(names, mapping)
        if joints == 0:
            return FileInfo(relpath, error=f"no joint position columns q1..qn (columns: {names[:12]})")
        return FileInfo(relpath, joints, int(meta.num_rows), t_min, t_max)
    except TRANSIENT:
        raise
    except _file_errors() as exc:
        return FileInfo(relpath, error=_reason(exc))


def inspect_files(files: list[tuple[str, str]], mapping) -> list[FileInfo]:
    """``inspect_file`` of each (url, relpath) (one task for many footers)."""
    return [inspect_file(url, relpath, mapping) for url, relpath in files]


@contextlib.contextmanager
def recorded_warnings(into: list[str], source: str = "", name: str = ""):
    """Collect the block's DynidWarnings into ``into`` (texts, ``source`` replaced by ``name``)
    instead of printing them: a worker's stderr is nobody's terminal, the group's row is where
    they are read. Other warnings pass on."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DynidWarning)
        try:
            yield
        finally:
            mine = [w for w in caught if issubclass(w.category, DynidWarning)]
            others = [w for w in caught if not issubclass(w.category, DynidWarning)]
    into += [str(w.message).replace(source, name) if source and name else str(w.message) for w in mine]
    for w in others:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def map_file(url: str, relpath: str, model: GroupModel, fold: int = 0, cuts=()) -> Partial:
    """Normal equations of one file (module docstring), also per block of time (``cuts``: its
    cut times, the blocks are folds ``fold``, ``fold`` + 1, ...); a bad file gives an error entry."""
    from dynid.fleet.validation import add_folds

    found: list[str] = []
    try:
        with local_copy(url) as path, recorded_warnings(found, path, relpath if path != url else ""):
            acc = model.identification.accumulate([path], model.mapping, model.base, model.settings.prep,
                                                  workers=model.threads, cuts=[tuple(cuts)])
    except TRANSIENT:
        raise
    except _file_errors() as exc:
        return Partial(errors=[(relpath, _reason(exc))], warnings=found)
    folds: dict = {}
    add_folds(folds, fold, acc.sources[0].blocks)
    acc.notes, acc.sources = [f"{relpath}: {note}" for note in dict.fromkeys(acc.notes)], []  # the blocks are the folds
    return Partial(acc, [relpath], [], found, folds, [url])


def map_files(files: list[tuple], model: GroupModel) -> Partial:
    """The sum of ``map_file`` of each (url, relpath[, fold, cuts]), in order (files of one group)."""
    from dynid.identify.threads import one_compute_thread

    with one_compute_thread():
        return merge_partials(*(map_file(*f[:2], model, *f[2:]) for f in files))


def merge_partials(*parts: Partial) -> Partial:
    """The sum of partials, in the order given (a node of the reduce tree)."""
    from dynid.fleet.validation import add_folds

    out = Partial()
    for p in parts:
        if p.acc is not None:
            out.acc = p.acc.copy() if out.acc is None else out.acc.merge(p.acc)
        for k, ne in p.folds.items():
            add_folds(out.folds, k, [ne])
        out.files += p.files
        out.errors += p.errors
        out.warnings += p.warnings
        out.urls += p.urls
    return out


def honest_std(model: GroupModel, fitted, part: Partial) -> dict:
    """result.json "uncertainty" of a group's fit, its std made those of the residuals' correlation in
    time as ``dynid identify`` makes them (``Identification.correlated_std``: pieces of the group's
    files, at most ``residual_correlation.PIECE_ROWS`` rows, read again at the group's estimate; no
    sample crosses the network, a remote file is copied as ``map_file`` copies it); a file that can
    no longer be read leaves the white-noise std, with the reason."""
    from dynid.identify.residual_correlation import white

    idn = model.identification
    try:
        with contextlib.ExitStack() as stack:
            paths = [stack.enter_context(local_copy(url)) for url in part.urls]
            return idn.correlated_std(fitted, model.base, paths, model.mapping, model.settings.prep)
    except TRANSIENT:
        raise
    except _file_errors() as exc:
        return white(f"the group's files could not be read again to measure the residuals' correlation "
                     f"({_reason(exc)})")


def solve_group(model: GroupModel, keys: dict, meta: dict, *parts: Partial) -> dict:
    """One result row (``results.row_from``) of a group's summed equations (the sum of
    ``parts``: the root of its reduce tree)."""
    from dynid.fleet.results import failed_row, row_from
    from dynid.fleet.validation import fold_kind, held_out
    from dynid.identify.residual_correlation import white
    from dynid.identify.threads import single_blas_thread

    part = merge_partials(*parts)
    if part.acc is None or part.samples == 0:
        why = "; ".join(f"{p}: {e}" for p, e in part.errors) or "no samples"
        return failed_row(keys, meta, part, f"no file of the group could be used ({why})")
    idn = model.identification
    checks: list[str] = []
    try:
        with single_blas_thread(), recorded_warnings(checks):  # a 52 x 52 eigh: BLAS threads only wait for busy cores
            fitted = idn.solve(part.acc.ne, part.acc.q_min, part.acc.q_max, model.base)
            with recorded_warnings([]):  # the refits' own warnings repeat the group's fit's
                validation = held_out(part.folds, lambda ne: idn.refit(ne, model.base, fitted.found).coef_,
                                      fold_kind(len(part.files)))
                uncertainty = idn.with_constraints(fitted.est, honest_std(model, fitted, part) if model.settings.std ==
                                                   "correlated" else white("dynid fleet identify --std white"))
    except DynidError as exc:
        return failed_row(keys, meta, part, _reason(exc))
    except np.linalg.LinAlgError as exc:
        return failed_row(keys, meta, part, f"the normal equations could not be solved ({exc})")
    fitted.samples, fitted.notes = part.samples, part.acc.notes
    seen = list(part.warnings) + checks
    with recorded_warnings(seen):
        result = idn.document(fitted, model.base, model.settings.prep, model.mapping, [], meta.get("where", ""),
                              extra={"fleet": {"group": keys, "files": part.files,
                                               "file_errors": [{"path": p, "error": e} for p, e in part.errors],
                                               "validation": validation}, "uncertainty": uncertainty})
    if validation.get("validation_error"):
        seen.append(f"no held-out validation: {validation['validation_error']}")
    result["warnings"] = list(dict.fromkeys(result["warnings"] + seen))
    return row_from(keys, meta, part, result, validation)


def identify_groups(items: list[tuple[list[tuple[str, str]], list[tuple[str, str]], dict, dict]],
                    model: GroupModel) -> list[dict]:
    """Whole groups of one model in one task: per item (files (url, relpath), files left out
    (relpath, why), keys, meta) the sum of its files' partials and its result row."""
    rows = []
    for files, left_out, keys, meta in items:
        rows.append(solve_group(model, keys, meta, Partial(errors=list(left_out)), map_files(files, model)))
    return rows
