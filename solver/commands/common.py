"""What every command shares: error → exit code mapping, JSON output, console width, backends."""

from __future__ import annotations

import json
import sys
from enum import Enum

import typer
from rich.console import Console
from rich.markup import escape

from solver.errors import Infeasible, PlanRejected, ProblemError
from solver.milp.solve import BACKENDS

Backend = Enum("Backend", {b: b for b in BACKENDS}, type=str)


def run_action(action) -> None:
    """Map library errors to exit codes with one message and no traceback."""
    err = Console(stderr=True, soft_wrap=True)  # never fold a file path across lines
    try:
        action()
    except ProblemError as exc:
        err.print(f"[red]error:[/] {escape(exc.render())}", highlight=False)
        raise typer.Exit(2) from None
    except Infeasible as exc:
        err.print(f"[red]infeasible:[/] {escape(str(exc))}", highlight=False)
        for reason in exc.reasons:
            err.print(f"  - {escape(reason)}", highlight=False)
        lines = (exc.explanation or {}).get("lines", [])
        if lines:
            err.print("[bold]smallest relaxations[/] (each re-solved to check it):", highlight=False)
            for line in lines:
                err.print(f"  * {escape(line)}", highlight=False)
        raise typer.Exit(1) from None
    except PlanRejected as exc:
        err.print(f"[red]internal error, plan withheld:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(3) from None


def print_json(data: dict) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def plan_console() -> Console:
    """Wide enough for the plan tables when output is piped (rich assumes 80 columns then)."""
    console = Console()
    return console if console.is_terminal else Console(width=100)
