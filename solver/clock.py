"""One run's time: each solve's limit is the per-solve one, cut to what is left of the whole.

Why one module: `why`, `frontier`, `solve --objective min_time`, `--baselines` and the
infeasibility explanation each run many solves under `--time-limit` (each solve) and
`--max-seconds` (all of them); a user's `why -k 2 --time-limit 20` ran 13 minutes before
the whole run had a budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


class OutOfTime(Exception):
    """The run's whole budget is spent: no new solve starts."""


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
        """Seconds left of the whole run (None: no budget), never below 0."""
        return None if self.stop_at is None else max(0.0, self.stop_at - time.perf_counter())

    def next_limit(self) -> float | None:
        """Seconds for the next solve (None: no limit); OutOfTime when the run's budget is spent."""
        left = self.left()
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


COMMAND = _CommandStart()
"""When the command line's current command began. Why not the package's import time alone:
in a process that runs many commands (tests, a notebook calling the CLI) that is long past."""


def start_command() -> None:
    """Mark a command's start (the CLI's callback calls this for every command): the process's
    start when the console script launched it (solver.cli.main), else now."""
    COMMAND.at = COMMAND.process if COMMAND.process is not None else time.perf_counter()
    COMMAND.process = None


def left_of(max_seconds: float | None) -> float | None:
    """What is left of the running command's `--max-seconds` now (None: no budget)."""
    return RunClock.since_start(None, max_seconds).left()
