"""Rich tables for the terminal: every figure says its unit. And the JSON a command prints instead.

print_json is the one writer of a command's --json answer: one object (or list) on stdout,
indented, non-ASCII kept as written, anything else (dates, paths) as its text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.estimate.memory import Layout
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.report.html import plain_summary


def _money(value: float) -> str:
    return f"{value:,.0f}"


def render_plan(plan: Plan, console: Console) -> None:
    """Allocation by site/vendor/mode/GPU, jobs with layout and finish day, cost breakdown, bound."""
    headline = (f"[bold]{escape(plan.problem)}[/]: {plan.status}, total {_money(plan.total_cost)} {plan.currency}"
                f" (lower bound {_money(plan.lower_bound)}, gap {plan.gap:.2%}, {plan.solve_seconds:.2f} s, "
                f"{plan.backend})")
    console.print(headline)
    console.print(_allocation_table(plan))
    console.print(_jobs_table(plan))
    console.print(_cost_table(plan))
    for text in plan.warnings:
        console.print(f"[yellow]warning:[/] {escape(text)}", highlight=False)
    for pref in plan.preferences:  # the others (kept, declined, ...) are warnings above, with their price
        if pref.outcome == "met":
            console.print(f"preference: {escape(pref.text)}", highlight=False)


def _allocation_table(plan: Plan) -> Table:
    table = Table(title="Rentals (days from the plan's start; cost in CNY incl. fee, after discount)")
    for col in ("site", "vendor", "mode", "GPU", "fabric", "nodes", "GPUs", "days", "cost"):
        table.add_column(col, justify="right" if col in ("nodes", "GPUs", "cost") else "left", overflow="fold")
    for a in plan.allocations:
        table.add_row(*map(escape, (a.datacenter, a.vendor, a.mode, a.gpu, a.interconnect)), str(a.nodes), str(a.gpus),
                      f"{a.start_day}–{a.end_day}", _money(a.cost))
    return table


def _jobs_table(plan: Plan) -> Table:
    table = Table(title="Jobs (work in EFLOP = 1e18 FLOPs, redundancy included)")
    longest = max((len(j.name) for j in plan.jobs), default=3)
    for col in ("job", "GPUs", "on", "layout", "GB/GPU", "finish day", "work done / needed"):
        # a long name wraps whole, never cut with …; a job's name of up to 28 characters stays on one
        # line, and the layout ("20 replicas of TP2×PP1 (DP20)") or the sites fold instead
        table.add_column(col, overflow="fold", no_wrap=col == "job" and longest <= 28)
    for j in plan.jobs:
        table.add_row(escape(j.name), str(j.gpus), escape(", ".join(j.gpu_types) + " @ " + ", ".join(j.sites)),
                      escape(j.layout_text), f"{j.memory_per_gpu_gb:.1f}", str(j.finish_day),
                      f"{j.done_eflop:,.0f} / {j.required_eflop:,.0f}")
    return table


def _cost_table(plan: Plan) -> Table:
    table = Table(title=f"Cost breakdown ({plan.currency})")
    table.add_column("part")
    table.add_column("cost", justify="right")
    for part, value in plan.cost_breakdown.items():
        if abs(value) >= 0.005:
            table.add_row(part.replace("_", " "), _money(value))
    table.add_row("[bold]total[/]", f"[bold]{_money(plan.total_cost)}[/]")
    return table


def render_estimate(data: dict, days: float, redundancy: float, console: Console) -> None:
    """The back-of-envelope sizing of the rental guides, done with the real accounting, line by line."""
    table = Table(title=f"Estimate: {data['kind']} on {escape(data['gpu'])} (MFU {data['mfu']:.0%})", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    rows = [("compute", f"{data['flops']:.3g} FLOPs"),
            ("effective per GPU", f"{data['effective_tflops']:.1f} TFLOPS"),
            ("GPU-hours", f"{data['gpu_hours']:,.0f}"),
            (f"GPUs for {days:g} days, +{redundancy:.0%}", _gpus_for_deadline(data)),
            ("whole nodes", "—" if data["nodes"] is None else f"{data['nodes']} ({data['gpus_whole_nodes']} GPUs)"),
            ("layout (fastest group)", data["layout_text"]),
            ("memory per GPU", "—" if data["memory_per_gpu_gb"] is None else f"{data['memory_per_gpu_gb']:.1f} GB"),
            ("fewest GPUs for one copy", _smallest(data)),
            ("rule of thumb: params × 2 × 2 B", f"{data['seed_rule_gb']:.1f} GB"),
            ("smallest group in one node", "yes" if data["fits_one_node"] else
             ("no: needs RDMA across nodes" if data["needs_rdma"] else "no"))]
    for what, value in rows:
        table.add_row(what, value)
    console.print(table)


def _gpus_for_deadline(data: dict) -> str:
    """`34 (17 replicas of TP2×PP1 (DP17))`: the GPU count as copies of the fastest group."""
    if data["min_gpus"] is None:
        return "—"
    lay = data["layout"]
    group = Layout(**{k: lay[k] for k in ("gpus", "tp", "pp", "dp", "zero", "recompute", "memory_per_gpu_gb",
                                           "multi_node")})
    return f"{data['min_gpus']} ({group.label(data['min_gpus'] // group.gpus)})"


def _smallest(data: dict) -> str:
    """The fewest GPUs holding one replica, recompute allowed (estimate's smallest_layout)."""
    small = data.get("smallest_layout")
    if not small:
        return "—"
    return f"{small['gpus']} ({data['smallest_layout_text']}; {small['memory_per_gpu_gb']:.1f} GB)"


def render_baselines(plan: Plan, baselines: list, console: Console) -> None:
    """The optimum against the spreadsheet ways of doing it, with the saving of each."""
    table = Table(title=f"Against simpler plans ({plan.currency})")
    for col in ("plan", "cost", "optimum saves", "how"):
        table.add_column(col, justify="right" if col in ("cost", "optimum saves") else "left")
    for b in baselines:
        saving = b.saving(plan.total_cost)
        upper = "≤ " if b.status == "feasible" else ""  # the baseline's own optimum may be cheaper
        cost = {"infeasible": "infeasible", "undetermined": "not determined"}.get(b.status, _money(b.cost or 0))
        table.add_row(escape(b.name), cost, "—" if saving is None else f"{upper}{saving:.1%}", escape(b.detail))
    console.print(table)
    if any(b.status == "feasible" for b in baselines):
        console.print("≤: that baseline was not solved to optimality in the time given, so the optimum saves "
                      "at most this much against it", highlight=False)


def print_json(data: dict | list) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def render_written(paths: list[Path], console: Console) -> None:
    """One "wrote PATH" line per file written beside the terminal output."""
    for path in paths:
        console.print(f"wrote {path}", highlight=False, markup=False)


def render_report_written(plan: Plan, problem: Problem, path: Path) -> None:
    """`gpuplan report`: the report's summary sentence as plain text, and the file written."""
    console = Console(soft_wrap=True)
    console.print(plain_summary(plan, problem), highlight=False, markup=False)
    render_written([path], console)


def solve_json(plan: Plan, *, why: dict | None = None, baselines: list | None = None) -> dict:
    """`gpuplan solve --json`: the plan, with --why's and --baselines' answers when asked for."""
    data = plan.model_dump(mode="json")
    if why is not None:
        data["why"] = why
    if baselines is not None:
        data["baselines"] = [b.to_dict(plan.total_cost) for b in baselines]
    return data


def infeasible_json(exc) -> dict:
    """`gpuplan solve --json` when there is no plan: what was ruled out, and the relaxations found."""
    return {"status": "infeasible", "proven": exc.proven, "message": str(exc), "reasons": exc.reasons,
            "explanation": exc.explanation}
