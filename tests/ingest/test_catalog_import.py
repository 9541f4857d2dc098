"""Quote sheets: template → fill → import → the same catalog rows; every bad cell named where it is."""

from __future__ import annotations

import csv
import shutil
from datetime import date
from pathlib import Path

import openpyxl
import pytest
from openpyxl.utils import get_column_letter
from typer.testing import CliRunner

from solver.cli import app
from solver.errors import ProblemError
from solver.load import load_catalog
from solver.model.catalog import Offer
from solver.ingest.quote_sheet import EXAMPLE_ID
from solver.ingest.quote_template import write_template
from solver.ingest.quotes import QuoteSheetError, import_quotes
from solver.ingest.tables import COLUMNS
from tests.builders import ROOT

SAMPLE = ROOT / "catalogs" / "beijing-sample"

# Rows as a person types them in a spreadsheet: numbers, booleans, dates, '|' lists.
FILLED = [
    {"offer": "acme-yz-a100-80-8x-monthly", "vendor": "acme", "datacenter": "Yizhuang", "gpu": "A100-80G",
     "mode": "monthly", "price": 61000, "price_unit": "cny_per_node_month", "gpus_per_node": 8, "max_nodes": 5,
     "min_term_days": 30, "lead_time_days": 4, "interconnect": "ib_hdr|roce", "interconnect_price": "5800|2900",
     "counts_power": False, "node_kw": 6.5, "platform_fee_pct": 0, "preemptions_per_day": 0,
     "perf_guarantee_pct": 95, "discount_from_gpus": 32, "discount_pct": 9.5, "storage_per_tb_month": 1150,
     "egress_per_tb": 640, "illustrative": False, "as_of": date(2027, 1, 15), "source": "acme quote Q-17"},
    {"offer": "acme-yz-h800-80-8x-hourly", "vendor": "acme", "datacenter": "Yizhuang", "gpu": "H800-80G",
     "mode": "hourly", "price": 29.75, "price_unit": "cny_per_gpu_hour", "gpus_per_node": 8, "max_nodes": 2,
     "interconnect": "roce", "interconnect_price": 6, "node_kw": 10.2, "storage_per_tb_month": 1150,
     "egress_per_tb": 640, "illustrative": False, "as_of": date(2027, 1, 15), "source": "acme price list"},
    {"offer": "rackco-sy-h20-8x-hosted", "vendor": "rackco", "datacenter": "Shunyi", "gpu": "H20-96G",
     "mode": "hosted", "price": 33000, "price_unit": "cny_per_node_month", "gpus_per_node": 8, "max_nodes": 20,
     "min_term_days": 180, "lead_time_days": 35, "interconnect": "roce", "counts_power": True, "node_kw": 6.0,
     "platform_fee_pct": 5, "illustrative": True, "source": "rackco call, 2027-01-10"},
]


def expected(row: dict) -> Offer:
    """What the row means, built from Python values (not through any cell text)."""
    data = dict(row)
    for key in ("interconnect", "interconnect_price"):
        if isinstance(data.get(key), str):
            data[key] = tuple(float(v) if key.endswith("price") else v for v in data[key].split("|"))
    return Offer(**data)


@pytest.fixture
def target(tmp_path) -> Path:
    """A catalog folder with the sample's GPUs and datacenters and no offers yet."""
    folder = tmp_path / "my-quotes"
    folder.mkdir()
    for name in ("gpus.csv", "datacenters.csv"):
        shutil.copy(SAMPLE / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("template") / "quotes.xlsx"
    write_template(path, load_catalog(SAMPLE))
    return path


def fill(template: Path, path: Path, rows: list[dict], *, start: int = 2) -> Path:
    """Rows typed into the template from `start` on (row 2 is the example row, overwritten)."""
    book = openpyxl.load_workbook(template)
    sheet = book["offers"]
    for r, row in enumerate(rows, start=start):
        for c, col in enumerate(COLUMNS, start=1):
            sheet.cell(row=r, column=c).value = row.get(col)
    book.save(path)
    return path


def cell_of(column: str, row: int) -> str:
    return f"{get_column_letter(COLUMNS.index(column) + 1)}{row}"


# ---------------------------------------------------------------- the template

def test_template_sheets(template):
    book = openpyxl.load_workbook(template)
    assert book.sheetnames == ["offers", "columns", "lists"] and book["lists"].sheet_state == "hidden"
    offers = book["offers"]
    with open(SAMPLE / "offers.csv", newline="", encoding="utf-8") as fh:
        assert [c.value for c in offers[1]] == next(csv.reader(fh)) == COLUMNS
    assert offers["A2"].value == EXAMPLE_ID and offers.max_row >= 2
    doc = {row[0]: row for row in book["columns"].iter_rows(min_row=2, values_only=True) if row[0] in COLUMNS}
    assert set(doc) == set(COLUMNS)
    assert doc["mode"][1] == "yes" and "hourly, monthly, yearly, hosted, spot" in doc["mode"][3]
    assert doc["platform_fee_pct"][1] == "no" and "percent" in doc["platform_fee_pct"][6]
    assert "A100-80G" in doc["gpu"][3] and "Yizhuang" in doc["datacenter"][3]
    validated = {str(dv.sqref).split(":")[0] for dv in offers.data_validations.dataValidation}
    assert {cell_of(c, 2) for c in ("mode", "price_unit", "gpu", "datacenter", "counts_power")} <= validated


def test_template_refuses_to_overwrite(template, tmp_path):
    path = tmp_path / "t.xlsx"
    path.write_text("mine")
    with pytest.raises(ProblemError, match="already exists"):
        write_template(path)
    assert path.read_text() == "mine"
    with pytest.raises(ProblemError, match="xlsx"):
        write_template(tmp_path / "t.ods")


def test_template_is_checked_as_every_output_file(tmp_path):
    """The sheet goes through files.check_new_file: a folder, a missing folder and a link (even a
    dangling one) are refused in its words, and --force replaces the link, not its target."""
    (tmp_path / "sheet.xlsx").mkdir()
    with pytest.raises(ProblemError, match="is a folder"):
        write_template(tmp_path / "sheet.xlsx")
    with pytest.raises(ProblemError, match="folder does not exist"):
        write_template(tmp_path / "nowhere" / "q.csv")
    link = tmp_path / "q.csv"
    link.symlink_to(tmp_path / "elsewhere.csv")
    with pytest.raises(ProblemError, match="symbolic link") as err:
        write_template(link)
    assert err.value.key == "FILE" and not (tmp_path / "elsewhere.csv").exists()
    write_template(link, force=True)
    assert not link.is_symlink() and link.read_text(encoding="utf-8").startswith("offer,")
    assert not (tmp_path / "elsewhere.csv").exists()


# ---------------------------------------------------------------- round trips

def test_round_trip_xlsx(template, target, tmp_path):
    sheet = fill(template, tmp_path / "filled.xlsx", FILLED)
    result = import_quotes(sheet, target)
    assert result.target == target / "offers.csv" and not result.skipped and result.backup is None
    catalog = load_catalog(target)
    assert list(catalog.offers) == [r["offer"] for r in FILLED]
    for row in FILLED:
        assert catalog.offers[row["offer"]] == expected(row)
    hosted = catalog.offers["rackco-sy-h20-8x-hosted"]          # blank cells took their defaults
    assert hosted.interconnect_price == (0.0,) and hosted.storage_per_tb_month == 0 and hosted.as_of is None


def test_round_trip_example_row(template, target):
    result = import_quotes(template, target)
    assert [o.offer for o in result.offers] == [EXAMPLE_ID]
    assert any("example row" in w for w in result.quotes.warnings)
    assert load_catalog(target).offers[EXAMPLE_ID].mode == "monthly"


def test_round_trip_csv(target, tmp_path):
    path = write_template(tmp_path / "quotes.csv")
    with open(path, "a", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        for row in FILLED:
            writer.writerow({k: ("true" if v is True else "false" if v is False else v) for k, v in row.items()})
    result = import_quotes(path, target)
    assert [o.offer for o in result.offers] == [EXAMPLE_ID] + [r["offer"] for r in FILLED]
    catalog = load_catalog(target)
    for row in FILLED:
        assert catalog.offers[row["offer"]] == expected(row)


def test_a_csv_sheet_that_is_not_utf8_is_named(target, tmp_path):
    """A quote sheet saved in GBK is a ProblemError naming the file (solver.ingest.readers.csv_rows); nothing written."""
    path = tmp_path / "quotes.csv"
    path.write_bytes((",".join(COLUMNS) + "\n报价,北京\n").encode("gbk"))
    before = (target / "offers.csv").exists()
    with pytest.raises(ProblemError, match="not a readable CSV table") as err:
        import_quotes(path, target)
    assert err.value.file == str(path) and "UTF-8" in err.value.fix
    assert (target / "offers.csv").exists() == before

def test_round_trip_prefilled_sample(target, tmp_path):
    """The whole sample catalog out to a sheet and back: the same 50-odd offers."""
    sample = load_catalog(SAMPLE)
    path = write_template(tmp_path / "sample.xlsx", sample, prefill=True)
    import_quotes(path, target)
    assert load_catalog(target).offers == sample.offers


# ---------------------------------------------------------------- bad cells

GOOD = FILLED[0]
BAD_CASES = {            # id: (changes to a good row, column named, words of the message)
    "missing_required": ({"price": None}, "price", "required"),
    "bad_enum": ({"mode": "montly"}, "mode", "not an allowed value"),
    "negative_number": ({"price": -3}, "price", "greater than 0 (got -3)"),
    "out_of_range": ({"platform_fee_pct": 120}, "platform_fee_pct", "less than or equal to 100"),
    "wrong_type": ({"gpus_per_node": "eight"}, "gpus_per_node", "wrong type"),
    "not_whole": ({"max_nodes": 2.5}, "max_nodes", "wrong type"),
    "bad_bool": ({"counts_power": "maybe"}, "counts_power", "wrong type"),
    "bad_date": ({"as_of": "next week"}, "as_of", "wrong type"),
    "bad_list_item": ({"interconnect": "ib_hdr|infiniband"}, "interconnect", "item 2"),
    "unknown_gpu": ({"gpu": "B200-192G"}, "gpu", "unknown gpu"),
    "unknown_datacenter": ({"datacenter": "Haidian"}, "datacenter", "unknown datacenter"),
    "unit_not_mode": ({"price_unit": "cny_per_node_hour"}, "price_unit", "does not fit mode"),
    "power_without_kw": ({"counts_power": True, "node_kw": None}, "node_kw", "node_kw is required"),
    "list_lengths": ({"interconnect_price": "5800"}, "interconnect_price", "one '|'-separated value"),
    "duplicate_id": ({"offer": FILLED[1]["offer"]}, "offer", "duplicate offer id"),
    "storage_differs": ({"offer": "acme-2", "storage_per_tb_month": 999}, "storage_per_tb_month",
                        "differ"),
}


@pytest.mark.parametrize("case", list(BAD_CASES))
def test_bad_cell_is_located(case, template, target, tmp_path):
    changes, column, words = BAD_CASES[case]
    sheet = fill(template, tmp_path / "bad.xlsx", [FILLED[1], {**GOOD, **changes}])
    with pytest.raises(QuoteSheetError) as caught:
        import_quotes(sheet, target)
    bad = caught.value.bad
    assert [(b.sheet, b.row, b.column) for b in bad] == [("offers", 3, column)], caught.value.render()
    assert words in bad[0].message and bad[0].fix
    if case != "storage_differs":
        assert bad[0].cell == cell_of(column, 3)
    text = caught.value.render()
    assert f"sheet offers, row 3, column {column}" in text and "nothing written" in text and "Fix:" in text
    assert not (target / "offers.csv").exists()


def test_unknown_column_and_missing_column(template, target, tmp_path):
    sheet = fill(template, tmp_path / "bad.xlsx", [GOOD])
    book = openpyxl.load_workbook(sheet)
    offers = book["offers"]
    offers[cell_of("price", 1)] = "pricee"                    # typo: unknown column, and price is missing
    book.save(sheet)
    with pytest.raises(QuoteSheetError) as caught:
        import_quotes(sheet, target, skip_bad=True)             # a header problem is never skipped
    found = {(b.row, b.column, b.cell): b for b in caught.value.bad}
    assert set(found) == {(1, "pricee", cell_of("price", 1)), (1, "price", None)}
    assert "did you mean 'price'" in found[1, "pricee", cell_of("price", 1)].fix
    assert "required column missing" in found[1, "price", None].message
    assert not (target / "offers.csv").exists()


def test_every_bad_cell_of_a_row_is_reported(template, target, tmp_path):
    row = {**GOOD, "mode": "montly", "price": -1, "gpu": "B200", "max_nodes": "many", "source": None}
    sheet = fill(template, tmp_path / "bad.xlsx", [row])
    with pytest.raises(QuoteSheetError) as caught:
        import_quotes(sheet, target)
    assert [b.column for b in caught.value.bad] == ["gpu", "mode", "price", "max_nodes", "source"]
    assert all(b.row == 2 for b in caught.value.bad)


def test_percent_formatted_cell(template, target, tmp_path):
    sheet = fill(template, tmp_path / "pct.xlsx", [GOOD])
    book = openpyxl.load_workbook(sheet)
    cell = book["offers"][cell_of("platform_fee_pct", 2)]
    cell.value, cell.number_format = 0.05, "0%"
    book.save(sheet)
    with pytest.raises(QuoteSheetError) as caught:
        import_quotes(sheet, target)
    (bad,) = caught.value.bad
    assert bad.column == "platform_fee_pct" and "percentage" in bad.message and "type 5" in bad.fix


def test_csv_locations(target, tmp_path):
    path = tmp_path / "vendor.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerow({**GOOD, "illustrative": "false"})
        writer.writerow({**FILLED[1], "price": "29,75", "illustrative": "false"})
    with pytest.raises(QuoteSheetError) as caught:
        import_quotes(path, target)
    (bad,) = caught.value.bad
    assert (bad.sheet, bad.row, bad.column, bad.cell) == ("vendor.csv", 3, "price", None)
    assert "thousands separators" in bad.fix


# ---------------------------------------------------------------- --skip-bad, overwriting, the folder

def test_skip_bad_writes_the_good_rows(template, target, tmp_path):
    rows = [FILLED[0], {**FILLED[1], "price": -1}, FILLED[2]]
    sheet = fill(template, tmp_path / "mixed.xlsx", rows)
    with pytest.raises(QuoteSheetError, match="--skip-bad to write the 2 good rows"):
        import_quotes(sheet, target)
    result = import_quotes(sheet, target, skip_bad=True)
    assert result.quotes.bad_rows == [3] and [b.column for b in result.skipped] == ["price"]
    assert list(load_catalog(target).offers) == [FILLED[0]["offer"], FILLED[2]["offer"]]
    all_bad = fill(template, tmp_path / "all-bad.xlsx", [{**FILLED[1], "price": -1}])
    with pytest.raises(QuoteSheetError, match="nothing written"):
        import_quotes(all_bad, target, skip_bad=True, force=True)


def test_never_overwrites_without_force(template, target, tmp_path):
    original = "\n".join((SAMPLE / "offers.csv").read_text(encoding="utf-8").splitlines()[:3]) + "\n"
    (target / "offers.csv").write_text(original, encoding="utf-8")
    sheet = fill(template, tmp_path / "filled.xlsx", FILLED)
    with pytest.raises(ProblemError, match="offers.csv exists; not overwritten"):
        import_quotes(sheet, target)
    assert (target / "offers.csv").read_text(encoding="utf-8") == original
    result = import_quotes(sheet, target, force=True)
    assert result.backup == target / "offers.csv.bak" and result.replaced_rows == 2
    assert result.backup.read_text(encoding="utf-8") == original
    again = import_quotes(sheet, target, force=True)              # an older backup is kept too
    assert again.backup == target / "offers.csv.bak2" and result.backup.read_text(encoding="utf-8") == original
    assert len(load_catalog(target).offers) == len(FILLED)


def test_into_must_be_a_catalog_folder(template, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ProblemError, match="no gpus.csv"):
        import_quotes(template, empty)
    with pytest.raises(ProblemError, match="catalog folder not found"):
        import_quotes(template, tmp_path / "nowhere")
    assert list(empty.iterdir()) == []


def test_wrong_sheet_or_file(template, target, tmp_path):
    with pytest.raises(ProblemError, match="no sheet named 'quotes'"):
        import_quotes(template, target, sheet="quotes")
    junk = tmp_path / "junk.xlsx"
    junk.write_text("not a workbook")
    with pytest.raises(ProblemError, match="not a readable .xlsx"):
        import_quotes(junk, target)
    empty = fill(template, tmp_path / "empty.xlsx", [{}])
    with pytest.raises(ProblemError, match="no offer rows"):
        import_quotes(empty, target)


# ---------------------------------------------------------------- the commands

def test_cli_template_and_import(target, tmp_path):
    runner = CliRunner()
    path = tmp_path / "q.xlsx"
    made = runner.invoke(app, ["catalog", "template", str(path)])
    assert made.exit_code == 0 and path.exists(), made.output
    assert runner.invoke(app, ["catalog", "template", str(path)]).exit_code == 2
    fill(path, path, [GOOD, {**FILLED[1], "price": -3}])
    bad = runner.invoke(app, ["catalog", "import", str(path), "--into", str(target)])
    assert bad.exit_code == 2 and "row 3, column price" in bad.output and not (target / "offers.csv").exists()
    skipped = runner.invoke(app, ["catalog", "import", str(path), "--into", str(target), "--skip-bad"])
    assert skipped.exit_code == 0 and "wrote" in skipped.output and "skipped 1 row" in skipped.output
    refused = runner.invoke(app, ["catalog", "import", str(path), "--into", str(target), "--skip-bad"])
    assert refused.exit_code == 2 and "--force" in refused.output
    replaced = runner.invoke(app, ["catalog", "import", str(path), "--into", str(target), "--skip-bad", "--force"])
    assert replaced.exit_code == 0 and "offers.csv.bak" in replaced.output
