"""A plan's cash flow as a grid: one row per month (or 30-day block), one column per vendor and mode.

Shared by the terminal table, the HTML report and the spreadsheet, so the three show the
same numbers in the same order (rows in time order; columns by vendor, then rental modes in
the legend's order, then storage and egress).
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.model.modes import legend_order
from solver.model.plan import Plan


@dataclass(frozen=True)
class CashGrid:
    columns: list[tuple[str, str]]                               # (vendor, mode)
    rows: list[tuple[str, list[float | None], float]]            # (label, amount per column or None, row total)
    totals: list[float]                                          # per column
    blocks: list[tuple[int, int, int]]                           # (block, first day, day after the last) per row


def _mode_rank(mode: str) -> int:
    order = legend_order() + ["storage", "egress"]
    return order.index(mode) if mode in order else len(order)


def cash_flow_grid(plan: Plan) -> CashGrid:
    columns = sorted({(p.vendor, p.mode) for p in plan.cash_flow}, key=lambda c: (c[0], _mode_rank(c[1]), c[1]))
    index = {c: i for i, c in enumerate(columns)}
    by_block: dict[int, tuple[str, int, int, list[float | None]]] = {}
    for p in plan.cash_flow:
        label, first, end, amounts = by_block.setdefault(p.block, (p.label, p.start_day, p.end_day,
                                                                    [None] * len(columns)))
        i = index[p.vendor, p.mode]
        amounts[i] = (amounts[i] or 0.0) + p.amount
    rows, spans = [], []
    for block in sorted(by_block):
        label, first, end, amounts = by_block[block]
        rows.append((label, amounts, round(sum(v for v in amounts if v is not None), 2)))
        spans.append((block, first, end))
    totals = [round(sum(r[1][i] or 0.0 for r in rows), 2) for i in range(len(columns))]
    return CashGrid(columns, rows, totals, spans)
