"""The files `gpuplan solve` can write beside its terminal output: --html, --xlsx, --csv.

Why a module: the targets are checked before solving (a long solve must never end in a
refusal to write) and written after the plan is verified; one place does both, so the
CLI stays a list of options.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.report.html import check_html_path, write_html
from solver.report.tables import check_csv_target, check_xlsx_target, plan_tables, write_csv_dir, write_xlsx


@dataclass(frozen=True)
class PlanFiles:
    html: Path | None = None
    xlsx: Path | None = None
    csv_dir: Path | None = None
    force: bool = False
    detail: str = "month"

    def check(self) -> None:
        """ProblemError (exit 2) now if any target exists (without force) or cannot be written."""
        if self.html:
            check_html_path(self.html, force=self.force, option="--html")
        if self.xlsx:
            check_xlsx_target(self.xlsx, force=self.force)
        if self.csv_dir:
            check_csv_target(self.csv_dir, force=self.force)

    def write(self, plan: Plan, problem: Problem, catalog: Catalog, *, why: dict | None = None) -> list[Path]:
        written: list[Path] = []
        if self.html:
            written.append(write_html(self.html, plan, problem, catalog, why=why, force=self.force, option="--html"))
        if self.xlsx or self.csv_dir:
            tables = plan_tables(plan, problem, catalog, self.detail)
            if self.xlsx:
                written.append(write_xlsx(tables, self.xlsx, force=self.force, currency=plan.currency, plan=plan))
            if self.csv_dir:
                written += write_csv_dir(tables, self.csv_dir, force=self.force)
        return written
