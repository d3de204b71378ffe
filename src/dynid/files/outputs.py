"""Writing outputs without ever destroying anything: one module every command uses.

What a command writes goes through ``write_output`` (``dynid.data.io.atomic_write_*`` call it):

- a regular file (or a new one) is written to a hidden temporary file beside it, then moved onto
  it in one rename, so readers see the old file or the complete new one, never half of one; the
  new file gets the mode of the file it replaces, or the usual ``0666 & ~umask``;
- a symbolic link is written through to the file it names (the link stays a link);
- a FIFO or a character device (``/dev/null``, a pipe) is written to directly; a directory, a
  block device or a socket is refused;
- a temporary file carries the writer's process id (``.NAME.dynid-PID-XXXX.tmp``): it is removed
  when the command is interrupted (SIGINT, or SIGTERM inside ``command_scope``), and one left by a
  killed run (SIGKILL, power loss) is removed by the next write to the same output;
- an output that is the same file as one of the command's inputs (after resolving links) is
  refused: ``check_outputs`` before the work starts, and again at the write (before and after the
  temporary is written) for inputs that readers registered with ``note_input`` during the run, in
  any thread of the command; an output inside a directory that a reader takes as a data set
  (``note_data_set``: fleet ROOT, ``--data DIR``) is refused when the next run would read it as
  data (a ``.parquet`` file), as soon as the reader names the directory. A file the command
  wrote itself (and may read back: the demo's summary for its report) is its own, not an input,
  and may be written again.

A directory output (``dynid demo --out DIR``) is built in a hidden directory beside the target and
replaces the target in one rename, only when the target is missing, empty, or recognisably an
earlier output of the same command (its ``MARKER`` file names the command); anything else is
refused unless ``force``.

Usage in a new command (the CLI's ``friendly_errors`` already opens ``command_scope`` and checks
the options it is told are outputs)::

    @friendly_errors(outputs=("out",))
    def mycommand(data: Path = ..., out: Path = ...):
        ...
        write_output(out, lambda tmp: write_my_file(tmp))     # or atomic_write_text(out, text)
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from pathlib import Path

from dynid.errors import DataError

MARKER = ".dynid-output"
_TMP_TAG = "dynid-"


class OutputError(DataError):
    """An output cannot be written without destroying something, or the write failed."""


# -- inputs of the running command --------------------------------------------------------

# The inputs of the running command, innermost command last. One registry for the whole process,
# not one per thread: a command may read in worker threads (a thread pool of cross-validation,
# a read-ahead), and what they open is an input all the same.
_registry: list["_Inputs"] = []
# Directories read as data sets (``note_data_set``): their Parquet files (a fleet ROOT's below it,
# names starting with '.' or '_' skipped: fleet/dataset.py; --data DIR's directly in it:
# data/sources.py), so an output there would be read as data by the next run.
DATASET_SUFFIXES = (".parquet",)


class _Inputs:
    """What one command reads: files by (device, inode) -> the name given; directories; copies of
    inputs that can be read only once (``inputs.spooled``: copy -> the name the user gave), removed
    when the command ends."""

    def __init__(self):
        self.files: dict[tuple[int, int], str] = {}
        self.written: set[tuple[int, int]] = set()  # files this command wrote: its own, never inputs
        self.directories: list[tuple[str, bool]] = []  # read as data sets, recursively or not (``note_data_set``)
        self.outputs: dict[str, Path] = {}  # the command's file outputs, by option (``check_outputs``)
        self.spools: dict[str, str] = {}
        self.temporary: list[str] = []

    def user_text(self, text: str) -> str:
        """``text`` with the copies of inputs named as the user named them."""
        for copy, original in self.spools.items():
            text = text.replace(copy, original)
        return text


def json_floats(values) -> list:
    """The numbers of a 1-D sequence for a JSON output: floats, None where not finite or None
    (strict JSON has no NaN or infinity)."""
    import numpy as np  # here: the command line starts without NumPy (tests/test_cli_startup.py)

    return [float(v) if np.isfinite(v) else None for v in np.asarray(values, dtype=float)]


def running_command() -> _Inputs | None:
    """The inputs registry of the running command (None outside ``command_scope``)."""
    return _inputs()


def _inputs() -> _Inputs | None:
    return _registry[-1] if _registry else None


def _file_id(path) -> tuple[int, int] | None:
    """(device, inode) of the file a path names after following links; None if it does not exist."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def note_input(path) -> None:
    """Record that the running command reads ``path`` (no effect outside ``command_scope``)."""
    inputs = _inputs()
    if inputs is None or path is None:
        return
    key = _file_id(path)
    if key is not None and key not in inputs.written and stat.S_ISREG(os.stat(path).st_mode):
        inputs.files.setdefault(key, str(path))


def note_data_set(directory, recursive: bool = True) -> None:
    """Record that the running command reads ``directory`` as a data set: its Parquet files (below
    it when ``recursive``: a fleet ROOT; in it only: ``--data DIR``); an output of the command that
    the next run would read as data there is refused at once, and again when it is written."""
    inputs = _inputs()
    if inputs is None or directory is None:
        return
    inputs.directories.append((str(directory), recursive))
    for option, path in inputs.outputs.items():
        _refuse_if_input(path, option)


def refuse_if_input(path, option: str = "--out") -> None:
    """Refuse an output that is one of the inputs found so far (before the work, when a command has
    just found its inputs: ``report --from DIR``)."""
    _refuse_if_input(Path(path), option)


def _refuse_if_input(path: Path, option: str = "output") -> None:
    inputs = _inputs()
    key = _file_id(path)
    if inputs is None:
        return
    if key is not None and key in inputs.files:
        raise OutputError(f"{option} {path} is the same file as the input {inputs.files[key]}: "
                          "refusing to overwrite an input; choose another output path")
    for directory, recursive in inputs.directories:
        if _inside_data_set(Path(path), Path(directory), recursive):
            raise OutputError(f"{option} {path} is inside the data set {directory} (an input): the next run would "
                              f"read it as data; write it outside {directory}")


def _inside_data_set(path: Path, directory: Path, recursive: bool = True) -> bool:
    """Whether ``path`` would be read as a data file of the data-set directory ``directory``."""
    if path.suffix.lower() not in DATASET_SUFFIXES:
        return False
    try:
        relative = Path(os.path.realpath(os.path.abspath(path))).relative_to(os.path.realpath(directory))
    except ValueError:
        return False
    if not recursive:  # --data DIR: every Parquet file directly in DIR
        return len(relative.parts) == 1
    return not any(part.startswith((".", "_")) for part in relative.parts)  # a fleet ROOT skips ./_ names


# -- checks before the work starts --------------------------------------------------------

def check_output_file(path, option: str = "--out") -> None:
    """A file output must not be a directory, block device or socket."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot be written ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{option} {path} is an existing directory; expected a file path such as {path / 'out'}")
    if stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        raise OutputError(f"{option} {path} is a block device or socket; expected a file path")


def check_outputs(outputs: dict[str, object], inputs: list, directories: tuple[str, ...] = ()) -> None:
    """Before the work: each output (option name -> path) is writable in kind, differs from every
    input (same file after resolving links) and from the other outputs. Inputs are remembered for
    the checks at write time."""
    scope = _inputs()
    for value in inputs:
        if value is not None:
            key = _file_id(value)
            if key is not None and scope is not None:
                scope.files.setdefault(key, str(value))
    seen = {}
    for option, value in outputs.items():
        if value is None:
            continue
        path = Path(value)
        if option not in directories:
            check_output_file(path, option)
            if scope is not None:
                scope.outputs[option] = path
        _refuse_if_input(path, option)
        key = _file_id(path) or ("new", os.path.abspath(path))
        if key in seen:
            raise OutputError(f"{option} and {seen[key]} name the same file {path}; give each output its own path")
        seen[key] = option


# -- writing one file ---------------------------------------------------------------------

def current_umask() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # not thread-safe; only where /proc is missing
    os.umask(mask)
    return mask


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(target: Path) -> list[str]:
    """Remove the hidden temporary files and directories of ``target`` left by a dynid run that no
    longer exists (killed before it could clean up); returns what was removed."""
    pattern = re.compile(r"^\." + re.escape(target.name) + r"\." + _TMP_TAG + r"(\d+)-[^/]*$")
    removed = []
    try:
        siblings = list(target.parent.iterdir())
    except OSError:
        return removed
    for p in siblings:
        m = pattern.match(p.name)
        if m is None or _pid_alive(int(m.group(1))):
            continue
        try:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
            removed.append(p.name)
        except OSError:
            continue
    if removed:
        import warnings

        from dynid.errors import DynidWarning
        warnings.warn(DynidWarning(f"removed {len(removed)} temporary file(s) of an interrupted earlier run "
                                   f"beside {target} ({', '.join(sorted(removed)[:3])})"), stacklevel=2)
    return removed


def temporary_name(target: Path, suffix: str = ".tmp") -> str:
    """Prefix and suffix of a temporary beside target that ``remove_stale_temporaries`` recognises."""
    return f".{target.name}.{_TMP_TAG}{os.getpid()}-", suffix


def _final_target(path: Path) -> tuple[Path, os.stat_result | None]:
    """The file a write must end in (links followed) and its stat (None when it does not exist)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"{path}: cannot be written ({exc.strerror})") from None
    if path.is_symlink():
        return Path(os.path.realpath(path)), st
    return path, st


def write_output(path, write) -> None:
    """Call write(p) to produce the file, then put it at ``path`` safely (module docstring)."""
    path = Path(path)
    target, st = _final_target(path)
    _refuse_if_input(path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
            _write_through(path, write)
            return
        check_output_file(path, "output")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{path}: cannot create its directory ({exc.strerror})") from None
    remove_stale_temporaries(target)
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~current_umask()
    prefix, suffix = temporary_name(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=target.parent)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write beside it ({exc.strerror})") from None
    os.close(fd)
    try:
        write(tmp)
        _refuse_if_input(path)  # again: the writer may have opened inputs (a generator's source files)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        _note_written(target)
    except OSError as exc:
        raise OutputError(f"{path}: writing failed ({exc.strerror or exc})") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _note_written(path: Path) -> None:
    """Record a file the running command has just written: reading it back later is not reading
    an input (the demo writes summary.json, its report step reads it, the demo writes it again)."""
    inputs = _inputs()
    key = _file_id(path)
    if inputs is not None and key is not None:
        inputs.written.add(key)


def _write_through(path: Path, write) -> None:
    try:
        write(str(path))
    except OSError as exc:
        raise OutputError(f"{path}: writing failed ({exc.strerror or exc})") from None


# -- directory outputs ---------------------------------------------------------------------

def _is_earlier_output(directory: Path, command: str) -> bool:
    try:
        return json.loads((directory / MARKER).read_text()).get("command") == command
    except (OSError, ValueError, AttributeError):
        return False


def check_output_directory(path, command: str, force: bool = False, option: str = "--out") -> Path:
    """A directory output may replace only nothing, an empty directory or an earlier output of the
    same command (``force`` overrides); never the working directory or one of its parents."""
    path = Path(path)
    absolute = Path(os.path.abspath(path))
    here = Path(os.getcwd())
    if absolute == here or absolute in here.parents or absolute.parent == absolute:
        raise OutputError(f"{option} {path}: would replace the working directory or one of its parents; "
                          f"give a new directory, e.g. {option} dynid-{command}")
    if not os.path.lexists(path):
        return absolute
    if path.is_symlink() or not path.is_dir():
        raise OutputError(f"{option} {path} exists and is not a directory; give a new directory")
    if force or not any(path.iterdir()) or _is_earlier_output(path, command):
        return absolute
    raise OutputError(f"{option} {path} is an existing directory that 'dynid {command}' did not write "
                      f"(no {MARKER} file); refusing to replace it. Give a new directory, or --force "
                      "to replace it with everything in it")


def start_directory(target, command: str) -> Path:
    """A hidden directory beside ``target`` to build the output in."""
    target = Path(os.path.abspath(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    prefix, _ = temporary_name(target, "")
    work = Path(tempfile.mkdtemp(prefix=prefix + "partial-", dir=target.parent))
    (work / MARKER).write_text(json.dumps({"command": command}) + "\n")
    return work


def finish_directory(work: Path, target, command: str, force: bool = False) -> Path:
    """Move the finished ``work`` directory onto ``target`` (checked again: it may have changed)."""
    target = check_output_directory(target, command, force)
    work.chmod(0o777 & ~current_umask())
    old = None
    if os.path.lexists(target):
        prefix, _ = temporary_name(target, "")
        old = target.with_name(prefix + "old")
        target.rename(old)
    work.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return target


# -- the scope of one command: inputs, signals -----------------------------------------------

class Terminated(SystemExit):
    """Raised in the main thread on SIGTERM so ``finally`` blocks remove temporary files."""


def _on_sigterm(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    raise Terminated(128 + signum)


@contextlib.contextmanager
def command_scope():
    """Inputs registry and SIGTERM-as-exception for the duration of one command."""
    outer = _inputs()
    scope = _Inputs() if outer is None else outer
    _registry.append(scope)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        _registry.pop()
        if outer is None:
            for directory in scope.temporary:
                shutil.rmtree(directory, ignore_errors=True)
