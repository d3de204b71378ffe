"""The wall-clock safety net of ``excite optimize`` (``--max-seconds``), checked inside long
computations as well as between them.

The search checks the clock between generations and polish iterations (``optimize``,
``polish``); one generation on a large obstacle scene can itself take minutes, so the
geometric distance loops (``geometry.constraints.GeometricConstraints.margins``, chunk by
chunk) call ``check_time`` too. Inside ``time_limit(deadline)`` it raises ``TimeLimitReached``
once the deadline has passed; the caller keeps what it has (an earlier start, the global
search's point before the polish) or, with nothing yet, reports that the limit ran out.
Outside ``time_limit`` (the final checks of a result) it never raises: a result is always
finished once the search has stopped.
"""

from __future__ import annotations

import contextlib
import math
import time

_deadlines: list[float] = []


class TimeLimitReached(Exception):
    """The wall-clock deadline of the innermost ``time_limit`` has passed."""


@contextlib.contextmanager
def time_limit(deadline: float = math.inf):
    """Let ``check_time`` raise once ``time.perf_counter()`` passes ``deadline``."""
    _deadlines.append(deadline)
    try:
        yield
    finally:
        _deadlines.pop()


def check_time() -> None:
    """Raise ``TimeLimitReached`` when the innermost ``time_limit``'s deadline has passed."""
    if _deadlines and time.perf_counter() > _deadlines[-1]:
        raise TimeLimitReached
