"""Ranges of the numeric command-line options, checked for every command before any work
(``cli.common.friendly_errors`` calls ``check_value`` on each argument; issue 18 section 3).

A value that cannot be right ends in one error line naming the option, the value and what is
expected: a negative noise, jitter, count or duration; a jitter of a whole time step or more
(it writes time stamps that go backwards); a zero or non-finite current gain (every torque
read as 0); a cutoff, a rate or a tolerance outside its range. NaN is refused for every float
option (``friendly_errors``), infinity unless the rule allows it (``--max-condition inf``).

The rules are keyed by the option's name, so a new command's ``--tau-noise`` or ``--rate`` is
checked the same way without code of its own. A rule applies to the values of its kind: a
number rule to int/float values, a list rule (``per_joint``) to the comma-separated text of a
per-joint option; words such as ``auto`` or ``drive`` pass where a rule lists them. Stdlib
only: the CLI imports this at start-up (tests/test_cli_startup.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dynid.errors import DataError


@dataclass(frozen=True)
class Rule:
    """low <= value <= high (``open_low``/``open_high``: strict); ``finite``: inf refused;
    ``per_joint``: the option is text, 'v' or 'v1,v2,...', each value checked; ``words``: texts
    accepted in place of numbers; ``nonzero``: 0 refused; ``choices``: the option is a word, one of
    these (no number); ``why``: what the option means; ``files``: suffixes of file names accepted
    in place of numbers (their reader checks them)."""

    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    finite: bool = True
    per_joint: bool = False
    words: tuple[str, ...] = ()
    nonzero: bool = False
    choices: tuple[str, ...] = ()
    why: str = ""
    files: tuple[str, ...] = ()

    def expected(self) -> str:
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.open_low else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<' if self.open_high else '<='} {self.high:g}")
        text = "a finite" if self.finite else "a"
        text += " non-zero number" if self.nonzero else " number"
        text += (" " + " and ".join(parts)) if parts else ""
        if self.words:
            text += " or " + " / ".join(f"'{w}'" for w in self.words)
        if self.files:
            text += " or a " + " / ".join(self.files) + " file"
        return text + (f" ({self.why})" if self.why else "")

    def accepts(self, x: float) -> bool:
        if math.isnan(x) or (self.finite and math.isinf(x)) or (self.nonzero and x == 0):
            return False
        if self.low is not None and (x <= self.low if self.open_low else x < self.low):
            return False
        return not (self.high is not None and (x >= self.high if self.open_high else x > self.high))


NONNEGATIVE = Rule(low=0)
POSITIVE = Rule(low=0, open_low=True)
COUNT = Rule(low=1)  # a number of things: at least one
STD = Rule(low=0, per_joint=True, why="a standard deviation per joint")
SECONDS = Rule(low=0, open_low=True, why="seconds")
HERTZ = Rule(low=0, open_low=True, why="Hz")
DIGITS = Rule(low=1, high=17, why="significant digits of a float")

RULES: dict[str, Rule] = {
    # measurement defects of simulate (and fleet simulate)
    "--tau-noise": STD, "--dq-noise": STD, "--u-noise": STD,
    "--jitter": Rule(low=0, high=1, open_high=True,
                     why="a fraction of the time step; a whole step or more makes time go backwards"),
    "--encoder-counts": Rule(low=0, why="counts per revolution; 0 = no quantization"),
    "--inductance": Rule(low=0, why="armature inductance [H]; 0 = none"),
    "--coulomb": Rule(low=0, per_joint=True, why="Coulomb friction per joint [N m | N]"),
    "--viscous": Rule(low=0, per_joint=True, why="viscous friction per joint [N m s/rad | N s/m]"),
    "--offsets": Rule(per_joint=True, why="torque offset per joint [N m | N]"),
    "--rate": HERTZ, "--duration": SECONDS, "--minutes": POSITIVE,
    "--cycles": Rule(low=0, why="a number of cycles"),
    "--digits": DIGITS, "--rounding-digits": DIGITS,
    # data layout and preprocessing (identify, predict, validate, friction, fleet)
    "--current-gain": Rule(per_joint=True, nonzero=True, words=("drive",), files=(".json",),
                           why="joint-side gain K per joint, tau = K i [N m/A], or the JSON of 'dynid drives "
                           "gains'; 0 reads every torque as 0"),
    "--lowpass": Rule(low=0, words=("auto",), why="cutoff [Hz]; 0 = no filter"),
    "--resample": HERTZ, "--filter-hz": HERTZ,
    "--prefilter-hz": Rule(low=0, why="cutoff [Hz]; 0 = no filter"),
    "--min-velocity": Rule(low=0, why="rad/s or m/s"),
    "--gain-std": Rule(low=0, why="a relative standard deviation of the drive gains"),
    "--still-range": Rule(low=0, why="rad (a tenth of it in m); 0 = off"),
    "--smooth-sign": Rule(low=0, why="velocity scale of the tanh sign; 0 = sign"),
    "--skip-seconds": Rule(low=0, why="seconds"),
    "--max-gap": Rule(low=1, open_low=True, why="a multiple of the median time step"),
    "--decimate": COUNT, "--chunk-rows": COUNT,
    "--cv-folds": Rule(low=2, why="blocked cross-validation needs at least two folds"),
    "--nan": Rule(choices=("drop", "reject"), why="rows with NaN or empty fields"),
    "--max-condition": Rule(low=1, finite=False, why="condition number limit; inf = no limit"),
    "--prior-bound": Rule(low=0, why="a fraction of the description's parameters"),
    "--regularize": Rule(low=0, words=("auto",), why="weight of the prior's entropic divergence; auto = chosen "
                         "by cross-validation"),
    "--window": SECONDS,
    "--tol": Rule(low=0, high=1, open_low=True, open_high=True, why="relative pivot tolerance"),
    "--skip-first": Rule(low=0, why="a number of cycles"),
    "--share": Rule(low=0, high=1, open_low=True, why="a share of dq_max"),
    "--max-rows": COUNT,
    # excitation
    "--harmonics": COUNT, "--periods": COUNT, "--starts": COUNT, "--generations": COUNT,
    "--popsize": COUNT, "--excitation-periods": COUNT,
    "--frequency": HERTZ, "--max-seconds": SECONDS, "--level-duration": SECONDS,
    "--warming-duration": Rule(low=0, why="seconds"),
    "--weight": Rule(low=0, why="weight of log(cond)"),
    "--limit-fraction": Rule(low=0, high=1, open_low=True, why="a fraction of each limit"),
    "--clearance": Rule(low=0, why="metres"),
    "--self-exempt": Rule(low=0, why="a number of joints"),
    "--continuous-range": Rule(low=0, open_low=True, why="rad"),
    # fleet and randomness
    "--robots": COUNT, "--days": COUNT, "--files-per-day": COUNT, "--workers": COUNT, "--retries": NONNEGATIVE,
    "--connect-timeout": SECONDS, "--checkpoint": Rule(low=0, why="seconds"),
    "--baseline-days": COUNT, "--recent-days": COUNT, "--threshold": POSITIVE,
    "--seed": Rule(low=0, why="a seed of the random generator"),
}


def number_list(text: str, option: str, counts: tuple[int, ...] = (), what: str = "numbers",
                finite: bool = True) -> list[float]:
    """Comma-separated numbers of an option ('0.1,0.2,nan'): refused when an item is not a number,
    NaN, infinite (unless ``finite`` is False), or when their count is not one of ``counts``
    (any count when empty). ``what`` says what the numbers are (for the message)."""
    items = [p.strip() for p in str(text).split(",") if p.strip()]
    try:
        values = [float(p) for p in items]
    except ValueError:
        bad = next(p for p in items if not _is_number(p))
        raise DataError(f"{option} '{text}': '{bad}' is not a number; expected comma-separated {what}") from None
    for item, v in zip(items, values):
        if math.isnan(v) or (finite and math.isinf(v)):
            raise DataError(f"{option} '{text}': {item} is not a finite number; expected comma-separated {what}")
    if counts and len(values) not in counts:
        expected = " or ".join(str(c) for c in counts)
        raise DataError(f"{option} '{text}': {len(values)} value(s), expected {expected} {what}")
    return values


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _numbers(option: str, text: str, rule: Rule) -> list[float]:
    parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
    try:
        return [float(p) for p in parts]
    except ValueError:
        raise DataError(f"{option} '{text}': expected {rule.expected()}, comma-separated per joint") from None


def check_value(option: str, value, rule: Rule | None = None) -> None:
    """Refuse ``value`` of ``option`` outside its rule (``RULES``); None passes (not given)."""
    rule = rule or RULES.get(option)
    if rule is None or value is None or isinstance(value, bool):
        return
    if rule.choices:
        if str(value).strip() not in rule.choices:
            raise DataError(f"{option} '{value}': expected {' or '.join(rule.choices)} ({rule.why})")
        return
    if isinstance(value, (int, float)):
        if not rule.accepts(float(value)):
            raise DataError(f"{option} {value:g}: expected {rule.expected()}")
        return
    if not isinstance(value, str):
        return
    text = value.strip()
    if text in rule.words or text.lower().endswith(rule.files or ("\0",)):
        return
    if not rule.per_joint:
        try:
            number = float(text)
        except ValueError:
            return  # a text option of another meaning (e.g. identify --cycles '6-24'); its parser checks it
        check_value(option, number, rule)
        return
    for x in _numbers(option, text, rule):
        if not rule.accepts(x):
            raise DataError(f"{option} '{text}': {x:g} is not {rule.expected()}")
