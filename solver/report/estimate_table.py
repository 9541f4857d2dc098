"""`gpuplan estimate`'s table: the rental guides' back-of-envelope sizing, line by line.

Why apart from solver.report.terminal: estimate solves nothing, and terminal's plan tables
import the plan and problem models, the ledger and the HTML report's words; here only rich and
the layout's label are needed, so `gpuplan estimate` starts fast (tests/bench/bench_startup.py).
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.estimate.memory import Layout


def render_estimate(data: dict, days: float, redundancy: float, console: Console) -> None:
    """The back-of-envelope sizing of the rental guides, done with the real accounting, line by line."""
    table = Table(title=f"Estimate: {data['kind']} on {escape(data['gpu'])} (MFU {data['mfu']:.0%})", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    rows = [("compute", f"{data['flops']:.3g} FLOPs"),
            ("sustained MFU (layout)", data.get("mfu_text") or f"{data['mfu']:.0%}"),
            ("effective per GPU", f"{data['effective_tflops']:.1f} TFLOPS"),
            ("GPU-hours", f"{data['gpu_hours']:,.0f}"),
            ("GPU-hours P10–P90 (published runs)", _interval(data)),
            (f"GPUs for {days:g} days, +{redundancy:.0%}", _gpus_for_deadline(data)),
            ("whole nodes", "—" if data["nodes"] is None else f"{data['nodes']} ({data['gpus_whole_nodes']} GPUs)"),
            ("layout (fastest group)", data["layout_text"]),
            ("memory per GPU", "—" if data["memory_per_gpu_gb"] is None else f"{data['memory_per_gpu_gb']:.1f} GB"),
            ("fewest GPUs for one copy", _smallest(data)),
            (f"rule of thumb: {data.get('seed_rule_text') or 'params × 2 × 2 B'}", f"{data['seed_rule_gb']:.1f} GB"),
            ("smallest group in one node", "yes" if data["fits_one_node"] else
             ("no: needs RDMA across nodes" if data["needs_rdma"] else "no"))]
    for what, value in rows:
        table.add_row(what, value)
    console.print(table)


def _interval(data: dict) -> str:
    """`13,000–28,000`: the GPU-hours a run like the published ones takes, 8 in 10 of them (solver.estimate.spread)."""
    if data.get("gpu_hours_p10") is None:
        return "—"
    return f"{data['gpu_hours_p10']:,.0f}–{data['gpu_hours_p90']:,.0f}"


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
