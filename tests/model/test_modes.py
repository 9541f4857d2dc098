"""The one table of rental modes (solver.model.modes) agrees with the `Mode` literal, and every
part that asks a mode a question gets its answer there: a mode added to the literal without
a row, a row without a colour, or a colour the report's legend leaves out fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest

from solver.load import load_problem
from solver.model.catalog import MODE_UNITS, Offer
from solver.model.modes import MODES, UNIT_DAYS, Mode, legend_order
from solver.model.plan import Plan
from solver.report.charts import gantt_svg
from tests.builders import ROOT

HYBRID = ROOT / "problems" / "hybrid-burst.yaml"


def test_the_literal_and_the_table_name_the_same_modes_in_the_same_order():
    assert tuple(MODES) == get_args(Mode)
    assert all(name == row.name for name, row in MODES.items())


@pytest.mark.parametrize("mode", get_args(Mode))
def test_every_mode_has_a_colour_a_unit_and_a_billing_note(mode):
    row = MODES[mode]
    assert re.fullmatch(r"#[0-9a-f]{6}", row.colour), row
    assert row.unit in UNIT_DAYS and row.paid
    assert MODE_UNITS[mode] == row.unit


def test_colours_tell_the_modes_apart():
    colours = [row.colour for row in MODES.values()]
    assert len(set(colours)) == len(colours)


def test_the_legend_lists_every_mode_once():
    assert sorted(legend_order()) == sorted(MODES)
    assert legend_order() == ["hourly", "spot", "monthly", "yearly", "hosted"]   # the report's order, kept


def _offer(mode: str, **extra) -> Offer:
    unit = MODES[mode].unit
    return Offer(offer=f"o-{mode}", vendor="v", datacenter="d", gpu="g", mode=mode, price=1.0,
                 price_unit=f"cny_per_node_{unit}", gpus_per_node=8, max_nodes=1, interconnect="ethernet",
                 source="test", **extra)


@pytest.mark.parametrize("mode", get_args(Mode))
def test_an_offer_reads_its_mode_from_the_table(mode):
    extra = {"preemptions_per_day": 0.5} if MODES[mode].preemptible else {}
    offer = _offer(mode, **extra)
    assert offer.committed == MODES[mode].committed
    assert offer.preemptible == MODES[mode].preemptible
    assert offer.term_days == (max(1, int(UNIT_DAYS[MODES[mode].unit])) if offer.committed else 0)


def test_a_preemptible_offer_needs_its_preemption_rate():
    mode = next(name for name, row in MODES.items() if row.preemptible)
    with pytest.raises(ValueError, match="preemptions_per_day > 0"):
        _offer(mode)


def test_the_gantt_chart_colours_and_lists_every_mode():
    """One allocation in each mode: each bar has its mode's colour and the legend one swatch per mode."""
    problem, _ = load_problem(HYBRID)
    recorded = json.loads((ROOT / "tests/data/golden/solve-hybrid-burst.json").read_text())["output"]
    plan = Plan.model_validate({**recorded, "solve_seconds": 0.0})
    base = plan.allocations[0]
    plan = plan.model_copy(update={"allocations": [base.model_copy(update={"mode": m, "offer": f"o-{m}"})
                                                   for m in MODES]})
    svg = gantt_svg(plan, problem)
    swatches = re.findall(r'<rect class="legend"[^>]*fill="(#[0-9a-f]{6})"', svg)
    assert sorted(swatches) == sorted(row.colour for row in MODES.values())    # every mode, once
    assert swatches == [MODES[m].colour for m in legend_order()]
    for mode, row in MODES.items():
        assert re.search(rf'class="bar mode-{mode}"[^>]*fill="{row.colour}"', svg), mode


def mode_name_tests(source: str) -> list[int]:
    """Lines comparing a mode with a mode's name (`offer.mode == "spot"`, `mode in ("hourly", …)`):
    questions the table's columns answer (`MODES[mode].preemptible`, `.committed`, `.unit`)."""
    import ast

    names = set(MODES)
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        says_mode = any((isinstance(s, ast.Name) and s.id.endswith("mode"))
                        or (isinstance(s, ast.Attribute) and s.attr.endswith("mode")) for s in sides)
        consts = [c.value for s in sides for c in ([s] if isinstance(s, ast.Constant) else getattr(s, "elts", []))
                  if isinstance(c, ast.Constant)]
        if says_mode and any(c in names for c in consts):
            out.append(node.lineno)
    return out


def test_no_code_outside_the_table_tests_a_mode_by_its_name():
    found = {str(path.relative_to(ROOT)): lines for path in sorted((ROOT / "solver").rglob("*.py"))
             if path.name != "modes.py" and (lines := mode_name_tests(path.read_text(encoding="utf-8")))}
    assert found == {}


def test_the_mode_name_check_finds_such_a_test():
    assert mode_name_tests('if offer.mode == "spot":\n    pass\n') == [1]
    assert mode_name_tests('x = mode in ("hourly", "monthly")\n') == [1]
    assert mode_name_tests('if MODES[offer.mode].preemptible:\n    pass\n') == []
