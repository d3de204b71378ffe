"""Opening input files and documents so that a bad one ends in one clear DataError.

- ``input_file``: the path names a readable regular file (a FIFO where the reader allows it); a
  directory, a device such as ``/dev/zero`` or a socket is refused before any reader touches it.
  The file is registered as an input of the running command (``dynid.files.outputs.note_input``),
  so no output of that command may overwrite it. A FIFO (``--data <(zcat log.csv.gz)``, a pipe
  on ``/dev/stdin``) can be read once only, while readers look at a file more than once (its
  header, its time stamps, then its rows): it is copied once into a private temporary file
  (``spooled``), which the readers then use; messages name the FIFO as the user gave it, and
  the copy is removed when the command ends.
- ``read_json_document`` / ``read_yaml_document``: text -> Python objects with bounds on what a
  document may expand to: nesting depth (``MAX_DEPTH``) and the number of values after YAML
  aliases are expanded (``MAX_NODES``; an 838-byte file of nested aliases expands to billions).
  YAML keys must be unique (the later one would silently win).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from dynid.files.outputs import note_input
from dynid.errors import DataError

MAX_DEPTH = 64
MAX_NODES = 2_000_000


def input_file(path, what: str = "input file", fifo: bool = False, error=DataError) -> Path:
    """``path`` as a Path after checking it names a regular file (or a FIFO when ``fifo``)."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} not found: {path}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{path} is a directory; expected a {what}")
    if not (stat.S_ISREG(st.st_mode) or (fifo and stat.S_ISFIFO(st.st_mode))):
        raise error(f"{path} is not a regular file (a device, FIFO or socket); expected a {what}")
    if not os.access(path, os.R_OK):
        raise PermissionError(f"{path}: no permission to read the {what}")
    note_input(path)
    if stat.S_ISFIFO(st.st_mode):
        return spooled(path, (st.st_dev, st.st_ino))
    return path


_SPOOLS: dict[tuple[int, int], Path] = {}  # FIFO (device, inode) -> its copy, outside a command


def spooled(path: Path, key: tuple[int, int]) -> Path:
    """A regular-file copy of the FIFO ``path`` (module docstring), made once per FIFO."""
    import shutil
    import tempfile
    import weakref

    from dynid.files.outputs import running_command

    scope = running_command()
    for copy, original in (scope.spools.items() if scope is not None else ()):
        if original == str(path):
            return Path(copy)
    if scope is None and key in _SPOOLS:
        return _SPOOLS[key]
    directory = tempfile.mkdtemp(prefix="dynid-fifo-")
    copy = Path(directory) / (path.name or "input")
    try:
        with open(path, "rb") as source, open(copy, "wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
    except OSError as exc:
        shutil.rmtree(directory, ignore_errors=True)
        raise DataError(f"{path}: reading the FIFO failed ({exc.strerror or exc})") from None
    if scope is not None:
        scope.spools[str(copy)] = str(path)
        scope.temporary.append(directory)
    else:
        _SPOOLS[key] = copy
        weakref.finalize(copy, shutil.rmtree, directory, True)  # at exit at the latest
    return copy


def read_text(path, what: str, error=DataError) -> str:
    """The UTF-8 text of a regular input file."""
    path = input_file(path, what, error=error)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not a UTF-8 text {what} (byte {exc.start} is {exc.object[exc.start:exc.start + 1]!r})"
                    ) from None


def check_depth(value, source: str, error=DataError, limit: int = MAX_DEPTH) -> None:
    """Refuse documents nested deeper than ``limit`` (iterative: deep input cannot overflow it)."""
    stack = [(value, 1)]
    seen = set()
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                raise error(f"{source}: nested deeper than {limit} levels; not a dynid document")
            if id(item) in seen:
                continue
            seen.add(id(item))
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))


def read_json_document(path, what: str, error=DataError):
    """Parsed JSON of an input file, with the file named in every error."""
    text = read_text(path, what, error)
    try:
        value = json.loads(text)
    except RecursionError:
        raise error(f"{path}: nested deeper than {MAX_DEPTH} levels; not a {what}") from None
    except ValueError as exc:  # JSONDecodeError, or an integer of too many digits
        raise error(f"{path}: not a JSON {what} ({exc})") from None
    check_depth(value, str(path), error)
    return value


def yaml_expanded_size(node, limit: int = MAX_NODES) -> int:
    """Number of scalar/sequence/mapping values a composed YAML node stands for once aliases are
    expanded (aliases are shared nodes: counted by memo, never expanded); stops past ``limit``."""
    import yaml

    size: dict[int, int] = {}
    order, stack = [], [(node, 1)]
    while stack:  # depth-first post-order without recursion
        item, depth = stack.pop()
        if id(item) in size:
            continue
        size[id(item)] = -1
        order.append(item)
        if depth > MAX_DEPTH:
            return limit + 1
        if isinstance(item, yaml.SequenceNode):
            stack.extend((c, depth + 1) for c in item.value)
        elif isinstance(item, yaml.MappingNode):
            stack.extend((c, depth + 1) for kv in item.value for c in kv)
    for item in reversed(order):
        if isinstance(item, yaml.SequenceNode):
            children = item.value
        elif isinstance(item, yaml.MappingNode):
            children = [c for kv in item.value for c in kv]
        else:
            children = []
        total = 1 + sum(max(size.get(id(c), 1), 1) for c in children)
        size[id(item)] = min(total, limit + 1)
    return size[id(node)]


def read_yaml_document(path, what: str, error=DataError):
    """Parsed YAML (safe types only) of an input file, refused when aliases would expand it beyond
    MAX_NODES values, when nested deeper than MAX_DEPTH, or when a mapping repeats a key."""
    import yaml

    text = read_text(path, what, error)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise error(f"{path}: malformed YAML ({exc})".replace("\n", " ")) from None
    except RecursionError:
        raise error(f"{path}: nested deeper than {MAX_DEPTH} levels; not a {what}") from None
    if node is None:
        return None
    if yaml_expanded_size(node) > MAX_NODES:
        raise error(f"{path}: the document expands (through YAML aliases or nesting) beyond {MAX_NODES} values "
                    f"or {MAX_DEPTH} levels; not a {what}")
    _unique_keys(node, str(path), error)
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise error(f"{path}: malformed YAML ({exc})".replace("\n", " ")) from None
    finally:
        loader.dispose()


def _unique_keys(node, source: str, error) -> None:
    import yaml

    stack, seen = [node], set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, yaml.MappingNode):
            first: dict[str, int] = {}  # key -> line of its first occurrence
            for k, _ in item.value:
                if isinstance(k, yaml.ScalarNode) and k.value != "<<":
                    if k.value in first:
                        raise error(f"{source}: line {k.start_mark.line + 1}: key '{k.value}' appears twice in one "
                                    f"mapping (first at line {first[k.value]}); keep one (YAML would silently "
                                    "use the last)")
                    first[k.value] = k.start_mark.line + 1
            stack.extend(c for kv in item.value for c in kv)
        elif isinstance(item, yaml.SequenceNode):
            stack.extend(item.value)
