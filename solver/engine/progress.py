"""A running solve's progress for whoever watches it (the CLI's spinner): best plan and bound.

`PROGRESS.listener`, when set, hears (best plan cost, proven bound), either None while
unknown, from HiGHS' branch-and-bound log lines and from bounds found beside HiGHS (the
LP relaxation of a big model). The CLI sets it around a solve (solver.commands.common);
nothing else in the solve depends on it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

Listener = Callable[[float | None, float | None], None]
"""listener(best plan cost, proven bound); either None while unknown."""


@dataclass
class Progress:
    """Who wants to hear a running HiGHS solve's incumbent and bound (the CLI's spinner), if anyone."""

    listener: Listener | None = None
    interrupter: object | None = None  # an OR-Tools SolveInterrupter: HiGHS solves stop when it is triggered (Ctrl-C)
    in_process: bool = False  # a HiGHS solve runs in this process now (it ends at its own limit, not at Ctrl-C)
    node_limit: int | None = None  # solve --deterministic: each HiGHS solve's node limit, in place of its time limit


DETERMINISTIC_NODES = 10_000
"""Branch-and-bound nodes each HiGHS solve may search under `solve --deterministic`. Why nodes: a
node limit stops the same search at the same place on every machine and load, where a time limit
stops it wherever the clock says (issue 47: `solve P` and `solve P --html --xlsx` named different
vendors on a busy machine). The command's budget still ends every solve (solver.clock.hard_stop):
an answer cut by it is not reproducible, and the headline says so."""


PROGRESS = Progress()
_BNB_LINE = re.compile(r"^\s*[A-Za-z]?\s+\d+\s+\d+\s+\d+\s+[\d.]+%\s+(\S+)\s+(\S+)\s+")


def report_progress(lines: list[str], listener: Listener) -> None:
    """HiGHS' branch-and-bound log lines → listener(best plan cost, proven bound); None while unknown."""
    for line in lines:
        match = _BNB_LINE.match(line)
        if match:
            listener(*(_number(x) for x in (match.group(2), match.group(1))))


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def tell_bound(bound: float) -> None:
    """Let whoever watches the solve hear a bound found outside HiGHS (the LP relaxation's)."""
    if PROGRESS.listener is not None and math.isfinite(bound):
        PROGRESS.listener(None, bound)


@dataclass
class BestHeard:
    """Passes on the best plan and the best bound heard so far in one solve.

    Why: the steps of a big solve report separately (a restricted solve only its plans,
    the LP relaxation only its bound), and one step's silence about the other number
    must not make it unknown again. Every plan heard is a plan of the whole model and
    every bound a bound of it, so the lowest plan and the highest bound stand.
    """

    listener: Listener
    plan: float | None = None
    bound: float | None = None

    def __call__(self, incumbent: float | None, bound: float | None) -> None:
        if incumbent is not None:
            self.plan = incumbent if self.plan is None else min(self.plan, incumbent)
        if bound is not None:
            self.bound = bound if self.bound is None else max(self.bound, bound)
        self.listener(self.plan, self.bound)
