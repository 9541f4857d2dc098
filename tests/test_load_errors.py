"""Bad input end to end: every case exits 2 with one message naming the file and the key,
and no traceback (docs/ARCHITECTURE.md, exit codes: 2 = bad input, one clear message).

Problem fixtures are tests/data/bad/*.yaml (the seed with one line changed, marked BAD).
Broken catalogs are copies of catalogs/beijing-sample in a tmp folder with one cell edited.

Every case is a real `python -m solver.cli` subprocess; they are started together by one
module fixture (a thread pool) because each costs ~0.7 s of imports, then checked one by one.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import pytest
from tests.builders import DATA, HANG_SECONDS, ROOT

CATALOG = ROOT / "catalogs" / "beijing-sample"
SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"
BAD = DATA / "bad"
OFFER = "bce-yz-a100-80-8x-hourly"          # line 4 of offers.csv (header is line 1), "row 4" in messages


def gpuplan(*args, columns: str | None = "1000") -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    if columns:
        env["COLUMNS"] = columns                  # wide: rich must not wrap the message
    return subprocess.run([sys.executable, "-m", "solver.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=HANG_SECONDS, cwd=ROOT, env=env)


# --- editing a catalog copy -----------------------------------------------------------------

def copy_catalog(tmp: Path) -> Path:
    folder = tmp / "beijing-sample"
    shutil.copytree(CATALOG, folder)
    return folder


def edit_cell(table: Path, key: str, column: str, value: str) -> None:
    """Set one cell (row found by its first column) and write the table back."""
    with open(table, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index(column)
    hits = [r for r in rows[1:] if r[0] == key]
    assert len(hits) == 1, key
    hits[0][col] = value
    with open(table, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


def drop_column(table: Path, column: str) -> None:
    with open(table, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index(column)
    with open(table, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([r[:col] + r[col + 1:] for r in rows])


def edit_lines(table: Path, change: Callable[[list[str]], list[str]]) -> None:
    lines = table.read_text(encoding="utf-8").splitlines()
    table.write_text("\n".join(change(lines)) + "\n", encoding="utf-8")


# --- the cases: build(tmp) -> (argv, strings the stderr message must contain) ---------------

def problem_case(fixture: str, *needles: str):
    def build(tmp: Path):
        path = BAD / fixture
        assert path.is_file(), path
        return ["solve", path, "--json"], [str(path), *needles]
    return build


def validate_case(edit: Callable[[Path], None], table: str, *needles: str):
    def build(tmp: Path):
        folder = copy_catalog(tmp)
        edit(folder)
        return ["catalog", "validate", folder], [str(folder / table), *needles]
    return build


def _extra_cells(lines):
    assert lines[3].startswith(OFFER + ",")
    lines[3] += ",stray,cells"                    # line 4 now has two fields too many
    return lines


def _extra_column(lines):
    return [lines[0] + ",colour"] + [ln + ",red" for ln in lines[1:]]


def _missing_file(tmp: Path):
    path = tmp / "no-such-problem.yaml"
    return ["solve", path, "--json"], [str(path), "not found"]


def _not_a_mapping(tmp: Path):
    path = tmp / "list.yaml"
    path.write_text("- just\n- a list\n", encoding="utf-8")
    return ["solve", path, "--json"], [str(path), "mapping"]


def _duplicate_key(tmp: Path):
    """PyYAML keeps the last of two equal keys; the loader refuses rather than drop the first."""
    text = SEED.read_text(encoding="utf-8").replace("catalog: ../catalogs/beijing-sample", f"catalog: {CATALOG}")
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip() == "deadline_days: 30")
    lines.insert(at + 1, "    deadline_days: 20")
    path = tmp / "twice.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["solve", path, "--json"], [str(path), f"deadline_days (line {at + 2})", "written twice",
                                       f"also on line {at + 1}"]


def _duplicate_key_in_flow_mapping(tmp: Path):
    path = tmp / "flow.yaml"
    path.write_text(SEED.read_text(encoding="utf-8").replace("layers: 32,", "layers: 32, layers: 40,"),
                    encoding="utf-8")
    return ["solve", path, "--json"], [str(path), "layers (line", "written twice", "on the same line"]


def _duplicate_job_names(tmp: Path):
    import yaml

    data = yaml.safe_load(SEED.read_text(encoding="utf-8"))
    data["jobs"].append(dict(data["jobs"][0]))
    data["catalog"] = str((SEED.parent / data["catalog"]).resolve())
    path = tmp / "twice.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return ["solve", path, "--json"], [str(path), "job names must be unique", "pretrain-7b", "rename one"]


def _problem_is_a_folder(tmp: Path):
    (tmp / "plan-a.yaml").write_text(SEED.read_text(encoding="utf-8"), encoding="utf-8")
    return ["solve", tmp, "--json"], [str(tmp), "is a folder", "problem file (YAML) is expected", "plan-a.yaml"]


def _seed_text() -> str:
    return SEED.read_text(encoding="utf-8").replace("catalog: ../catalogs/beijing-sample", f"catalog: {CATALOG}")


def _seed_with(tmp: Path, old: str, new: str, *needles: str):
    """The seed problem with one value changed (pydantic would have read `true` as 1.0 and let
    `.inf` through to the estimator's traceback)."""
    text = _seed_text()
    assert old in text, old
    path = tmp / "edited.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return ["solve", path, "--json"], [str(path), *needles]


def _no_jobs(tmp: Path):
    path = tmp / "empty.yaml"
    path.write_text(f"name: empty\ncatalog: {CATALOG}\nhorizon_days: 30\njobs: []\n", encoding="utf-8")
    return ["solve", path, "--json"], [str(path), ": jobs:", "at least 1 item", "Fix: give at least 1 item"]


def _encoded(tmp: Path, encoding: str, *needles: str):
    """The seed problem with a Chinese comment, saved as a Chinese Windows editor would."""
    path = tmp / "gbk.yaml"
    path.write_bytes(("# 训练计划（北京）\n" + _seed_text()).encode(encoding))
    return ["solve", path, "--json"], [str(path), *needles]


def _grid_in_gbk(tmp: Path):
    path = tmp / "grid.yaml"
    path.write_bytes("# 截止日期\ngrid:\n  jobs[*].deadline_days: [20, 30]\n".encode("gbk"))
    return ["sweep", SEED, "--grid", path], [str(path), "not UTF-8 text"]


def _solve_with_broken_catalog(tmp: Path):
    """The problem is fine, its catalog is not: `solve` names the catalog's offers.csv."""
    folder = copy_catalog(tmp)
    edit_cell(folder / "offers.csv", OFFER, "gpu", "B300-288G")
    problem = tmp / "problem.yaml"
    problem.write_text(SEED.read_text(encoding="utf-8").replace(
        "catalog: ../catalogs/beijing-sample", "catalog: beijing-sample"), encoding="utf-8")
    return ["solve", problem, "--json"], [str(folder.resolve() / "offers.csv"), f"offer {OFFER}.gpu"]


CASES: dict[str, Callable] = {
    # problem files
    "yaml-bad-indentation": problem_case("bad-indentation.yaml", "not valid YAML", "line 10"),
    "unknown-top-level-key": problem_case("unknown-top-key.yaml", ": budgett:", "unknown key"),
    "unknown-job-key": problem_case("unknown-job-key.yaml", ": jobs[0].gpus_wanted:", "unknown key"),
    "tokens-wrong-type": problem_case("tokens-not-a-number.yaml", ": jobs[0].tokens:", "'lots'",
                                      "Fix: write a plain number without units"),
    "tokens-negative": problem_case("tokens-negative.yaml", ": jobs[0].tokens:", "greater than 0",
                                    "Fix: use a value above 0"),
    "horizon-zero": problem_case("horizon-zero.yaml", ": horizon_days:", "greater than 0", "Fix: use a value above 0"),
    "deadline-past-horizon": problem_case("deadline-past-horizon.yaml", "deadline_days 45", "horizon_days 30",
                                          "'pretrain-7b'"),
    "restrict-unknown-gpu": problem_case("restrict-unknown-gpu.yaml", ": restrict.gpus[0]:", "'B300-288G'",
                                         "A100-80G"),
    "missing-catalog-folder": problem_case("missing-catalog.yaml", ": catalog:", "no-such-catalog"),
    "missing-problem-file": _missing_file,
    "duplicate-job-names": _duplicate_job_names,
    "problem-not-a-mapping": _not_a_mapping,
    "duplicate-key": _duplicate_key,
    "duplicate-key-in-flow-mapping": _duplicate_key_in_flow_mapping,
    "problem-is-a-folder": _problem_is_a_folder,
    # catalogs
    "csv-row-too-long": validate_case(lambda f: edit_lines(f / "offers.csv", _extra_cells), "offers.csv",
                                      "not a readable CSV", "line 4"),
    "offers-unknown-column": validate_case(lambda f: edit_lines(f / "offers.csv", _extra_column), "offers.csv",
                                           ": colour:", "unknown column 'colour'", "allowed columns"),
    "offer-unknown-gpu": validate_case(lambda f: edit_cell(f / "offers.csv", OFFER, "gpu", "B300-288G"),
                                       "offers.csv", f": offer {OFFER}.gpu:", "'B300-288G'", "A100-80G"),
    "offer-unknown-datacenter": validate_case(
        lambda f: edit_cell(f / "offers.csv", OFFER, "datacenter", "Chaoyang"),
        "offers.csv", f": offer {OFFER}.datacenter:", "'Chaoyang'", "Yizhuang"),
    "offer-negative-price": validate_case(lambda f: edit_cell(f / "offers.csv", OFFER, "price", "-112"),
                                          "offers.csv", f"row 4 ({OFFER}), column price", "'-112'"),
    "offers-missing-required-column": validate_case(lambda f: drop_column(f / "offers.csv", "price_unit"),
                                                    "offers.csv", ": price_unit:", "missing column 'price_unit'"),
    "hourly-offer-with-a-minimum-term": validate_case(
        lambda f: edit_cell(f / "offers.csv", OFFER, "min_term_days", "7"),
        "offers.csv", f"row 4 ({OFFER})", "min_term_days 7 on an hourly offer", "write 0"),
    "datacenters-file-missing": validate_case(lambda f: (f / "datacenters.csv").unlink(), "datacenters.csv",
                                              "not found"),
    "solve-with-broken-catalog": _solve_with_broken_catalog,
    "offer-interconnect-twice": validate_case(
        lambda f: (edit_cell(f / "offers.csv", OFFER, "interconnect", "roce|roce"),
                   edit_cell(f / "offers.csv", OFFER, "interconnect_price", "6|1")),
        "offers.csv", f"row 4 ({OFFER})", "interconnect names roce more than once"),
    "problem-in-gbk": lambda tmp: _encoded(tmp, "gbk", "not UTF-8 text", "save the file as UTF-8"),
    "grid-in-gbk": _grid_in_gbk,
    "tokens-infinite": lambda tmp: _seed_with(tmp, "tokens: 200e9", "tokens: .inf", ": jobs[0].tokens:",
                                              "finite number"),
    "hidden-not-a-multiple-of-heads": lambda tmp: _seed_with(tmp, "hidden: 4096", "hidden: 4095", ": jobs[0].model:",
                                                             "hidden 4095 is not a multiple of heads 32"),
    "period-longer-than-horizon": lambda tmp: _seed_with(tmp, "horizon_days: 30", "horizon_days: 30\nperiod_days: 31",
                                                         "period_days 31 is longer than horizon_days 30"),
    "redundancy-a-boolean": lambda tmp: _seed_with(tmp, "redundancy: 0.30", "redundancy: true",
                                                   "redundancy: true is not a number"),
    "start-date-that-does-not-exist": lambda tmp: _seed_with(tmp, "horizon_days: 30", "start_date: 2027-13-01\nhorizon_days: 30",
                                                             "a date that does not exist", "YYYY-MM-DD"),
    "start-date-not-a-date": lambda tmp: _seed_with(tmp, "horizon_days: 30", "start_date: soon\nhorizon_days: 30",
                                                    ": start_date:", "valid date"),
    # a reviewer's cases that had no "Fix:" (or a fix that did not fit)
    "no-jobs": lambda tmp: _no_jobs(tmp),
    "horizon-with-a-suffix": lambda tmp: _seed_with(tmp, "horizon_days: 30", "horizon_days: 30k",
                                                    ": horizon_days:", "'30k'", "not 60k"),
    "offer-price-unit-typo": validate_case(lambda f: edit_cell(f / "offers.csv", OFFER, "price_unit", "cny_per_gpu_hr"),
                                           "offers.csv", f"row 4 ({OFFER}), column price_unit", "'cny_per_gpu_hour'",
                                           "Fix: use one of the values listed"),
    "offer-billing-on-hourly": validate_case(lambda f: edit_cell(f / "offers.csv", OFFER, "billing", "upfront"),
                                             "offers.csv", f"{OFFER}", "billing upfront on an hourly offer",
                                             "leave billing blank"),
    "offer-billing-unknown": validate_case(lambda f: edit_cell(f / "offers.csv", "vnet-yz-a100-80-8x-monthly",
                                                               "billing", "quarterly"),
                                           "offers.csv", "column billing", "'monthly'", "'upfront'"),
    "offer-interconnect-prices-short": validate_case(
        lambda f: edit_cell(f / "offers.csv", OFFER, "interconnect_price", "12|6"),
        "offers.csv", f"row 4 ({OFFER})", "2 for 3 (ib_hdr|roce|ethernet)", "one price per option"),
}


def _control(tmp: Path):
    """The copy itself (rewritten by the csv module) is fine, so each failure comes from its edit."""
    folder = copy_catalog(tmp)
    edit_cell(folder / "offers.csv", OFFER, "price", "112")      # same value, file rewritten
    return ["catalog", "validate", folder], {}


def _long_path(tmp: Path):
    folder = tmp / ("a-long-folder-name-as-ci-workspaces-have-" * 2) / "beijing-sample"
    shutil.copytree(CATALOG, folder)
    edit_cell(folder / "offers.csv", OFFER, "gpu", "B300-288G")
    return ["catalog", "validate", folder], {"columns": None, "path": str(folder / "offers.csv")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, list[str]]]:
    jobs = {}
    for name, build in CASES.items():
        argv, needles = build(tmp_path_factory.mktemp(name))
        jobs[name] = (argv, {}, needles)
    for name, build in (("control", _control), ("long-path", _long_path)):
        argv, extra = build(tmp_path_factory.mktemp(name))
        jobs[name] = (argv, extra, [])
    with ThreadPoolExecutor(max_workers=max(2, min(6, (os.cpu_count() or 2) + 1))) as pool:
        futures = {name: pool.submit(gpuplan, *argv, **{k: v for k, v in extra.items() if k == "columns"})
                   for name, (argv, extra, _) in jobs.items()}
        return {name: (fut.result(), jobs[name][2], jobs[name][1]) for name, fut in futures.items()}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input(runs, case):
    run, needles, _ = runs[case]
    assert "Traceback" not in run.stdout + run.stderr, run.stderr
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    assert run.stdout.strip() == ""                              # no partial JSON
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr                           # one message (wide terminal: one line)
    assert lines[0].startswith("error: "), run.stderr
    for needle in needles:
        assert needle in run.stderr, f"{needle!r} not in {run.stderr!r}"


def test_untouched_catalog_copy_validates(runs):
    run, _, _ = runs["control"]
    assert run.returncode == 0, run.stderr
    assert "ok" in run.stdout


def test_bad_problem_fixtures_differ_from_seed_by_one_defect():
    """Guard: each fixture is the seed with only its BAD line changed (catalog path aside)."""
    def body(path):
        return [ln for ln in path.read_text(encoding="utf-8").splitlines()
                if not ln.startswith("#") and not (ln.startswith("catalog:") and "BAD" not in ln)]
    seed = body(SEED)
    fixtures = sorted(BAD.glob("*.yaml"))
    assert len(fixtures) >= 9
    for path in fixtures:
        lines = body(path)
        changed = [ln for ln in lines if ln not in seed]
        assert len(changed) == 1 and "BAD" in changed[0], (path.name, changed)
        assert len(lines) - len(seed) in (0, 1), path.name


def test_long_path_is_not_broken_when_stderr_is_a_pipe(runs):
    """Regression: at rich's default 80 columns (stderr not a terminal) a long file path used
    to be folded mid-name across lines, so the message named no usable file."""
    run, _, extra = runs["long-path"]
    assert len(extra["path"]) > 80
    assert run.returncode == 2, run.stderr
    assert extra["path"] in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_a_problem_saved_as_unicode_with_a_byte_order_mark_loads(tmp_path, encoding):
    """What Windows Notepad saves as "Unicode" (UTF-16 with a BOM) or "UTF-8 with BOM" is read,
    Chinese comment and all, as the same problem."""
    from solver.load import load_problem

    path = tmp_path / "plan.yaml"
    path.write_bytes(("# 训练计划（北京）\n" + _seed_text()).encode(encoding))
    mine, seed = (load_problem(p)[0].model_dump(exclude={"catalog"}) for p in (path, SEED))
    assert mine == seed


def test_a_bad_byte_after_a_utf8_byte_order_mark_is_named_at_its_own_offset(tmp_path):
    """UTF-8-sig counts from after the BOM; the message counts from the file's first byte."""
    from solver.errors import ProblemError
    from solver.ingest.readers import read_text

    path = tmp_path / "p.yaml"
    path.write_bytes(b"\xef\xbb\xbfab\xffcd")
    with pytest.raises(ProblemError, match="byte 0xff at offset 5"):
        read_text(path)
