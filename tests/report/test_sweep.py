"""`gpuplan sweep`'s terminal table: one column per grid key holding its values, not the edit string."""

from __future__ import annotations

import io

import pandas as pd
from rich.console import Console

from solver.report.sweep import grid_header, render_sweep

PRICE, POWER, DEADLINE = ("offers[vendor=21vianet].price*=", "datacenters.Shunyi.power_quota_kw=",
                          "jobs[*].deadline_days=")


def frame() -> pd.DataFrame:
    """Two grid scenarios and one explicit one, as solver.analysis.sweep.to_frame lays them out."""
    rows = [("grid-01", f"{PRICE}0.9; {POWER}250; {DEADLINE}200", 0.9, 250, 200, "optimal", 25_704_920.0, 200),
            ("grid-02", f"{PRICE}1.1; {POWER}400; {DEADLINE}217", 1.1, 400, 217, "optimal", 23_101_000.0, 217),
            ("late", "jobs.pretrain-30b.deadline_days=240", None, None, None, "error", None, None)]
    df = pd.DataFrame([{"scenario": s, "edits": e, PRICE: p, POWER: w, DEADLINE: d, "status": st, "total_cost": c,
                        "currency": "CNY", "finish_pretrain-30b": f, "binding": "", "error": "past the horizon" if st == "error" else "",
                        "seconds": 0.5} for s, e, p, w, d, st, c, f in rows])
    for col in (POWER, DEADLINE, "finish_pretrain-30b"):
        df[col] = df[col].astype("Int64")
    return df


def shown(df: pd.DataFrame, width: int = 100) -> list[str]:
    out = io.StringIO()
    render_sweep(df, None, Console(file=out, width=width, no_color=True))
    return out.getvalue().splitlines()


def test_grid_headers_are_short():
    assert [grid_header(k) for k in (PRICE, POWER, DEADLINE)] == ["price ×", "power_quota_kw", "deadline_days"]
    assert grid_header('jobs[name="a.b"].mfu+=') == "mfu +"      # a dot inside brackets is not a path step


def test_grid_values_are_columns_one_line_per_scenario():
    wide = shown(frame(), 200)
    assert wide[1].startswith("grid: price × = offers[vendor=21vianet].price*=")
    header = [c.strip() for c in wide[3].strip("┃").split("┃")]
    assert header[:5] == ["scenario", "price ×", "power_quota_kw", "deadline_days", "other edits"]
    lines = shown(frame())
    assert max(len(line) for line in lines) <= 100
    grid_rows = [line for line in lines if line.startswith("│grid-")]
    assert len(grid_rows) == 2                                  # one line each: no folded edit string
    first = next(i for i, line in enumerate(lines) if line.startswith("│grid-01"))
    assert lines[first + 1].startswith("│grid-02")
    cells = [c.strip() for c in grid_rows[0].strip("│").split("│")]
    assert cells[:4] == ["grid-01", "0.9", "250", "200"] and cells[4] == ""
    assert "25,704,920" in grid_rows[0]
    assert not any("offers[vendor" in line for line in lines[3:] if line.startswith("│grid-"))


def test_only_grid_scenarios_have_no_edits_column():
    lines = shown(frame().iloc[:2], 200)
    assert not any("edits" in line for line in lines[2:6])


def test_the_summary_says_how_rows_were_solved_and_an_unproven_cost_is_an_interval():
    df = frame()
    df.insert(df.columns.get_loc("total_cost") + 1, "lower_bound", [25_704_920.0, 22_950_000.0, None])
    df["status"] = ["optimal", "feasible", "error"]
    df["how"] = ["probe", "rebuilt", ""]
    lines = shown(df, 200)
    assert lines[0].startswith("3 scenarios: 1 optimal, 1 feasible, 1 error") and lines[0].endswith("1 probe, 1 rebuilt")
    assert "22,950,000–23,101,000" in next(line for line in lines if line.startswith("│grid-02"))
    assert "25,704,920" in next(line for line in lines if line.startswith("│grid-01"))
