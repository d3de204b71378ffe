"""The rooms of src/dynid import one way (docs/layout.md): no import cycle, and no lower room
importing a higher one, not even inside a function.

The graph is built from the source with ``ast``, so imports inside functions count as much as
those at the top of a module (they keep start-up fast, but a cycle they hide is still a cycle).
The lazy attributes of a package (``_WHERE = {"name": "dynid.room.module"}``, see dynid/lazy.py)
count too: a string constant that names a dynid module is an edge to it.

Layers, lowest first; a room may import its own layer's rooms (no cycle between them) and any
lower layer:

    errors, lazy, version, files
    robot
    data
    dynamics
    multibody, identify
    excite, export, simulate
    report, friction, drives
    demo, fleet
    cli
    dynid (the package itself: the public facade, which lazily re-exports from the rooms)
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

LAYERS = (
    ("errors", "lazy", "version", "files"),
    ("robot",),
    ("data",),
    ("dynamics",),
    ("multibody", "identify"),
    ("excite", "export", "simulate"),
    ("report", "friction", "drives"),
    ("demo", "fleet"),
    ("cli",),
    ("dynid",),
)
LEVEL = {room: level for level, rooms in enumerate(LAYERS) for room in rooms}


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def room(module: str) -> str:
    """``dynid.identify.base`` -> ``identify``; the package ``dynid`` itself is the room ``dynid``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _docstring_nodes(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def facade_names(src: Path = SRC) -> dict[str, str]:
    """Name -> module for what the package ``dynid`` offers: its own imports (``DataError`` ->
    ``dynid.errors``) and its lazy attributes (``load_robot`` -> ``dynid.robot``, dynid/lazy.py)."""
    names = {}
    init = src / "dynid" / "__init__.py"
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update({alias.asname or alias.name: node.module for alias in node.names})
    if src == SRC:
        import dynid

        names.update(getattr(dynid, "_WHERE", {}))
    return names


def import_edges(src: Path = SRC) -> dict[str, dict[str, int]]:
    """module -> {imported dynid module: line}, every import statement included (inside functions
    too), plus string constants naming a dynid module (lazy attributes). What is imported from
    the package ``dynid`` itself is an edge to the module that defines it (``from dynid import
    __version__`` -> ``dynid.version``; ``import dynid; dynid.load_robot(...)`` -> ``dynid.robot``)."""
    files = {module_name(p, src): p for p in (src / "dynid").rglob("*.py")}
    packages = {m for m, p in files.items() if p.name == "__init__.py"}
    facade = facade_names(src)
    edges: dict[str, dict[str, int]] = defaultdict(dict)

    def add(source: str, target: str, line: int) -> None:
        head = target.split(".")
        if len(head) > 1 and head[0] == "dynid" and head[1] in facade and f"dynid.{head[1]}" not in files:
            target = facade[head[1]]
        while target not in files and "." in target:  # an attribute of a module: the module
            target = target.rsplit(".", 1)[0]
        if target in files and target != source:
            edges[source].setdefault(target, line)

    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = module if module in packages else module.rsplit(".", 1)[0]
        docstrings = _docstring_nodes(tree)
        binds_dynid = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "dynid" and alias.asname is None:
                        binds_dynid = True  # the edges are the attributes used: dynid.load_robot
                    elif alias.name.split(".")[0] == "dynid":
                        binds_dynid |= alias.asname is None
                        add(module, alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "dynid":
                    continue
                for alias in node.names:  # `from dynid.room import module` names a module
                    name = f"{target}.{alias.name}"
                    add(module, name if name in files or target == "dynid" else target, node.lineno)
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value
                  and node.value in files and id(node) not in docstrings):
                add(module, node.value, node.lineno)
        if binds_dynid:
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "dynid":
                    add(module, f"dynid.{node.attr}", node.lineno)
    return edges


def cycles(graph) -> list[list[str]]:
    """One cycle [a, b, ..., a] through each strongly connected part of ``graph`` that has one."""
    found, done = [], set()
    while True:
        rest = {a: {b for b in graph.get(a, ()) if b not in done} for a in graph if a not in done}
        cycle = find_cycle(rest)
        if cycle is None:
            return found
        found.append(cycle)
        done.update(cycle)


def find_cycle(graph: dict[str, set[str]] | dict[str, dict[str, int]]) -> list[str] | None:
    """One cycle of ``graph`` as [a, b, ..., a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(graph.get(start, ()))))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(graph.get(child, ())))))
    return None


EDGES = import_edges()


def test_the_graph_sees_imports_inside_functions_and_lazy_attributes():
    # dynid/cli/main.py registers the commands inside a function; the data package's lazy
    # attributes name their modules in strings. Both must be edges, or the checks below are blind.
    assert "dynid.data.io" in EDGES["dynid.data"]
    assert any(room(t) == "identify" for t in EDGES["dynid.cli.identify_cmd"])
    assert len(EDGES) > 150


def test_every_room_has_a_layer():
    rooms = {room(m) for m in EDGES} | {room(t) for targets in EDGES.values() for t in targets}
    assert rooms <= set(LEVEL), f"rooms without a layer in this test and docs/layout.md: {sorted(rooms - set(LEVEL))}"


def test_no_lower_room_imports_a_higher_one():
    upward = [f"{source} (line {line}) imports {target}: {room(source)} sits below {room(target)}"
              for source, targets in sorted(EDGES.items()) for target, line in sorted(targets.items())
              if LEVEL[room(target)] > LEVEL[room(source)]]
    assert not upward, "\n".join(upward)


def test_no_import_cycle_between_modules():
    found = cycles(EDGES)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(
        f"{a} (line {EDGES[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}" for cycle in found)


def test_no_import_cycle_between_rooms():
    rooms: dict[str, set[str]] = defaultdict(set)
    for source, targets in EDGES.items():
        rooms[room(source)].update(room(t) for t in targets if room(t) != room(source))
    cycle = find_cycle(rooms)
    assert cycle is None, "rooms import each other: " + " -> ".join(cycle)


@pytest.mark.parametrize("graph, cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"d2"}, "d2": {"d"}}, ["d", "d2", "d"]),
    ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, None),
])
def test_find_cycle_finds_a_cycle_and_only_a_cycle(graph, cycle):
    assert find_cycle(graph) == cycle


def test_an_import_inside_a_function_is_an_edge(tmp_path):
    pkg = tmp_path / "dynid"
    (pkg / "robot").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "robot" / "__init__.py").write_text("")
    (pkg / "robot" / "a.py").write_text("def f():\n    from dynid.robot import b\n    return b\n")
    (pkg / "robot" / "b.py").write_text("from . import a\n")
    edges = import_edges(tmp_path)
    assert edges["dynid.robot.a"] == {"dynid.robot.b": 2}
    assert find_cycle(edges) == ["dynid.robot.a", "dynid.robot.b", "dynid.robot.a"]
