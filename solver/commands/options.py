"""Options several commands share, declared once: `Annotated` aliases and the factories behind them.

Why here: --time-limit, --gap, --max-seconds, --backend, --json and the problem argument
each carry a rule (a bound checked while parsing, a default, a help text); written out in
every command they drifted apart. A command writes `time_limit: TimeLimit = None`; where
its help must say something of its own it writes `Annotated[..., time_limit_option("...")]`,
which keeps the rule. Choice enums are built from the library's own lists (the model's
Literals, the backends, the frontier axes), so a new value needs no edit here.
"""

from __future__ import annotations

import math
from enum import Enum
from pathlib import Path
from typing import Annotated, Iterable, Optional, get_args

import typer

from solver.choices import BACKENDS
from solver.clock import LONGEST_SECONDS


def choices(name: str, values: Iterable[str]) -> type[Enum]:
    """A typer choice type whose members are `values` (each member's name is its value), e.g.
    choices("Kind", get_args(solver.model.problem.Kind))."""
    return Enum(name, {v: v for v in values}, type=str)


def literal_choices(name: str, literal) -> type[Enum]:
    """choices() of a typing.Literal's values."""
    return choices(name, get_args(literal))


Backend = choices("Backend", BACKENDS)


def bounded(*, example: str, gt: float | None = None, ge: float | None = None, le: float | None = None,
            lt: float | None = None):
    """A typer callback: the option's value (or each of several) is a finite number within the bounds,
    else one usage error naming the option, the rule and an example (exit 2).

    Why not typer's own min/max: they are closed bounds only (a time limit of 0 must be refused)
    and let infinity through; NaN compares false with everything, so it is named here too.
    """
    if ge is not None and le is not None and gt is None and lt is None:
        rule = f"from {_number(ge)} to {_number(le)}"
    else:
        rule = " and ".join(f"{sign} {_number(bound)}" for sign, bound in ((">", gt), ("≥", ge), ("≤", le), ("<", lt))
                            if bound is not None)

    def check(value):
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if v is None:
                continue
            ok = math.isfinite(v) and (gt is None or v > gt) and (ge is None or v >= ge) \
                and (le is None or v <= le) and (lt is None or v < lt)
            if not ok:
                raise typer.BadParameter(f"{v:g} is not allowed: give a number {rule}, e.g. {example}")
        return value
    return check


def _number(bound: float) -> str:
    """A bound as people read it: 2,592,000 rather than 2.592e+06."""
    return f"{bound:,.0f}" if float(bound).is_integer() else f"{bound:g}"


def time_limit_option(help: str = "seconds per solve"):
    """--time-limit of every command that solves: > 0 seconds (0 would silently mean no limit), at most
    LONGEST_SECONDS (30 days: 1e20 was an OverflowError traceback)."""
    return typer.Option("--time-limit", help=f"{help} (> 0)",
                        callback=bounded(gt=0, le=LONGEST_SECONDS, example="--time-limit 60"))


def gap_option(help: str = "stop each solve at this relative gap"):
    """--gap of every command that solves: a relative gap ≥ 0 (the solvers reject a negative one)."""
    return typer.Option("--gap", help=f"{help} (≥ 0)", callback=bounded(ge=0, example="--gap 0.01"))


def max_seconds_option(help: str, example: str):
    """--max-seconds, the whole command's time: > 0 seconds, at most LONGEST_SECONDS (`help` says what it bounds). Every command
    that solves has one, 60 s by default (solver.commands.common.DEFAULT_MAX_SECONDS): it then prints
    what it has, never nothing."""
    return typer.Option("--max-seconds", help=f"{help} (> 0; default 60: then the command stops and prints what "
                                              "it has, showing what it had not determined as such)",
                        callback=bounded(gt=0, le=LONGEST_SECONDS, example=example))


def catalog_option(help: str):
    """--catalog: a catalog folder (gpus.csv, datacenters.csv, offers.csv); the default is the command's."""
    return typer.Option("--catalog", help=help)


ProblemFile = Annotated[Path, typer.Argument(help="problem YAML")]
AsJson = Annotated[bool, typer.Option("--json", help="print one JSON object")]
BackendChoice = Annotated[Backend, typer.Option(help="MILP solver bundled with OR-Tools")]
TimeLimit = Annotated[Optional[float], time_limit_option()]
Gap = Annotated[Optional[float], gap_option()]
Lang = Annotated[Optional[str], typer.Option(
    "--lang", help="language of the output: en or zh-CN (default: the problem's lang:, else GPUPLAN_LANG, else en); "
                   "--json and the CSV data never change; the workbook keeps its numbers and writes its words in it")]

