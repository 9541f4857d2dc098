"""Reports in Simplified Chinese (`--lang zh-CN`): the same plan, the same numbers, Chinese words.

Every bundled problem is solved once; its HTML report is rendered in English and in Chinese
and the figures of every table compared. Headless Chromium draws the Chinese reports (one
browser for all of them): the headings are Chinese, and every Chinese text is drawn with a
CJK font (Chromium's own account of the fonts it used, CSS.getPlatformFontsForNode), so no
character shows as an empty box. The workbook in Chinese has Chinese sheet names and headers
and the same formulas and totals as the English one; `--json` is the same bytes in both.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from datetime import date

import pytest
from rich.cells import cell_len

from solver.api import solve_problem
from solver.i18n import language
from solver.load import load_problem
from solver.report.html import render_html
from solver.report.words import FABRIC_NAMES
from solver.report.tables import plan_tables, write_csv_dir, write_xlsx
from tests.builders import HANG_SECONDS, ROOT
from tests.report.test_html import Driver, _browser

BUNDLED = sorted(p.stem for p in (ROOT / "problems").glob("*.yaml"))
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@pytest.fixture(scope="module")
def plans():
    """Each bundled problem's plan (the dated one as if it started on 20 January 2027)."""
    out = {}
    for name in BUNDLED:
        problem, catalog = load_problem(ROOT / "problems" / f"{name}.yaml")
        out[name] = (solve_problem(problem, catalog), problem, catalog)
    return out


def _pages(plan, problem, catalog) -> tuple[str, str]:
    english = render_html(plan, problem, catalog)
    with language("zh-CN"):
        chinese = render_html(plan, problem, catalog)
    return english, chinese


def _table_numbers(page: str) -> list[str]:
    """Every figure inside the page's tables, in order (tags and entities removed; not the Chinese clauses
    an English checklist quotes beside its questions)."""
    page = re.sub(r'<span class="zh".*?</span>', "", page)
    tables = "".join(re.findall(r"<table.*?</table>", page, flags=re.S))
    text = html.unescape(re.sub(r"<[^>]+>", " ", tables))
    return re.findall(r"\d[\d,]*(?:\.\d+)?", text)


def test_chinese_reports_have_the_english_reports_numbers(plans):
    assert len(BUNDLED) >= 5
    for name, (plan, problem, catalog) in plans.items():
        english, chinese = _pages(plan, problem, catalog)
        assert _table_numbers(chinese) == _table_numbers(english), name
        assert '<html lang="zh-CN">' in chinese and '<html lang="en">' in english
        fonts = chinese.split("body{font-family:", 1)[1].split(";", 1)[0]   # macOS, Windows, Linux desktops
        assert all(f'"{font}"' in fonts for font in ("PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC"))
        assert "<h2>费用构成</h2>" in chinese and "<h2>合同检查清单</h2>" in chinese, name
        total = f"{plan.total_cost / 1e4:,.2f} 万元"                      # the headline, rounded to 万元
        assert total in chinese.split('id="summary">', 1)[1].split("</p>", 1)[0], name
        assert f"{plan.total_cost:,.0f} 元" in chinese                     # the exact total in the chart


def test_checklist_is_chinese_in_chinese_and_bilingual_in_english(plans):
    plan, problem, catalog = plans["hybrid-burst"]
    english, chinese = _pages(plan, problem, catalog)
    english_list = english.split("<h2>Contract checklist</h2>", 1)[1]
    chinese_list = chinese.split("<h2>合同检查清单</h2>", 1)[1]
    assert "Are storage and bandwidth included" in english_list and "含存储和带宽吗" in english_list
    assert "价格是否包含存储和带宽" in chinese_list
    words = re.sub(r"<[^>]+>|&[#\w]+;", " ", chinese_list.split("</footer>")[0].split("<footer>")[0])
    latin = set(re.findall(r"[A-Za-z]{4,}", words)) - {o.offer for o in catalog.offers.values()}
    names = set(re.findall(r"[A-Za-z]{4,}", " ".join(
        [*(o.offer for o in catalog.offers.values()), *(o.vendor for o in catalog.offers.values()),
         *(o.datacenter for o in catalog.offers.values()), *(i for o in catalog.offers.values() for i in o.interconnect),
         *FABRIC_NAMES.values()])))   # fabrics by their product names (InfiniBand NDR, RoCE), not catalog codes
    assert latin - names == set(), "English words left in the Chinese checklist"


def test_dates_stay_iso_in_chinese(plans):
    plan, problem, catalog = plans["hybrid-burst"]
    problem = problem.model_copy(update={"start_date": date(2027, 1, 20)})
    plan = plan.model_copy(update={"start_date": problem.start_date})
    _, chinese = _pages(plan, problem, catalog)
    assert "2027-01-30 至 2028-01-29" in chinese   # the yearly contract, both ends whole ISO dates


def test_workbook_in_chinese_has_the_english_formulas_and_totals(plans, tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    plan, problem, catalog = plans["hybrid-burst"]
    tables = plan_tables(plan, problem, catalog)
    write_xlsx(tables, tmp_path / "en.xlsx", currency=plan.currency)
    with language("zh-CN"):
        write_xlsx(tables, tmp_path / "zh.xlsx", currency=plan.currency)
        write_csv_dir(tables, tmp_path / "csv-zh")
    en, zh = (openpyxl.load_workbook(tmp_path / f"{n}.xlsx") for n in ("en", "zh"))
    assert zh.sheetnames[:4] == ["分配明细", "租用", "任务", "费用构成"] and len(zh.sheetnames) == len(en.sheetnames)
    assert [c.value for c in zh["租用"][1]][:3] == ["租用编号", "报价", "供应商"]
    for e, z in zip(en.worksheets, zh.worksheets):
        assert e.max_row == z.max_row and e.max_column == z.max_column
        for row_e, row_z in zip(e.iter_rows(min_row=2), z.iter_rows(min_row=2)):
            for a, b in zip(row_e, row_z):
                if a.column == 1 and a.value == "total" and b.value != a.value:   # the totals row's label
                    assert b.value == "合计"
                    continue
                if isinstance(a.value, str) and not a.value.startswith("="):
                    continue   # words in Chinese (modes, parts, blocks: tests/report/test_zh_workbook.py)
                assert a.value == b.value, (e.title, a.coordinate)        # data, formulas and totals
                assert a.number_format.replace('"CNY"', '"元"') == b.number_format
    rentals = zh["租用"]
    assert str(rentals.cell(row=2, column=rentals.max_column).value).startswith("=(")   # the cost formula
    header = (tmp_path / "csv-zh" / "rentals.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("租用编号,报价,供应商")


def _gpuplan(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=HANG_SECONDS, env={**os.environ, "COLUMNS": "100", **env})


def _without_clock(text: str) -> str:
    return re.sub(r'("[a-z_]*seconds": )[0-9.e+-]+', r"\1<t>", text)


def test_json_is_the_same_bytes_in_every_language(tmp_path):
    english = _gpuplan("solve", "problems/seed-7b-200b-30d.yaml", "--json", GPUPLAN_LANG="en")
    chinese = _gpuplan("solve", "problems/seed-7b-200b-30d.yaml", "--json", "--lang", "zh-CN")
    assert english.returncode == chinese.returncode == 0, chinese.stderr
    assert _without_clock(chinese.stdout) == _without_clock(english.stdout)
    assert not CJK.search(chinese.stdout)


def test_an_unknown_language_is_refused_before_solving():
    from typer.testing import CliRunner

    from solver.cli import app
    bad = CliRunner().invoke(app, ["solve", str(ROOT / "problems" / "seed-7b-200b-30d.yaml"), "--lang", "fr"])
    assert bad.exit_code == 2 and "--lang" in bad.output and "zh-CN" in bad.output


def test_cli_writes_the_chinese_report_and_tables(tmp_path):
    problem = tmp_path / "p.yaml"
    text = (ROOT / "problems" / "seed-7b-200b-30d.yaml").read_text(encoding="utf-8")
    problem.write_text(text.replace("catalog: ", "lang: zh-CN\ncatalog: ", 1).replace(
        "../catalogs", str(ROOT / "catalogs")), encoding="utf-8")
    assert "lang: zh-CN" in problem.read_text(encoding="utf-8")
    done = _gpuplan("solve", str(problem), "--html", str(tmp_path / "p.html"), "--xlsx", str(tmp_path / "p.xlsx"))
    assert done.returncode == 0, done.stderr
    assert "<h2>费用构成</h2>" in (tmp_path / "p.html").read_text(encoding="utf-8")
    assert "已写入" in done.stdout and "费用构成" in done.stdout and "Cost breakdown" not in done.stdout
    assert max(cell_len(line) for line in done.stdout.splitlines()) <= 100   # CJK is two columns wide


# ----- in a real browser -----------------------------------------------------------------------------------
CJK_FONTS = ("CJK", "PingFang", "YaHei", "Source Han", "WenQuanYi", "Hiragino")


def _cdp(driver: Driver, cmd: str, **params):
    return driver.call("POST", "/goog/cdp/execute", {"cmd": cmd, "params": params})


@pytest.fixture(scope="module")
def driver():
    chromium, chromedriver = _browser()
    if not (chromium and chromedriver):
        if os.environ.get("CI"):
            pytest.fail("CI is set but chromium/chromedriver are missing: .ci/run must install them")
        pytest.skip("chromium or chromedriver not installed (apt-get install chromium chromium-driver)")
    d = Driver(chromium, chromedriver)
    yield d
    d.quit()


def test_chinese_reports_drawn_by_chromium_with_a_cjk_font(driver, plans, tmp_path):
    """Headings in Chinese, and every element whose text is Chinese drawn with a CJK font: without one
    (no fonts-noto-cjk, nothing of the page's font stack installed) the glyphs would be empty boxes."""
    for name, (plan, problem, catalog) in plans.items():
        path = tmp_path / f"{name}.html"
        path.write_text(_pages(plan, problem, catalog)[1], encoding="utf-8")
        driver.open(path.as_uri())
        headings = driver.run("return Array.from(document.querySelectorAll('h1, h2')).map(e => e.innerText);")
        assert len(headings) >= 8 and all(CJK.search(h) for h in headings), (name, headings)
        _cdp(driver, "DOM.enable")
        _cdp(driver, "CSS.enable")
        root = _cdp(driver, "DOM.getDocument", depth=-1)["root"]["nodeId"]
        nodes = _cdp(driver, "DOM.querySelectorAll", nodeId=root,
                     selector="h1, h2, h3, th, p, footer, table.checklist td, svg text")["nodeIds"]
        texts = driver.run("return Array.from(document.querySelectorAll("
                           "'h1, h2, h3, th, p, footer, table.checklist td, svg text')).map(e => e.textContent);")
        assert len(texts) == len(nodes)
        checked = 0
        for node, text in zip(nodes, texts):
            if not CJK.search(text):
                continue
            fonts = _cdp(driver, "CSS.getPlatformFontsForNode", nodeId=node)["fonts"]
            used = [f["familyName"] for f in fonts if f["glyphCount"]]
            assert any(k in f for f in used for k in CJK_FONTS), (name, text[:40], used)
            checked += 1
        assert checked > 20, name


def test_vendor_sheet_in_chinese(tmp_path):
    """`negotiate --export-vendor` in zh-CN: Chinese headers and notes, the same figures as in English."""
    from types import SimpleNamespace

    from solver.analysis.negotiate import OfferTerms
    from solver.report.vendor_sheet import export_vendor
    terms = OfferTerms(offer="vnet-yz-a100", vendor="21vianet", datacenter="Yizhuang", gpu="A100-80G", mode="monthly",
                       price=60800.0, price_unit="per_node_month", currency="CNY", status="in_plan",
                       target_price=57760.0, target_node_days=150.0, target_nodes=5)
    result = SimpleNamespace(vendors=None, offers=[terms])
    export_vendor(result, "21vianet", tmp_path / "en.csv")
    with language("zh-CN"):
        export_vendor(result, "21vianet", tmp_path / "zh.csv")
    en, zh = ((tmp_path / f"{n}.csv").read_text(encoding="utf-8").splitlines() for n in ("en", "zh"))
    assert en[0].startswith("offer,gpu,mode") and zh[0].startswith("报价,GPU,租用方式")
    assert "在我方方案中" in zh[1] and "节点·天" in zh[1]
    assert zh[1].split(",")[:10] == en[1].split(",")[:10]       # offer, prices and volumes unchanged


def test_why_in_chinese():
    done = _gpuplan("why", "problems/seed-7b-200b-30d.yaml", "--lang", "zh-CN")
    assert done.returncode == 0, done.stderr
    assert "落选原因" in done.stdout and "价格" in done.stdout and "已触及的限制" in done.stdout
    assert "最优 307,180 元" in done.stdout
    assert max(cell_len(line) for line in done.stdout.splitlines()) <= 100


def test_infeasibility_explanation_in_chinese():
    """The recorded explanation of the bundled infeasible problem: English as recorded, Chinese written from
    the relaxations' numbers (the same numbers; Chinese word order puts some elsewhere)."""
    import json

    from solver.report.explain import explanation_lines
    recorded = json.loads((ROOT / "tests" / "data" / "golden" / "solve-infeasible-shunyi-racks-short.json")
                          .read_text(encoding="utf-8"))["output"]["explanation"]
    assert explanation_lines(recorded) == recorded["lines"]
    with language("zh-CN"):
        chinese = explanation_lines(recorded)
    assert chinese[0].startswith("需要每个截止日期推迟 1 天") and "预算增加 648,032 元" in chinese[-1]
    numbers = [sorted(re.findall(r"\d[\d,.]*", " ".join(lines))) for lines in (chinese, recorded["lines"])]
    assert numbers[0] == numbers[1]
    names = " ".join(chinese).replace("vnet-yz-a100-80-8x-monthly", "").replace("Shunyi", "")
    assert not re.search(r"[a-z]{4,}", names)                        # no English words left
