"""What every command shares: error → exit code mapping, the consoles (--quiet, --no-color, width),
the spinner, the bundled catalog. Shared options are in solver.commands.options; what a
command prints is drawn by solver.report."""

from __future__ import annotations

import contextvars
import math
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from solver.clock import (COMMAND, LONGEST_SECONDS, budget_command, budget_spent, end_command, interrupt_after,
                          interrupted, stop_command, stopped)
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


MAX_SECONDS_ENV = "GPUPLAN_MAX_SECONDS"
DEFAULT_MAX_SECONDS = 60.0
"""Every command that solves stops after this long unless `--max-seconds` says otherwise, and
prints what it has (issue 34: `why` and `negotiate` ran past 300 s and printed nothing).
GPUPLAN_MAX_SECONDS changes the default (the test suite sets it long, so that no test's answer
depends on the machine's speed; a user may set it in a slow CI job)."""


def seconds_from_env(name: str, default: float, *, least: float = 0.0, off: bool = False) -> float:
    """A number of seconds from the environment, read when a command runs (a bad value is exit 2
    for that command, not a traceback for every command and --help): from `least` (a value must be
    above it when it is 0) to LONGEST_SECONDS; with `off`, 0 is allowed too (it turns the thing off)."""
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if off and value == 0:
        return 0.0
    if not (value >= least if least else value > 0) or not value <= LONGEST_SECONDS:
        lowest = f"from {least:g}" if least else "above 0"
        raise ProblemError(f"{text!r} is not allowed: it takes a number of seconds {lowest} to "
                           f"{LONGEST_SECONDS:,.0f} (30 days){', or 0 for none' if off else ''}", key=name,
                           fix=f"set it to a number such as {default:g}, or unset it")
    return value


def command_budget(max_seconds: float | None) -> None:
    """Start the command's clock (solver.clock.budget_command): `--max-seconds`, else
    GPUPLAN_MAX_SECONDS, else DEFAULT_MAX_SECONDS. The other GPUPLAN_* seconds and counts are checked
    here too, so a bad one is exit 2 before any work, not a traceback in the middle of it."""
    seconds = seconds_from_env(MAX_SECONDS_ENV, DEFAULT_MAX_SECONDS) if max_seconds is None else max_seconds
    check_settings()
    budget_command(seconds)


def check_settings() -> None:
    """The GPUPLAN_* settings every solving command reads later (the progress lines' interval, the tests'
    injected stop), checked before any work: a bad one is exit 2 naming it, not a traceback or an error
    on every row of a sweep."""
    heartbeat_seconds()
    interrupt_after()


EXIT_INTERRUPTED = 130
"""Ctrl-C: what was known is printed, then the exit a shell gives a process ended by SIGINT (128 + 2)."""


def run_action(action, *, stoppable: bool = False) -> None:
    """Map library errors to exit codes with one message and no traceback.

    stoppable (the commands that solve): the action runs in a worker thread while this one
    waits, so Ctrl-C is heard at once even inside a solver's C++ code, and so is the end of the
    command's budget (solver.clock.budget_command): either stops the command's clock and the
    running HiGHS solve (solver.clock.stop_command, PROGRESS.interrupter), and the action prints
    what it has. Ctrl-C then exits 130; a second Ctrl-C quits at once. The worker runs in a copy
    of this thread's context, so the language the action chooses (speak) holds for its messages."""
    with language(current()):  # a language the action chose (speak) ends with it
        if not stoppable:
            _run(action)
            return
        context = contextvars.copy_context()
        _run_stoppable(lambda: context.run(_run_and_say_why_it_stopped, action))


def _run_and_say_why_it_stopped(action) -> None:
    """_run, then, if the command was stopped, the line saying so (and exit 130 after Ctrl-C)."""
    err = Console(stderr=True, soft_wrap=True, **colour())
    code = 0
    try:
        _run(action)
    except typer.Exit as exc:
        code = exc.exit_code
    if interrupted():
        err.print("[yellow]interrupted:[/] the output above is what was known when Ctrl-C came", highlight=False)
        code = EXIT_INTERRUPTED
    elif stopped():
        seconds = COMMAND.stop_at - COMMAND.at if COMMAND.stop_at is not None and COMMAND.at is not None else 0
        err.print(f"[yellow]time:[/] the command's budget of {seconds:g} s ended; what it had not determined is "
                  "shown as such (raise --max-seconds)", highlight=False)
    end_command()
    if code:
        raise typer.Exit(code)


def announce_infeasible(exc: Infeasible, err: Console | None = None) -> None:
    """The verdict and the quick reasons on stderr, at once: before any search for relaxations."""
    err = err or Console(stderr=True, soft_wrap=True, **colour())
    word = _("infeasible:") if exc.proven else _("no plan:")  # out of time: nothing was ruled out
    err.print(f"[red]{word}[/] {escape(str(exc))}", highlight=False)
    for reason in exc.reasons:
        err.print(f"  - {escape(reason)}", highlight=False)
    exc.announced = True


def _run_stoppable(work) -> None:
    """Run `work` in a worker thread; Ctrl-C or the end of the command's budget here stops its
    solves (see run_action). What the worker raised is raised here."""
    from solver.api import PROGRESS, arm_interrupter, fire_interrupter

    arm_interrupter()
    outcome, done = {}, threading.Event()

    def worker() -> None:
        try:
            work()
        except BaseException as exc:  # handed to the main thread (typer.Exit carries the exit code)
            outcome["error"] = exc
        finally:
            done.set()

    # An Event, not Thread.join: a join that Ctrl-C interrupts can mark the thread finished (CPython bpo-45274).
    threading.Thread(target=worker, name="gpuplan-command", daemon=True).start()
    err = Console(stderr=True, soft_wrap=True, **colour())
    try:
        while not done.is_set():
            try:
                done.wait(0.1)
                if budget_spent() and not stopped():
                    stop_command("budget")
                    fire_interrupter()
            except KeyboardInterrupt:
                if interrupted():
                    os._exit(EXIT_INTERRUPTED)  # the second Ctrl-C: no waiting for the worker
                stop_command("signal")
                fire_interrupter()
                err.print("[yellow]stopping:[/] no new solve starts; printing what is known "
                          f"{_running_solve_note()}(Ctrl-C again to quit at once)", highlight=False)
    finally:
        PROGRESS.interrupter = None
    if "error" in outcome:
        raise outcome["error"]


def _running_solve_note() -> str:
    """How long a solve running at Ctrl-C may go on: HiGHS, through OR-Tools 9.15's MathOpt, does
    not heed the interrupter (measured: a solve interrupted after 2 s ran to its 40-s limit). A
    command's bigger MILPs run in a child process that is killed at once (solver.engine.child);
    a small one running here ends at its own limit, the budget's end at the latest
    (solver.clock.hard_stop), and only then is there something to say."""
    from solver.api import PROGRESS

    if COMMAND.stop_at is None or not PROGRESS.in_process:
        return ""
    left = COMMAND.stop_at - time.perf_counter()
    return f"once the solve running now ends (HiGHS does not stop mid-solve: up to {left:.0f} s) " if left >= 1 else ""


def _run(action) -> None:
    err = Console(stderr=True, soft_wrap=True, **colour())  # never fold a file path across lines
    try:
        action()
    except ProblemError as exc:
        err.print(f"[red]error:[/] {escape(exc.render())}", highlight=False)
        raise typer.Exit(2) from None
    except Infeasible as exc:
        if not getattr(exc, "announced", False):
            announce_infeasible(exc, err)
        from solver.report.explain import explanation_lines  # in the command's language; not loaded for --help
        lines = explanation_lines(exc.explanation)
        if lines:
            err.print("[bold]" + _("smallest relaxations") + "[/] " + _("(each re-solved to check it):"),
                      highlight=False)
            for line in lines:
                err.print(f"  * {escape(line)}", highlight=False)
        raise typer.Exit(1) from None
    except PlanRejected as exc:
        err.print(f"[red]internal error, plan withheld:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(3) from None
    except BrokenPipeError:  # a closed stdout: solver.cli.main's exit 141, not a write error
        raise
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
        with _heartbeat(message):
            yield
        return
    start, latest = time.perf_counter(), {"text": ""}

    def heard(incumbent: float | None, bound: float | None) -> None:
        latest["text"] = " — " + ", ".join(_solve_words(incumbent, bound, gap=True))

    def row(words: str, done: int, expected: int | None) -> None:
        err.print(f"  {_count(done, expected)} {words}", markup=False, highlight=False)
        latest["rows"] = f", {_count(done, expected)} rows"

    latest["rows"] = ""
    with err.status(message) as status, _listening(
            0.5, lambda: status.update(f"{message} ({time.perf_counter() - start:.0f} s{latest['rows']})"
                                       f"{latest['text']}"), heard, row):
        yield


def _count(done: int, expected: int | None) -> str:
    return f"{done}/{expected}" if expected else f"{done}"


def _solve_words(incumbent: float | None, bound: float | None, *, gap: bool) -> list[str]:
    """The running solve's news in words: best plan, bound (and the gap between them)."""
    parts = [f"best plan {incumbent:,.0f}" if incumbent is not None else "no plan yet"]
    if bound is not None:
        parts.append(f"bound {bound:,.0f}")
    if gap and incumbent and bound is not None:
        parts.append(f"gap {max(0.0, incumbent - bound) / abs(incumbent):.1%}")
    return parts


@contextmanager
def _listening(every: float, show, heard, row) -> Iterator[None]:
    """While the block runs: `show()` every `every` seconds from a thread, the running solve's
    best plan and bound handed to `heard` (solver.api.PROGRESS: loaded by the commands that solve,
    not by --help), and each table row an analysis determines handed to `row` (solver.rows)."""
    from solver.api import PROGRESS
    from solver.rows import ROWS

    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(every):
            show()
    threading.Thread(target=tick, daemon=True).start()
    PROGRESS.listener, ROWS.listener = heard, row
    try:
        yield
    finally:
        PROGRESS.listener = ROWS.listener = None
        stop.set()


HEARTBEAT_ENV = "GPUPLAN_HEARTBEAT_SECONDS"
HEARTBEAT_SECONDS = 10.0
"""Without a live spinner (stderr not a terminal), one progress line this often: a log or CI
job shows the command is working, never silence. GPUPLAN_HEARTBEAT_SECONDS changes it, 0 turns
the lines off (the test suite does: how many lines a command prints depends on the machine's speed,
and CliRunner's output mixes stderr into the JSON a test reads)."""
HEARTBEAT_FLOOR = 0.5
"""The shortest GPUPLAN_HEARTBEAT_SECONDS: 1e-6 wrote 9,260 lines in 4.6 s (issue 47)."""


def heartbeat_seconds() -> float:
    """GPUPLAN_HEARTBEAT_SECONDS (0: no lines), from HEARTBEAT_FLOOR to LONGEST_SECONDS, else exit 2."""
    return seconds_from_env(HEARTBEAT_ENV, HEARTBEAT_SECONDS, least=HEARTBEAT_FLOOR, off=True)


@contextmanager
def _heartbeat(message: str) -> Iterator[None]:
    """Progress lines on stderr while something slow runs and no spinner can be drawn: every
    HEARTBEAT_SECONDS, the seconds so far and the running solve's best plan and bound; none
    with --quiet, none for work shorter than that (a quick command's stderr stays empty)."""
    every = heartbeat_seconds()
    if OUTPUT.quiet or every <= 0:
        yield
        return
    err = Console(stderr=True, color_system=None, highlight=False, soft_wrap=True)
    start, latest = time.perf_counter(), {"text": ""}

    def heard(incumbent: float | None, bound: float | None) -> None:
        latest["text"] = ", " + ", ".join(_solve_words(incumbent, bound, gap=False))

    def show() -> None:
        err.print(f"{message}: {time.perf_counter() - start:.0f} s{latest['text']}", markup=False)

    def row(words: str, done: int, expected: int | None) -> None:  # a row as soon as it is known
        err.print(f"{message}: {time.perf_counter() - start:.0f} s, row {_count(done, expected)}: {words}",
                  markup=False)

    with _listening(every, show, heard, row):
        yield
