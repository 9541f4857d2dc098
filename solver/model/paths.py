"""How the what-if edit language (solver.analysis.edits) names one row of a model table.

Why here, below the MILP: the constraint families (solver.milp.registry) word their
relaxations and levers as edits — the same text the user can pass to `whatif` — and the
edit language itself lives in the analyses, above the MILP. The path syntax is a fact of
the models' tables, so both import it from here.
"""

from __future__ import annotations


def row_path(table: str, column: str, name: str) -> str:
    """`offers.NAME` in this language, or `offers[offer="NAME"]` (quoted, escaped) when NAME
    holds a dot, bracket, quote, =, comma or a leading/trailing space."""
    if any(c in name for c in ".[]=,\"'\\") or name != name.strip():
        quoted = name.replace("\\", "\\\\").replace('"', '\\"')
        return f'{table}[{column}="{quoted}"]'
    return f"{table}.{name}"
