"""One run's time: each solve's limit is the per-solve one, cut to what is left of the whole.

Why one module: `why`, `frontier`, `solve --objective min_time`, `--baselines` and the
infeasibility explanation each run many solves under `--time-limit` (each solve) and
`--max-seconds` (all of them); a user's `why -k 2 --time-limit 20` ran 13 minutes before
the whole run had a budget.

One clock for the command (issue 34): the command line keeps the command's budget and its stop
here, in COMMAND. When the budget ends or Ctrl-C comes, the command is stopped: the running
HiGHS solve is interrupted (solver.commands.common) and every RunClock an analysis made, with
or without a budget of its own, refuses the next solve (OutOfTime). So an analysis that forgot
a budget still stops with the command. Why a stop rather than a time limit on every solve: a
time limit changes how a big model is solved (solver.engine.run), so a command that finishes
within its default budget must solve exactly as one without a budget.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass, field

from solver.errors import Infeasible, ProblemError

LONGEST_SECONDS = 30 * 24 * 3600.0
"""The most seconds a time option or GPUPLAN_* variable may give (30 days): longer than any run
gpuplan is meant for, and below every platform's timer limit (threading.TIMEOUT_MAX, about 49
days on Windows). Why a cap: `--max-seconds 1e20` was an OverflowError traceback (a wait, a
timedelta); a value past it is refused, exit 2, naming the option."""


class OutOfTime(Exception):
    """The run's time ran out: the one out-of-time exception.

    started False: the run's whole budget is spent, no new solve starts. started True: a solve
    stopped at its time limit without a plan or a proof; `low` is what it proved (None: nothing),
    `high` the cost of the plan it found (None: none)."""

    def __init__(self, message: str = "", *, started: bool = False, low: float | None = None,
                 high: float | None = None) -> None:
        super().__init__(message)
        self.started, self.low, self.high = started, low, high


@dataclass
class RunClock:
    time_limit: float | None            # seconds per solve; None: no limit
    stop_at: float | None = None        # time.perf_counter() past which no solve starts
    least: float = 0.5                  # a solve given less than this proves nothing: OutOfTime
    cut: bool = False                   # the last next_limit() was the run's budget, not time_limit

    @classmethod
    def starting_now(cls, time_limit: float | None, max_seconds: float | None, least: float = 0.5) -> RunClock:
        return cls(time_limit, None if max_seconds is None else time.perf_counter() + max_seconds, least)

    @classmethod
    def since_start(cls, time_limit: float | None, max_seconds: float | None, least: float = 0.5) -> RunClock:
        """A clock whose budget counts from the running command's start (COMMAND), so that
        loading libraries and files is inside `--max-seconds`, not on top of it."""
        began = COMMAND.at if COMMAND.at is not None else time.perf_counter()
        return cls(time_limit, None if max_seconds is None else began + max_seconds, least)

    def left(self) -> float | None:
        """Seconds left of the whole run (None: no budget), never below 0; the command's own
        budget and stop (COMMAND) end every clock."""
        if COMMAND.stop.is_set():
            return 0.0
        return None if self.stop_at is None else max(0.0, self.stop_at - time.perf_counter())

    def spent(self) -> bool:
        """The run's time is over, or the command was stopped: nothing more should start, not
        even the work that prepares a solve."""
        return self.left() == 0.0

    def next_limit(self) -> float | None:
        """Seconds for the next solve (None: no limit); OutOfTime when the run's budget is spent."""
        _count_solve()
        left = self.left()
        if COMMAND.stop.is_set():
            self.cut = True
            raise OutOfTime("the command was stopped")
        if left is None:
            self.cut = False
            return self.time_limit
        if left < self.least or left <= 0:
            raise OutOfTime("the run's time is spent")
        self.cut = self.time_limit is None or left < self.time_limit
        return left if self.cut else self.time_limit

    @property
    def more_time(self) -> str:
        """The option that would have given the last solve more time: a solve that stopped
        without an answer says which to raise."""
        return "--max-seconds" if self.cut else "--time-limit"


@dataclass
class _CommandStart:
    at: float | None = None        # when the running command began (time.perf_counter())
    process: float | None = None   # the console script's own start, for its one command to claim
    stop_at: float | None = None   # the command's budget ends (time.perf_counter()); None: none set
    stop: threading.Event = field(default_factory=threading.Event)  # set: stopped, no solve starts
    stopped_by: str | None = None  # "budget" (stop_at passed) or "signal" (Ctrl-C)
    solves: int = 0                # solves started (RunClock.next_limit calls), for the injected stop


COMMAND = _CommandStart()
"""When the command line's current command began. Why not the package's import time alone:
in a process that runs many commands (tests, a notebook calling the CLI) that is long past."""


def start_command() -> None:
    """Mark a command's start (the CLI's callback calls this for every command): the process's
    start when the console script launched it (solver.cli.main), else now. No budget yet, not stopped."""
    COMMAND.at = COMMAND.process if COMMAND.process is not None else time.perf_counter()
    COMMAND.process = None
    COMMAND.stop_at, COMMAND.solves, COMMAND.stopped_by = None, 0, None
    COMMAND.stop.clear()


def end_command() -> None:
    """The command is over: its budget and stop no longer hold (a process may run another: tests, a notebook)."""
    COMMAND.stop_at, COMMAND.stopped_by = None, None
    COMMAND.stop.clear()


def budget_command(max_seconds: float | None) -> None:
    """The running command's whole budget, counted from its start: when it ends the command line
    stops the command (stop_command("budget")), whichever analysis runs."""
    began = COMMAND.at if COMMAND.at is not None else time.perf_counter()
    COMMAND.stop_at = None if max_seconds is None else began + max_seconds


def budget_spent() -> bool:
    """The command's budget has ended (False when it has none)."""
    return COMMAND.stop_at is not None and time.perf_counter() >= COMMAND.stop_at


HARD_STOP_GRACE = 0.5
"""Seconds a solve may run past the command's budget before HiGHS stops it by its own clock."""


def hard_stop(time_limit: float | None) -> float | None:
    """A solver call's time limit, capped at the command's budget end plus HARD_STOP_GRACE.

    Why: the budget's end interrupts the running HiGHS solve (SolveInterrupter), but HiGHS looks
    at that flag only between its steps, not inside a long simplex solve: a what-if's elastic
    explanation on bj-teams-150d ran 20 s past a 60-s budget. HiGHS reads its own clock inside
    the simplex, so the call's time limit is the backstop. Applied at the solver call only, after
    the solve's strategy was chosen from its own time limit (solver.engine.run), so a command
    that ends within its budget solves as without one."""
    if COMMAND.stop_at is None:
        return time_limit
    left = max(COMMAND.stop_at - time.perf_counter(), 0.0) + HARD_STOP_GRACE
    return left if time_limit is None else min(time_limit, left)


def stop_command(why: str = "signal") -> None:
    """Stop the running command ("signal": Ctrl-C; "budget": its time ended): no solve starts; what
    is known is printed. The first reason stays."""
    COMMAND.stopped_by = COMMAND.stopped_by or why
    COMMAND.stop.set()


def stopped() -> bool:
    """Whether the running command was stopped, by its budget or by Ctrl-C."""
    return COMMAND.stop.is_set()


def interrupted() -> bool:
    """Whether Ctrl-C stopped the running command (exit 130)."""
    return COMMAND.stopped_by == "signal"


def ctrl_c_or(budget_words: str, ctrl_c_words: str) -> str:
    """A note on what the run left undetermined: `budget_words` (its time ran out, and which option to
    raise), or `ctrl_c_words` when Ctrl-C stopped it. Why (issue 47): after Ctrl-C the notes said "time
    budget ran out (raise --max-seconds)", sending the user to an option that would not have helped."""
    return ctrl_c_words if interrupted() else budget_words


def fix_for_time(text: str) -> list[str]:
    """The reasons of an answer its time cut short: `text` (the option to raise), none after Ctrl-C."""
    return [] if interrupted() else [text]


def not_started(what: str = "the solve", advice: list[str] | None = None) -> Infeasible:
    """No plan (not proven infeasible): the command's end came before `what` could start, its budget
    (raise --max-seconds, and `advice`: solver.api.size_advice) or Ctrl-C."""
    why = ctrl_c_or("the run's time (--max-seconds) ran out", "the run was stopped (Ctrl-C)")
    reasons = [] if interrupted() else advice or ["raise --max-seconds"]
    return Infeasible(f"no plan found (not proven infeasible): {why} before {what} could start",
                      reasons=reasons, proven=False)


def no_plan_found(why: str, *, more_time: str | None, advice: list[str] | None = None) -> Infeasible:
    """No plan (not proven infeasible): a solve ran and ended without one. `why` is the solver's words;
    the hint says what ended it: Ctrl-C, the command's budget (raise --max-seconds), or the solve's own
    limit (raise `more_time`, the option that gives it more time; None when it had no limit), and
    `advice` (solver.api.size_advice) unless Ctrl-C. The one wording of solver.api's solves, the probe
    engine's and every analysis built on them (negotiate, sweep, what-if)."""
    hint = ("the command was stopped (Ctrl-C)" if interrupted() else
            "the command's time ran out: raise --max-seconds" if stopped() else
            f"raise {more_time}, or try another --backend" if more_time else "try another --backend")
    return Infeasible(f"{why}: {hint}", reasons=[] if interrupted() else list(advice or []), proven=False)


INTERRUPT_AFTER = "GPUPLAN_INTERRUPT_AFTER_SOLVES"
"""Environment variable for tests: the process sends itself SIGINT when this many solves have
started, a Ctrl-C at a point that does not depend on the machine's speed
(tests/cli/test_anytime.py)."""


def interrupt_after() -> int | None:
    """INTERRUPT_AFTER as a count of solves (None: unset). Anything but a whole number ≥ 0 is bad input,
    exit 2 (`abc` was a ValueError traceback at the first solve); the commands check it before any work."""
    text = os.environ.get(INTERRUPT_AFTER, "").strip()
    if not text:
        return None
    if not text.isdigit():
        raise ProblemError(f"{text!r} is not a whole number of solves", key=INTERRUPT_AFTER,
                           fix="set it to a number such as 2, or unset it (it is a hook for tests)")
    return int(text)


def _count_solve() -> None:
    COMMAND.solves += 1
    after = interrupt_after()
    if after is not None and COMMAND.solves == after + 1:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(200):  # the signal is handled by the main thread: wait for it to stop the command
            if COMMAND.stop.is_set():
                break
            time.sleep(0.01)


def left_of(max_seconds: float | None) -> float | None:
    """What is left of the running command's `--max-seconds` now (None: no budget)."""
    return RunClock.since_start(None, max_seconds).left()
