"""The HTML report: self-contained, escaped, complete, and drawn by a real browser.

The browser test drives Debian's headless Chromium through chromedriver's W3C HTTP API
with urllib (no selenium): it opens the report from a file:// URL, measures the drawn SVG
bars with getBoundingClientRect, takes a screenshot and reads the browser's console log.
It is skipped only when Chromium or chromedriver is missing AND the CI variable is unset
(`.ci/run` installs both, so under CI it always runs).
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from solver.api import solve_problem
from solver.load import load_problem
from solver.report.charts import nice_ticks
from solver.report.html import check_html_path, render_html, write_html
from tests.builders import HANG_SECONDS, ROOT

HYBRID = ROOT / "problems" / "hybrid-burst.yaml"
SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"
FRONTIER = [(168, 35_750_300.0, "24×8 H800-80G hosted @Shunyi"), (203, 28_340_800.0, "19×8 H800-80G hosted @Shunyi"),
            (217, 24_312_437.0, "38×8 A100-80G hosted @Shunyi + …")]


@pytest.fixture(scope="module")
def hybrid():
    problem, catalog = load_problem(HYBRID)
    return solve_problem(problem, catalog), problem, catalog


@pytest.fixture(scope="module")
def page(hybrid) -> str:
    plan, problem, catalog = hybrid
    return render_html(plan, problem, catalog, frontier=FRONTIER)


# ----- content, no browser ---------------------------------------------------------------------------------
def test_every_section_is_there(page, hybrid):
    plan, _, _ = hybrid
    for heading in ("Rentals over time", "Cost breakdown", "Jobs", "Frontier", "Limits the plan runs into",
                    "Assumptions", "Contract checklist"):
        assert f"<h2>{heading}" in page
    assert page.count('class="bar mode-') == len(plan.allocations)
    assert page.count('<circle class="point') == len(FRONTIER)
    assert 'class="point current"' in page  # the report's own plan is the last frontier point
    assert "24,312,437 CNY" in page
    assert "replicas of TP4×PP2 (DP" in page and "62.7 of 80" in page
    assert "TP4×PP2×DP1" not in page  # the group alone reads as one copy of the model
    assert "redundancy" in page and "30%" in page
    assert "2026-12-02" in page and "illustrative" in page
    assert re.search(r"Rent up to [\d,]+ .* GPUs at once", page)   # a peak, not the total rented
    assert " 1 nodes " not in page


def test_checklist_per_vendor_with_what_the_catalog_knows(page):
    checklist = page.split("<h2>Contract checklist</h2>", 1)[1]
    assert checklist.count('<h3 class="vendor">') == 1 and "21vianet" in checklist
    for words in ("storage and bandwidth", "stopped-but-kept", "Fault compensation", "95%", "export"):
        assert words in checklist
    assert "guaranteed 95%" in checklist                      # perf_guarantee_pct of the 21vianet offers
    assert "850 CNY/TB-month" in checklist                    # storage at Shunyi, from the catalog
    assert '<span class="ask">ask</span>' in checklist        # stop fee and fault compensation are unknown


def test_no_network_reference(page):
    """Only plain-text URLs (catalog sources) may appear: nothing the browser would fetch."""
    assert not re.search(r"<(script|link|img|iframe|object|embed|audio|video|source)\b", page, re.IGNORECASE)
    assert not re.search(r"""\b(src|href|xlink:href|action|data)\s*=\s*["']?\s*(https?:)?//""", page, re.IGNORECASE)
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", page, re.IGNORECASE)
    assert not re.search(r"@import", page, re.IGNORECASE)
    assert "default-src 'none'" in page  # the CSP forbids any fetch even if one slipped in


def test_user_text_is_escaped(hybrid):
    plan, problem, catalog = hybrid
    evil = '<script>alert("x")</script>'
    page = render_html(plan.model_copy(update={"problem": evil}), problem, catalog,
                       frontier=[(217, 1.0, evil)])
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_discount_drawn_left_of_zero(page):
    costs = page.split('<svg id="costs"', 1)[1].split("</svg>", 1)[0]
    assert 'class="bar negative" data-part="volume_discount"' in costs
    assert costs.count('<rect class="bar') == 6


def test_plan_without_frontier_and_another_problem():
    problem, catalog = load_problem(SEED)
    plan = solve_problem(problem, catalog)
    page = render_html(plan, problem, catalog)
    assert 'id="gantt"' in page and 'id="costs"' in page and 'id="frontier"' not in page
    # the job's own MFU (0.40) cites the problem file, not the A100 datasheet the GPU row cites
    mfu_table = page.split('class="mfu"', 1)[1].split("</table>", 1)[0]
    assert "40%" in mfu_table and "the problem file" in mfu_table
    assert catalog.gpus["A100-80G"].source not in mfu_table


def test_write_refuses_to_overwrite(tmp_path, hybrid):
    plan, problem, catalog = hybrid
    path = write_html(tmp_path / "plan.html", plan, problem, catalog)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    from solver.errors import ProblemError
    with pytest.raises(ProblemError, match="already exists"):
        write_html(path, plan, problem, catalog, option="--html")
    write_html(path, plan, problem, catalog, force=True)
    with pytest.raises(ProblemError, match="folder does not exist"):
        check_html_path(tmp_path / "missing" / "plan.html")


def test_nice_ticks():
    assert nice_ticks(0, 10) == [0, 2, 4, 6, 8, 10]
    ticks = nice_ticks(24.7e6, 35.8e6, 6)
    assert ticks[0] <= 24.7e6 and ticks[-1] >= 35.8e6 and len(ticks) <= 8


def test_cli_report(tmp_path):
    out = tmp_path / "plan.html"

    def run(*extra):
        return subprocess.run([sys.executable, "-m", "solver.cli", "report", str(HYBRID), "-o", str(out), *extra],
                              capture_output=True, text=True, timeout=HANG_SECONDS, cwd=ROOT)

    first = run("--frontier-points", "3")
    assert first.returncode == 0, first.stderr
    assert "wrote" in first.stdout and "24,312,437 CNY" in first.stdout
    text = out.read_text(encoding="utf-8")
    assert 'id="frontier"' in text and 'class="point' in text
    again = run()
    assert again.returncode == 2 and "already exists" in again.stderr and "--force" in again.stderr
    assert out.read_text(encoding="utf-8") == text
    assert run("--force").returncode == 0
    assert 'id="frontier"' not in out.read_text(encoding="utf-8")


# ----- in a real browser -----------------------------------------------------------------------------------
def _browser() -> tuple[str | None, str | None]:
    chromium = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    return chromium, shutil.which("chromedriver")


class Driver:
    """The few W3C WebDriver calls the test needs, over urllib."""

    def __init__(self, chromium: str, chromedriver: str, width: int = 1200, height: int = 3200) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen([chromedriver, f"--port={self.port}"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 15
        while True:
            try:
                if self._call("GET", "/status")["value"].get("ready"):
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            if time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError("chromedriver did not start")
            time.sleep(0.1)
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                f"--window-size={width},{height}", "--force-device-scale-factor=1"]
        caps = {"browserName": "chrome", "goog:chromeOptions": {"binary": chromium, "args": args},
                "goog:loggingPrefs": {"browser": "ALL"}}
        try:
            self.session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["value"]["sessionId"]
        except Exception:
            self.proc.kill()
            raise

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"{method} {path}: {exc.read().decode(errors='replace')[:500]}") from None

    def call(self, method: str, path: str, body: dict | None = None):
        return self._call(method, f"/session/{self.session}{path}", body)["value"]

    def open(self, url: str) -> None:
        self.call("POST", "/url", {"url": url})

    def run(self, script: str):
        return self.call("POST", "/execute/sync", {"script": script, "args": []})

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("GET", "/screenshot"))

    def console(self) -> list[dict]:
        return self.call("POST", "/se/log", {"type": "browser"})

    def quit(self) -> None:
        try:
            self._call("DELETE", f"/session/{self.session}")
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture(scope="module")
def driver():
    chromium, chromedriver = _browser()
    if not (chromium and chromedriver):
        if os.environ.get("CI"):
            pytest.fail("CI is set but chromium/chromedriver are missing: .ci/run must install them "
                        "(apt-get install -y chromium chromium-driver)")
        pytest.skip("chromium or chromedriver not installed (apt-get install chromium chromium-driver)")
    d = Driver(chromium, chromedriver)
    yield d
    d.quit()


MEASURE = """
const widths = sel => Array.from(document.querySelectorAll(sel)).map(e => e.getBoundingClientRect().width);
return {ready: document.readyState, gantt: widths('#gantt rect.bar'), costs: widths('#costs rect.bar'),
        points: widths('#frontier circle.point'), chart_width: widths('svg#gantt')[0] || 0,
        rows: document.querySelectorAll('table.jobs tbody tr').length,
        vendors: document.querySelectorAll('h3.vendor').length};
"""


def test_report_in_headless_chromium(driver, page, hybrid, tmp_path):
    plan, _, _ = hybrid
    path = tmp_path / "plan.html"
    path.write_text(page, encoding="utf-8")
    driver.console()  # drop anything logged before this page
    driver.open(path.as_uri())
    drawn = driver.run(MEASURE)
    assert drawn["ready"] == "complete"
    assert drawn["chart_width"] > 500
    assert len(drawn["gantt"]) == len(plan.allocations) and min(drawn["gantt"]) > 0
    assert len(drawn["costs"]) == 6 and min(drawn["costs"]) > 0
    assert max(drawn["gantt"]) > 100 and max(drawn["costs"]) > 100  # scaled to the page, not collapsed
    assert len(drawn["points"]) == len(FRONTIER) and min(drawn["points"]) > 0
    assert drawn["rows"] == len(plan.jobs) and drawn["vendors"] == 1

    png = driver.screenshot()
    shot = tmp_path / "plan.png"
    shot.write_bytes(png)
    import matplotlib.image as mpimg
    pixels = mpimg.imread(io.BytesIO(png), format="png")
    assert pixels.shape[0] > 1000 and pixels.shape[1] >= 1000
    colours = {tuple(px) for px in (pixels[::7, ::7, :3] * 255).astype(int).reshape(-1, 3).tolist()}
    assert len(colours) > 20, "the screenshot is (nearly) one colour"
    bar_colours = {(0x4e, 0x79, 0xa7), (0x59, 0xa1, 0x4f), (0xe1, 0x57, 0x59)}  # cost bar, monthly, hosted
    rgb = (pixels[:, :, :3] * 255).round().astype(int)
    for colour in bar_colours:
        assert ((rgb == colour).all(axis=2)).sum() > 200, f"no bar drawn in colour {colour}"

    errors = [e for e in driver.console() if e.get("level") == "SEVERE"]
    assert not errors, errors


def test_console_errors_are_caught(driver, tmp_path):
    """The console check above can fail: a page that logs an error is seen."""
    probe = tmp_path / "probe.html"
    probe.write_text("<!DOCTYPE html><title>probe</title><script>console.error('probe-error')</script>",
                     encoding="utf-8")
    driver.console()
    driver.open(probe.as_uri())
    seen: list[dict] = []
    for _ in range(50):  # the browser hands its log over when it has it: on a loaded machine, a moment later
        seen += driver.console()
        if any("probe-error" in e.get("message", "") for e in seen):
            break
        time.sleep(0.1)
    assert any("probe-error" in e.get("message", "") for e in seen)


@pytest.fixture(scope="module")
def dated(hybrid):
    """The hybrid plan as if the problem started on 20 January 2027 (the same schedule, its cash flow by month)."""
    from datetime import date

    from solver.model.ledger import cash_flow
    plan, problem, catalog = hybrid
    problem = problem.model_copy(update={"start_date": date(2027, 1, 20)})
    flow = cash_flow(plan.allocations, plan.schedule.assignments, problem, catalog, plan.schedule.period_days)
    return plan.model_copy(update={"start_date": problem.start_date, "cash_flow": flow}), problem, catalog


def test_dates_cash_flow_idle_and_job_rentals_in_the_page(dated, hybrid):
    plan, problem, catalog = dated
    page = render_html(plan, problem, catalog)
    gantt = page.split('<svg id="gantt"', 1)[1].split("</svg>", 1)[0]
    ticks = re.findall(r'<text class="tick muted"[^>]*>([^<]+)</text>', gantt)
    assert ticks[:3] == ["2027-02", "2027-03", "2027-04"] and "2028-01" in ticks   # the yearly term's end
    assert "2027-01-30 – 2028-01-29" in page                                          # the yearly contract's days
    assert "finishes on 2027-08-24" in page
    cash = page.split('<table id="cash-flow"', 1)[1].split("</table>", 1)[0]
    assert cash.count("<tr>") == 1 + 13 + 1                                           # head, Jan 2027–Jan 2028, total
    assert "<strong>24,312,437</strong>" in cash and "per month of term" in page
    idle = page.split('class="idle"', 1)[1].split("</table>", 1)[0]
    assert "3,525,775" in idle and "15,200" in idle                                   # the yearly overhang
    assert 'class="job-rentals"' in page and "pretrain-30b" in page
    undated = render_html(*hybrid)
    assert "day from the plan&#x27;s start" in undated and "2027-02" not in undated and "days 0–29" not in undated
    assert ">30–59<" in undated                                                        # 30-day blocks instead


DATED = """
const box = e => e.getBoundingClientRect();
const ticks = Array.from(document.querySelectorAll('#gantt text.tick')).map(e => [e.textContent, box(e).left, box(e).right]);
const cash = document.querySelector('#cash-flow');
const style = getComputedStyle(cash);
return {ticks: ticks, cash_h: box(cash).height, cash_w: box(cash).width, cash_rows: cash.querySelectorAll('tr').length,
        visible: style.display !== 'none' && style.visibility !== 'hidden',
        total: cash.querySelector('tbody tr:last-child').textContent};
"""


def test_dated_report_in_headless_chromium(driver, dated, tmp_path):
    """Dates on the Gantt axis, not overlapping, and the cash-flow table drawn with its totals row."""
    plan, problem, catalog = dated
    path = tmp_path / "dated.html"
    path.write_text(render_html(plan, problem, catalog), encoding="utf-8")
    driver.open(path.as_uri())
    got = driver.run(DATED)
    labels = [t[0] for t in got["ticks"]]
    assert labels[0] == "2027-02" and len(labels) >= 6
    for (_, _, right), (_, left, _) in zip(got["ticks"], got["ticks"][1:]):
        assert right <= left, f"date ticks overlap: {got['ticks']}"
    assert got["visible"] and got["cash_h"] > 200 and got["cash_w"] > 300 and got["cash_rows"] == 15
    assert "24,312,437" in got["total"]


# ---------------------------------------------------------------- frontier labels (issue 24 item 11)

CROWDED = [(30, 2.0e6, "a"), (31, 1.98e6, "b"), (32, 1.97e6, "c"), (60, 1.2e6, "d"), (61, 1.19e6, "e"),
           (90, 1.0e6, "f"), (91, 0.999e6, "g")]


def _labels(svg: str) -> tuple[dict, dict, tuple]:
    """Label boxes (as placed, from x/y and the size estimate), point centres, and the plot area."""
    from solver.report.charts import LABEL_CHAR_PX, LABEL_HEIGHT_PX
    from solver.report.labels import Box
    centres = {i: (float(x), float(y)) for i, (x, y) in
               enumerate(re.findall(r'<circle class="point[^"]*" cx="([\d.]+)" cy="([\d.]+)"', svg), 1)}
    boxes = {}
    for i, x, y, text in re.findall(r'<text class="point-label muted" data-point="(\d+)" x="([\d.]+)" '
                                     r'y="([\d.]+)" text-anchor="start">([^<]+)</text>', svg):
        x0, y1 = float(x), float(y) + 3
        boxes[int(i)] = Box(x0, y1 - LABEL_HEIGHT_PX, x0 + LABEL_CHAR_PX * len(html.unescape(text)), y1)
    (x0, y1), = re.findall(r'<line class="axis" x1="([\d.]+)" y1="([\d.]+)" x2="[\d.]+" y2="[\d.]+"/>'
                           r'<line class="axis"', svg)
    top = min(float(t) for t in re.findall(r'<line class="axis" x1="[\d.]+" y1="([\d.]+)"', svg))
    return boxes, centres, (float(x0), top, float(x0) + 0, float(y1))


@pytest.mark.parametrize("points", [FRONTIER, CROWDED], ids=["hybrid", "crowded"])
def test_frontier_labels_inside_the_axes_and_beside_their_own_point(points):
    import html as html_module  # noqa: F401 - the module-level html name is the report's

    from solver.report.charts import WIDTH, frontier_svg
    from solver.report.charts import frontier_points as as_points
    pts, x_label, y_label, _ = as_points(points, "CNY")
    pts[len(pts) // 2].knee = True
    svg = frontier_svg(pts, x_label, y_label, current=(pts[-1].x, pts[-1].y))
    boxes, centres, (left, top, _, bottom) = _labels(svg)
    assert sorted(boxes) == sorted(centres) == list(range(1, len(pts) + 1))
    right = WIDTH - 30
    for i, box in boxes.items():
        assert left < box.x0 and box.x1 <= right and top <= box.y0 and box.y1 < bottom, (i, box)   # no axis crossed
        own = box.distance(*centres[i])
        assert all(box.distance(*c) > own for j, c in centres.items() if j != i), f"label {i} nearer another point"
        assert not any(box.overlaps(other) for j, other in boxes.items() if j != i), f"label {i} overlaps"


LABEL_BOXES = """
const svg = document.querySelector('#frontier');
const axes = Array.from(svg.querySelectorAll('line.axis')).map(e => e.getBBox());
const labels = Array.from(svg.querySelectorAll('text.point-label')).map(e => {const b = e.getBBox();
  return [b.x, b.y, b.x + b.width, b.y + b.height];});
const points = Array.from(svg.querySelectorAll('circle.point')).map(e => [+e.getAttribute('cx'), +e.getAttribute('cy')]);
return {axes: axes.map(b => [b.x, b.y, b.x + b.width, b.y + b.height]), labels: labels, points: points};
"""


def test_frontier_labels_drawn_by_chromium_stay_inside_and_apart(driver, hybrid, tmp_path):
    """The browser's own text boxes (not the size estimate): inside the axes, apart, nearest their point."""
    from solver.report.labels import Box
    plan, problem, catalog = hybrid
    path = tmp_path / "crowded.html"
    path.write_text(render_html(plan, problem, catalog, frontier=CROWDED), encoding="utf-8")
    driver.open(path.as_uri())
    got = driver.run(LABEL_BOXES)
    (vx0, vy0, _, vy1), (_, _, hx1, _) = sorted(got["axes"], key=lambda b: b[2] - b[0])   # vertical, horizontal
    boxes = [Box(*b) for b in got["labels"]]
    assert len(boxes) == len(CROWDED) == len(got["points"])
    for i, box in enumerate(boxes):
        assert vx0 < box.x0 and box.x1 <= hx1 + 1 and vy0 - 1 <= box.y0 and box.y1 <= vy1, (i, box)
        own = box.distance(*got["points"][i])
        assert all(box.distance(*c) > own for j, c in enumerate(got["points"]) if j != i), i
        assert not any(box.overlaps(b) for j, b in enumerate(boxes) if j != i), i
