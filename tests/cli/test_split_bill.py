"""`gpuplan split-bill`: a shared rack's bill from real-format `sacct -P` output, exact to the cent."""

from __future__ import annotations

import csv
import json
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from solver.tools.billing import largest_remainder, read_sacct, split_bill, to_cents
from solver.commands import split_bill as command
from solver.errors import ProblemError
from tests.builders import DATA

SACCT = DATA / "sacct-shared-rack.txt"
# GPU-seconds of the allocations in the fixture, summed by hand from AllocTRES gres/gpu × Elapsed
# (steps .batch/.extern/.0 excluded; the CPU-only and the pending job add nothing).
EXPECTED = {"qingyun": 4_732_862, "haiyan-lab": 2_143_009, "mobai": 1_262_414}

app = typer.Typer()
app.callback()(lambda: None)
command.register(app)


def run(*args: str):
    return CliRunner().invoke(app, ["split-bill", *map(str, args)])


def test_reads_allocations_and_skips_steps():
    usage = read_sacct(SACCT)
    assert usage.gpu_seconds() == EXPECTED
    assert usage.skipped_steps == 70
    assert not any("." in j.job_id for j in usage.jobs)
    ids = {j.job_id: j for j in usage.jobs}
    assert ids["41908"].seconds == 2 * 86400 + 3 * 3600 + 14 * 60 + 7          # 2-03:14:07
    assert ids["41987"].gpus == 8                                             # typed + plain gres, not 16
    assert {"42247_1", "42247_2"} <= set(ids)                                 # array tasks count separately


@pytest.mark.parametrize("rack,power,bandwidth", [
    ("48000", "13572.37", "3000.01"),
    ("50000.01", "0.02", "7.77"),
    ("1", "99999.99", "0"),
    ("36000.00", "12345.67", "2468.02"),
])
def test_totals_equal_inputs_to_the_cent(rack, power, bandwidth):
    bill = split_bill(read_sacct(SACCT), rack, power, bandwidth)
    tot = bill.totals()
    assert tot["rent"] == to_cents(rack, "r") and tot["power"] == to_cents(power, "p")
    assert tot["bandwidth"] == to_cents(bandwidth, "b")
    assert tot["total"] == to_cents(rack, "r") + to_cents(power, "p") + to_cents(bandwidth, "b")
    whole = sum(EXPECTED.values())
    rents = [t.rent for t in bill.tenants]
    assert max(rents) - min(rents) <= 1                                       # evenly
    for t in bill.tenants:                                                    # by GPU-hours, within a cent
        assert abs(t.power - Fraction(to_cents(power, "p") * EXPECTED[t.tenant], whole)) < 1
        assert abs(t.bandwidth - Fraction(to_cents(bandwidth, "b") * EXPECTED[t.tenant], whole)) < 1


def test_cli_table_json_and_csv_add_up(tmp_path):
    out = tmp_path / "bill.csv"
    res = run("--sacct", SACCT, "--rack-cost", "48000", "--power-cost", "13572.37", "--bandwidth-cost", "3000.01",
              "--csv", out, "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["totals"]["total"] == data["inputs"]["bill"] == "64572.38"
    for col in ("rent", "power", "bandwidth", "total"):
        assert sum(Decimal(t[col]) for t in data["tenants"]) == Decimal(data["totals"][col])
    rows = list(csv.DictReader(out.open()))
    assert [r["tenant"] for r in rows] == ["haiyan-lab", "mobai", "qingyun", "TOTAL"]
    assert sum(Decimal(r["total"]) for r in rows[:-1]) == Decimal("64572.38") == Decimal(rows[-1]["total"])
    table = run("--sacct", SACCT, "--rack-cost", "48000", "--power-cost", "13572.37")
    assert table.exit_code == 0 and "TOTAL" in table.output and "1,314.68" in table.output


def test_parsable_with_trailing_pipe_and_by_user(tmp_path):
    dash_p = tmp_path / "p.txt"                       # `sacct -p` ends every line with '|'
    dash_p.write_text("".join(ln + "|\n" for ln in SACCT.read_text().splitlines()))
    assert read_sacct(dash_p).gpu_seconds() == EXPECTED
    users = read_sacct(SACCT, by="user").gpu_seconds()
    assert sum(users.values()) == sum(EXPECTED.values()) and "lina" in users


def test_named_tenants_idle_one_pays_rent_only():
    bill = split_bill(read_sacct(SACCT), "40000", "1000", "0", tenants=["qingyun", "haiyan-lab", "mobai", "yuntu"])
    idle = next(t for t in bill.tenants if t.tenant == "yuntu")
    assert idle.rent == 1_000_000 and idle.power == 0 and idle.gpu_seconds == 0
    assert bill.notes and "yuntu" in bill.notes[0]
    with pytest.raises(ProblemError, match="haiyan-lab"):
        split_bill(read_sacct(SACCT), "40000", "1000", "0", tenants=["qingyun", "mobai"])


def test_period_cut_from_start_and_end(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("JobID|User|Account|AllocTRES|Start|End|State\n"
                 "7|u|a|cpu=8,gres/gpu=8,node=1|2026-10-31T22:00:00|2026-11-01T02:00:00|COMPLETED\n"
                 "8|v|b|cpu=8,gres/gpu=2,node=1|2026-11-30T23:00:00|Unknown|RUNNING\n"
                 "9|v|b||Unknown|Unknown|PENDING\n")
    usage = read_sacct(f, since=datetime(2026, 11, 1), until=datetime(2026, 12, 1))
    assert usage.gpu_seconds() == {"a": 8 * 2 * 3600, "b": 2 * 3600}


@pytest.mark.parametrize("text,where", [
    ("41873|x|u|acct|gpu|gres/gpu=8|01:00:00|a|b|COMPLETED\n", "line 1"),            # no header (sacct -n)
    ("JobID|User|Partition|AllocTRES|Elapsed\n1|u|gpu|gres/gpu=8|01:00:00\n", "line 1"),   # no Account
    ("JobID|User|Account|AllocTRES|Elapsed\n1|u|a|gres/gpu=8|01:00:00\n2|u|a|gres/gpu=8|1h\n", "line 3, column Elapsed"),
    ("JobID|User|Account|AllocTRES|Elapsed\n1|u|a|gres/gpu=eight|01:00:00\n", "line 2, column AllocTRES"),
    ("JobID|User|Account|AllocTRES|Elapsed\n\n1|u|a|gres/gpu=8\n", "line 3"),
    ("JobID|User|Account|AllocTRES|Elapsed\n1|u||gres/gpu=8|01:00:00\n", "line 2, column Account"),
])
def test_bad_input_names_file_line_and_column(tmp_path, text, where):
    f = tmp_path / "bad.txt"
    f.write_text(text)
    res = run("--sacct", f, "--rack-cost", "100")
    assert res.exit_code == 2, res.output
    assert "bad.txt" in res.output and where in res.output and "Traceback" not in res.output


def test_amounts_must_be_cents():
    assert to_cents("1,234.5", "k") == 123450
    for bad in ("12.345", "-1", "abc", "NaN"):
        with pytest.raises(ProblemError):
            to_cents(bad, "--power-cost")


@given(st.integers(0, 10**9), st.dictionaries(st.text(min_size=1, max_size=5), st.integers(0, 10**7),
                                              min_size=1, max_size=8).filter(lambda d: sum(d.values()) > 0))
def test_largest_remainder_is_exact_and_within_a_cent(total, weights):
    parts = largest_remainder(total, weights)
    assert sum(parts.values()) == total
    whole = sum(weights.values())
    for name, part in parts.items():
        assert abs(part - Fraction(total * weights[name], whole)) < 1


def test_table_money_has_thousands_separators(capsys):
    """The terminal table groups thousands (12,345.67); the amounts stay exact, and the CSV/JSON keep '12345.67'."""
    from solver.report.split_bill import grouped, render_bill

    assert [grouped(a) for a in ("1234567.89", "-1000.00", "999.99", "0.01")] == \
        ["1,234,567.89", "-1,000.00", "999.99", "0.01"]
    bill = split_bill(read_sacct(SACCT), "36000.00", "12345.67", "2468.02")
    render_bill(bill, None)
    out = capsys.readouterr().out
    assert "50,813.69" in out and "12,345.67" in out                       # the bill and the power total
    assert "12345.67" not in out
    assert bill.to_dict()["totals"]["power"] == "12345.67"
