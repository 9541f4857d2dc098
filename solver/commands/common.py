"""What every command shares: error → exit code mapping, the consoles (--quiet, --no-color, width),
the spinner, the bundled catalog. Shared options are in solver.commands.options; what a
command prints is drawn by solver.report."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from solver.errors import Infeasible, PlanRejected, ProblemError
from solver.files import write_error
from solver.report import guard
from solver.i18n import _, activate, choose, current, language


def sample_catalog() -> Path:
    """The bundled sample catalog, catalogs/beijing-sample: in the source tree (a checkout or an
    editable install), else the copy a wheel installs as solver/catalogs/beijing-sample (pyproject
    maps catalogs/ there). When neither exists, the source-tree path, which load_catalog names."""
    package = Path(__file__).resolve().parent.parent
    candidates = [package.parent / "catalogs" / "beijing-sample", package / "catalogs" / "beijing-sample"]
    return next((c for c in candidates if (c / "gpus.csv").is_file()), candidates[0])


guard.install()   # no escape sequence from data reaches the terminal (solver.report.guard)

SAMPLE_CATALOG = sample_catalog()
"""The default --catalog of estimate, calibrate and catalog show/template: defined here only."""


def speak(flag: str | None, problem=None) -> None:
    """Set the command's language: `--lang`, else the problem's `lang:`, else GPUPLAN_LANG (solver.i18n.choose).
    It holds until run_action returns, for the output and the infeasible explanation alike."""
    activate(choose(flag, getattr(problem, "lang", None)))


def run_action(action) -> None:
    """Map library errors to exit codes with one message and no traceback."""
    with language(current()):  # a language the action chose (speak) ends with it
        _run(action)


def _run(action) -> None:
    err = Console(stderr=True, soft_wrap=True, **colour())  # never fold a file path across lines
    try:
        action()
    except ProblemError as exc:
        err.print(f"[red]error:[/] {escape(exc.render())}", highlight=False)
        raise typer.Exit(2) from None
    except Infeasible as exc:
        word = _("infeasible") if exc.proven else _("no plan")  # out of time: nothing was ruled out
        err.print(f"[red]{word}:[/] {escape(str(exc))}", highlight=False)
        for reason in exc.reasons:
            err.print(f"  - {escape(reason)}", highlight=False)
        lines = (exc.explanation or {}).get("lines", [])
        if lines:
            err.print("[bold]" + _("smallest relaxations") + "[/] " + _("(each re-solved to check it):"),
                      highlight=False)
            for line in lines:
                err.print(f"  * {escape(line)}", highlight=False)
        raise typer.Exit(1) from None
    except PlanRejected as exc:
        err.print(f"[red]internal error, plan withheld:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(3) from None
    except BrokenPipeError:  # standard output's reader went away (`| head`): solver.cli.main exits 141
        devnull = os.open(os.devnull, os.O_WRONLY)  # what rich does after a failed write; main reads it
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(1) from None
    except OSError as exc:   # a write the checks before it could not foresee: bad input, not "infeasible"
        err.print(f"[red]error:[/] {escape(write_error(exc, exc.filename or '?', action='read or write').render())}", highlight=False)
        raise typer.Exit(2) from None


@dataclass
class Output:
    """Global output settings from `gpuplan --quiet --no-color` (NO_COLOR is honoured by rich too)."""

    quiet: bool = False
    color: bool = True


OUTPUT = Output()
MAX_WIDTH = 100
"""Tables are laid out for at most 100 columns: they fit a split screen and a pasted ticket."""


def plan_console() -> Console:
    """Console for results: at most 100 columns (exactly 100 when piped; rich would assume 80)."""
    probe = Console()
    width = min(probe.width, MAX_WIDTH) if probe.is_terminal else MAX_WIDTH
    return Console(width=width, **colour())


def colour() -> dict:
    """--no-color: no escape codes at all (no colour, bold or italics), whatever the terminal says."""
    return {} if OUTPUT.color else {"color_system": None, "highlight": False}


def live_stderr(message: str, *, quiet: bool = False) -> Console | None:
    """The stderr console a spinner or progress bar may redraw, or None: nothing with --quiet
    or when stderr is not a terminal (logs and pipes get only the result), and with
    --no-color one plain line saying what runs (a live display moves the cursor with
    escape codes, which --no-color promises none of)."""
    err = Console(stderr=True, **colour())
    if quiet or OUTPUT.quiet or not err.is_terminal:
        return None
    if not OUTPUT.color:
        err.print(f"{message} …", markup=False)
        return None
    return err


@contextmanager
def working(message: str) -> Iterator[None]:
    """A spinner with elapsed seconds on stderr while something slow runs (see `live_stderr`
    for when there is none).

    While it runs, HiGHS solves go through MathOpt, whose log lines carry the incumbent and
    the bound (solver.api.PROGRESS); the spinner shows the latest of each.
    """
    err = live_stderr(message)
    if err is None:
        yield
        return
    start, latest = time.perf_counter(), {"text": ""}

    def heard(incumbent: float | None, bound: float | None) -> None:
        parts = [f"best plan {incumbent:,.0f}" if incumbent is not None else "no plan yet"]
        if bound is not None:
            parts.append(f"bound {bound:,.0f}")
        if incumbent and bound is not None:
            parts.append(f"gap {max(0.0, incumbent - bound) / abs(incumbent):.1%}")
        latest["text"] = " — " + ", ".join(parts)

    from solver.api import PROGRESS  # the solver stack: loaded by the command that solves, not by --help

    with err.status(message) as status:
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(0.5):
                status.update(f"{message} ({time.perf_counter() - start:.0f} s){latest['text']}")
        thread = threading.Thread(target=tick, daemon=True)
        thread.start()
        PROGRESS.listener = heard
        try:
            yield
        finally:
            PROGRESS.listener = None
            stop.set()
