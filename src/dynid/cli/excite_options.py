"""Command-line limit options of ``dynid excite``: parsing into ``LimitOptions`` and printing.

Value options (--dq-max, --ddq-max, --tau-max and the --*-scale ones) accept, repeatable:
``3.0`` (every joint), ``3,3,4,5,6,6,8`` (one per joint) or ``J:V`` (joint J by 1-based
number or name). ``--q-range`` accepts ``LOW,HIGH`` (every joint) or ``J:LOW,HIGH``.
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import typer

from dynid.errors import DataError

VALUE_OPTIONS = ("dq_max", "ddq_max", "tau_max", "dq_scale", "ddq_scale", "tau_scale")


# typer option declarations shared by optimize, evaluate and protocol
Q_RANGE = typer.Option(None, "--q-range", help="position range [rad|m]: LOW,HIGH for every joint or J:LOW,HIGH "
                       "(J = joint number or name); repeatable")
DQ_MAX = typer.Option(None, "--dq-max", help="velocity limit: V, V1,...,Vn or J:V; repeatable")
DDQ_MAX = typer.Option(None, "--ddq-max", help="acceleration limit: V, V1,...,Vn or J:V; repeatable "
                       "(default: from the effort limit and the inertia, docs/excitation.md)")
TAU_MAX = typer.Option(None, "--tau-max", help="torque/force limit: V, V1,...,Vn or J:V; repeatable")
DQ_SCALE = typer.Option(None, "--dq-scale", help="multiply the velocity limits (e.g. 0.5 of the URDF's); V or J:V")
DDQ_SCALE = typer.Option(None, "--ddq-scale", help="multiply the acceleration limits; V or J:V")
TAU_SCALE = typer.Option(None, "--tau-scale", help="multiply the torque limits; V or J:V")
CONTINUOUS_RANGE = typer.Option(2 * math.pi, "--continuous-range",
                                help="width [rad] of the range a joint without position limits moves in, "
                                     "centred on 0 (default one turn)")
LIMITS_FILE = typer.Option(None, "--limits", help="limits YAML (docs/excitation.md), alongside any robot")
# name -> (type, option) of the limit parameters every excite command takes (``with_options``)
LIMIT_PARAMS = {"q_range": (list[str], Q_RANGE), "dq_max": (list[str], DQ_MAX), "ddq_max": (list[str], DDQ_MAX),
                "tau_max": (list[str], TAU_MAX), "dq_scale": (list[str], DQ_SCALE),
                "ddq_scale": (list[str], DDQ_SCALE), "tau_scale": (list[str], TAU_SCALE),
                "continuous_range": (float, CONTINUOUS_RANGE), "limits_file": (Path, LIMITS_FILE)}


def with_options(*groups: dict):
    """Add shared option parameters ({name: (type, typer option)}) to a command whose own
    signature ends in ``**options``; typer reads the combined signature, the command gets the
    values in ``options``."""
    def decorate(fn):
        signature = inspect.signature(fn)
        own = [p for p in signature.parameters.values() if p.kind != inspect.Parameter.VAR_KEYWORD]
        extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
                 for group in groups for name, (kind, option) in group.items()]
        fn.__signature__ = signature.replace(parameters=own + extra)
        return fn

    return decorate


def _number(text: str, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{option}: '{text}' is not a number") from None
    if math.isnan(value):
        raise DataError(f"{option}: NaN is not a limit")
    return value


def _split_joint(text: str) -> tuple[str | None, str]:
    """'J:rest' -> (J, rest); 'rest' -> (None, rest)."""
    head, sep, rest = text.partition(":")
    return (head.strip(), rest) if sep else (None, text)


def _explicit(joint: str, option: str, names, seen: dict) -> str:
    """The 1-based number (text) of a joint given as J (number or name); one joint given twice (by
    number and by name, or twice alike) is refused: the later value would silently win."""
    key = str(list(names).index(joint) + 1) if joint in names else joint
    if key in seen:
        raise DataError(f"{option}: joint {key} is given twice ('{seen[key]}' and '{joint}'); give each joint once")
    seen[key] = joint
    return key


def parse_values(texts, option: str, n: int, names=()) -> dict | None:
    """{joint number: value} from repeated texts (module docstring); None if none. A value for
    every joint, then J:VALUE for some of them, is the documented way to override; one joint
    named twice by J (``names``: the joint names, so that a name and a number meet) is refused."""
    if not texts:
        return None
    out: dict = {}
    seen: dict = {}
    for text in texts:
        joint, rest = _split_joint(text)
        values = [_number(v, option) for v in rest.split(",") if v.strip()]
        if joint is not None:
            if len(values) != 1:
                raise DataError(f"{option}: '{text}': expected J:VALUE")
            out[_explicit(joint, option, names, seen)] = values[0]
        elif len(values) == 1:
            out.update({str(i + 1): values[0] for i in range(n)})
        elif len(values) == n:
            out.update({str(i + 1): v for i, v in enumerate(values)})
        else:
            raise DataError(f"{option}: '{text}': expected one value or {n} (one per joint), got {len(values)}")
    return out


def parse_ranges(texts, n: int, names=()) -> dict | None:
    """{joint: (low, high)} from repeated --q-range texts; None if none (one joint twice: refused)."""
    if not texts:
        return None
    out: dict = {}
    seen: dict = {}
    for text in texts:
        joint, rest = _split_joint(text)
        values = [_number(v, "--q-range") for v in rest.split(",") if v.strip()]
        if len(values) != 2:
            raise DataError(f"--q-range: '{text}': expected LOW,HIGH or J:LOW,HIGH")
        if joint is None:
            out.update({str(i + 1): tuple(values) for i in range(n)})
        else:
            out[_explicit(joint, "--q-range", names, seen)] = tuple(values)
    return out


def limit_options(robot, q_range=None, continuous_range=2 * math.pi, limits_file=None, **values):
    """LimitOptions from the raw command-line values (robot: for the joint count)."""
    from dynid.excite.limit_sources import LimitOptions

    names = robot.joint_names
    parsed = {k: parse_values(values.get(k), "--" + k.replace("_", "-"), robot.n, names) for k in VALUE_OPTIONS}
    return LimitOptions(q_range=parse_ranges(q_range, robot.n, names), continuous_range=continuous_range,
                        file=limits_file, **parsed)


def any_limit_given(q_range=None, limits_file=None, continuous_range=2 * math.pi, **values) -> bool:
    return bool(q_range or limits_file or any(values.get(k) for k in VALUE_OPTIONS)
                or continuous_range != 2 * math.pi)


def _joint_groups(labels) -> list[tuple[str, str]]:
    """[(joints '1-3, 5', label)] grouping equal labels."""
    groups: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(label, []).append(i + 1)
    out = []
    for label, joints in groups.items():
        runs, start = [], joints[0]
        for a, b in zip(joints, joints[1:] + [None]):
            if b != a + 1:
                runs.append(f"{start}" if start == a else f"{start}-{a}")
                start = b
        out.append((", ".join(runs), label))
    return out


def print_limits(console, robot, resolved, title: str) -> None:
    """Every limit used (rows: limits, columns: joints) and where each came from."""
    from rich.table import Table

    from dynid.excite.limit_sources import KEYS

    table = Table("limit", *(f"{i + 1} {name}" for i, name in enumerate(robot.joint_names)), title=title)
    for key in KEYS:
        table.add_row(key, *(f"{v:.4g}" if math.isfinite(v) else "-" for v in getattr(resolved.limits, key)))
    console.print(table)
    for key in KEYS:
        parts = [f"joints {j}: {label}" for j, label in _joint_groups(resolved.sources[key])]
        console.print(f"  {key} from " + "; ".join(parts), highlight=False)
    for note in resolved.notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False)


def robot_and_limits(robot_spec: str, raw: dict, stored: dict | None = None, stored_from: str = ""):
    """(robot carrying the limits used, ResolvedLimits, title) for a command.

    Limits come from the options (over a limits file, the description and the defaults);
    without any limit option, from ``stored`` (the trajectory file's limits) when given."""
    from dynid.excite.limit_sources import ResolvedLimits, limits_from_dict, resolve_limits, robot_with_limits
    from dynid.robot import load_robot

    robot = load_robot(robot_spec)
    if stored is not None and not any_limit_given(**raw):
        limits = limits_from_dict(robot, stored, stored_from)
        sources = stored.get("source") if isinstance(stored.get("source"), dict) else {}
        def labels(key):
            given = sources.get(key)
            return tuple(str(s) for s in given) if isinstance(given, list) and len(given) == robot.n \
                else ("stored",) * robot.n

        resolved = ResolvedLimits(limits, {k: labels(k) for k in ("q_min", "q_max", "dq_max", "ddq_max", "tau_max")})
        title = f"limits stored in {stored_from}"
    else:
        resolved = resolve_limits(robot, limit_options(robot, **raw))
        title = f"limits used for {robot.name}"
    return robot_with_limits(robot, resolved.limits), resolved, title
