"""`gpuplan` command line: parse, call the library, render. Exit 0 solved, 1 infeasible, 2 bad input,
3 plan failed verification, 141 standard output closed early."""

from __future__ import annotations

import os
import sys

import typer

import solver
from solver.clock import COMMAND, start_command
from solver.commands import (
    calibrate,
    catalog,
    estimate,
    frontier,
    negotiate,
    report,
    schema,
    solve,
    split_bill,
    sweep,
    whatif,
    why,
)
from solver.commands.common import OUTPUT

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False)


@app.callback()
def _options(quiet: bool = typer.Option(False, "--quiet", "-q", help="no spinners or progress bars, only results"),
             no_color: bool = typer.Option(False, "--no-color", help="plain text, no colours")) -> None:
    """Plan which GPUs to rent, where, how many, on which contract and for how long."""
    OUTPUT.quiet, OUTPUT.color = quiet, not no_color
    start_command()


COMMANDS = (solve, estimate, calibrate, catalog, frontier, negotiate, report, schema, split_bill, sweep, whatif, why)
"""Every command, in the order `gpuplan --help` lists them (command groups such as catalog after
the plain commands); each module's register(app) adds its own."""
for command in COMMANDS:
    command.register(app)


EXIT_OUTPUT_CLOSED = 141
"""Standard output closed before the command finished (`gpuplan solve … | head -1`): what a
shell reports for a process ended by SIGPIPE (128 + 13)."""


def main() -> None:
    """The console script: the command's `--max-seconds` counts from the process's start.

    Why the SystemExit is read: when standard output's reader goes away (`| head -1`),
    rich and click both end the command with exit 1, which here means "infeasible"; a
    script piping a plan into `head` would read that as no plan. Only that exit is changed
    (EXIT_OUTPUT_CLOSED), recognised by what each leaves behind after a failed write:
    rich points file descriptor 1 at os.devnull, click replaces sys.stdout with a wrapper
    that ignores the broken pipe. (A closed output that nothing was written to, as for an
    infeasible problem, whose explanation goes to stderr, keeps its exit code.)"""
    COMMAND.process = solver.STARTED
    stdout, was_devnull = sys.stdout, _stdout_is_devnull()
    try:
        app()
    except SystemExit as stop:
        closed = sys.stdout is not stdout or (_stdout_is_devnull() and not was_devnull)
        if stop.code == 1 and closed:
            raise SystemExit(EXIT_OUTPUT_CLOSED) from None
        raise


def _stdout_is_devnull() -> bool:
    try:
        return os.path.samestat(os.fstat(1), os.stat(os.devnull))
    except OSError:  # no file descriptor 1 (an embedding host)
        return False


if __name__ == "__main__":
    main()
