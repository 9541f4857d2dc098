"""Fuzzing every reader of outside files: mutated problems, catalogs, quote sheets, sacct exports
and SkyPilot price lists. Each case is accepted or refused with one ProblemError (exit 2 at the
CLI): never another exception (a traceback), and the input files stay byte-identical.

Cheap in the default run (no solving: the readers only, a few hundred cases in all); run
`python -m pytest -m fuzz tests/test_fuzz.py` for ≥ 2,000 cases, those through the CLI included
(exit 0, 1 or 2, no traceback).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.builders import ROOT

from solver.errors import ProblemError

BEIJING = ROOT / "catalogs" / "beijing-sample"
CLOUDS = ROOT / "catalogs" / "public-clouds-sample"
SEED = yaml.safe_load((ROOT / "problems" / "seed-13b-100b.yaml").read_text(encoding="utf-8"))

NASTY = st.one_of(
    st.sampled_from([1e308, -1e308, 1e18, -1, 0, 2**63, "1e308", "nan", "inf", "-inf", "", " ", None, True,
                     "=HYPERLINK(\"http://evil.example\",\"x\")", "@SUM(1)", "+1", "-1", "\x1b[2J", "\x1b]0;t\x07",
                     "a\x00b", "\u202eevil", "9" * 5000, "x" * 100_000, "9999-12-31", "2027-13-01", "0001-01-01",
                     [], {}, [[[[[]]]]], {"a": {"b": {"c": {}}}}, "!!python/object:os.system", "{", "[", "'"]),
    st.integers(min_value=-2**70, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)


def digest(*folders: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for folder in folders for p in sorted(folder.rglob("*"))
            if p.is_file()}


def accepted_or_refused(action) -> None:
    """The action returns, or raises ProblemError (its message renders); nothing else."""
    try:
        action()
    except ProblemError as exc:
        assert exc.render()


def paths(data, prefix=()) -> list[tuple]:
    """Every key path into nested dicts and lists."""
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out += paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += paths(v, (*prefix, i))
    return out


def mutate(data, path: tuple, value, delete: bool):
    data = yaml.safe_load(yaml.safe_dump(data))   # a deep copy
    if not path:
        return value
    node = data
    for part in path[:-1]:
        node = node[part]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


# ------------------------------------------------------------------ problems

def problem_case(tmp_path: Path, data) -> None:
    from solver.load import load_problem

    folder = tmp_path / "case"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    if isinstance(data, dict) and "catalog" in data and data["catalog"] == SEED["catalog"]:
        data = {**data, "catalog": BEIJING.as_posix()}
    path = folder / "p.yaml"
    try:
        text = yaml.safe_dump(data, allow_unicode=True)
    except (yaml.YAMLError, RecursionError):
        return   # not expressible as YAML: nothing to read
    path.write_text(text, encoding="utf-8")
    before = digest(folder, BEIJING)
    accepted_or_refused(lambda: load_problem(path))
    assert digest(folder, BEIJING) == before


PROBLEM_PATHS = [p for p in paths(SEED) if p]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(PROBLEM_PATHS), value=NASTY, delete=st.booleans())
def test_a_mutated_problem_loads_or_is_refused(tmp_path_factory, path, value, delete):
    problem_case(tmp_path_factory.mktemp("p"), mutate(SEED, path, value, delete))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(cut=st.integers(min_value=0, max_value=2000), junk=st.binary(max_size=20))
def test_a_problem_file_cut_or_with_junk_bytes_is_refused_cleanly(tmp_path_factory, cut, junk):
    from solver.load import load_problem

    text = (ROOT / "problems" / "seed-13b-100b.yaml").read_bytes().replace(b"../catalogs/", BEIJING.parent.as_posix()
                                                                          .encode() + b"/")
    folder = tmp_path_factory.mktemp("cut")
    path = folder / "p.yaml"
    path.write_bytes(text[:cut] + junk + text[cut:])
    before = digest(folder)
    accepted_or_refused(lambda: load_problem(path))
    assert digest(folder) == before


# ------------------------------------------------------------------ catalogs

def catalog_rows(name: str) -> list[dict[str, str]]:
    import csv

    with open(BEIJING / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def write_rows(path: Path, rows: list[dict]) -> None:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


TABLES = {name: catalog_rows(name) for name in ("gpus.csv", "datacenters.csv", "offers.csv")}
CELL = st.one_of(NASTY.map(lambda v: "" if v is None else str(v)[:5000]), st.text(max_size=30))


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=st.sampled_from(sorted(TABLES)), row=st.integers(0, 100), data=st.data(), cell=CELL)
def test_a_mutated_catalog_loads_or_is_refused(tmp_path_factory, table, row, data, cell):
    from solver.load import load_catalog

    folder = tmp_path_factory.mktemp("cat")
    for name in TABLES:
        shutil.copy(BEIJING / name, folder / name)
    rows = [dict(r) for r in TABLES[table]]
    column = data.draw(st.sampled_from(sorted(rows[0])))
    rows[row % len(rows)][column] = cell
    write_rows(folder / table, rows)
    before = digest(folder)
    accepted_or_refused(lambda: load_catalog(folder))
    assert digest(folder) == before


# ------------------------------------------------------------------ quote sheets, sacct, SkyPilot

@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(column=st.sampled_from(sorted(TABLES["offers.csv"][0])), cell=CELL)
def test_a_mutated_quote_sheet_is_read_or_refused(tmp_path_factory, column, cell):
    from solver.load import load_catalog
    from solver.ingest.quotes import read_quotes

    catalog = load_catalog(BEIJING)
    folder = tmp_path_factory.mktemp("q")
    rows = [dict(r) for r in TABLES["offers.csv"][:3]]
    rows[1][column] = cell
    write_rows(folder / "q.csv", rows)
    before = digest(folder)
    accepted_or_refused(lambda: read_quotes(folder / "q.csv", catalog.gpus, catalog.datacenters))
    assert digest(folder) == before


SACCT = (ROOT / "tests" / "data" / "sacct-shared-rack.txt").read_text(encoding="utf-8").splitlines()


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(line=st.integers(0, len(SACCT) - 1), field=st.integers(0, 9), cell=CELL)
def test_a_mutated_sacct_export_is_read_or_refused(tmp_path_factory, line, field, cell):
    from solver.tools.billing import read_sacct

    lines = list(SACCT)
    parts = lines[line].split("|")
    parts[field % len(parts)] = cell.replace("\n", " ")
    lines[line] = "|".join(parts)
    folder = tmp_path_factory.mktemp("s")
    (folder / "sacct.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = digest(folder)
    accepted_or_refused(lambda: read_sacct(folder / "sacct.txt"))
    assert digest(folder) == before


LAMBDA = (CLOUDS / "skypilot-v7" / "lambda" / "vms.csv").read_text(encoding="utf-8").splitlines()


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(line=st.integers(0, min(len(LAMBDA), 12) - 1), field=st.integers(0, 8), cell=CELL)
def test_a_mutated_skypilot_list_is_imported_or_refused_whole(tmp_path_factory, line, field, cell):
    import csv
    import io

    from solver.ingest.skypilot import import_skypilot

    rows = list(csv.reader(io.StringIO("\n".join(LAMBDA[:12]))))
    rows[line][field % len(rows[line])] = cell
    folder = tmp_path_factory.mktemp("sky")
    (folder / "v7" / "lambda").mkdir(parents=True)
    with open(folder / "v7" / "lambda" / "vms.csv", "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    into = folder / "cat"
    shutil.copytree(BEIJING, into)
    shutil.copy(CLOUDS / "gpus.csv", into)
    inputs, catalog_before = digest(folder / "v7"), digest(into)
    try:
        import_skypilot(folder / "v7", into, clouds=["lambda"])
    except ProblemError as exc:
        assert exc.render() and digest(into) == catalog_before   # refused: nothing written
    assert digest(folder / "v7") == inputs


# ------------------------------------------------------------------ the fuzz marker: many more, and the CLI

@pytest.mark.fuzz
@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(PROBLEM_PATHS), value=NASTY, delete=st.booleans())
def test_fuzz_many_mutated_problems(tmp_path_factory, path, value, delete):
    problem_case(tmp_path_factory.mktemp("p"), mutate(SEED, path, value, delete))


@pytest.mark.fuzz
@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(table=st.sampled_from(sorted(TABLES)), row=st.integers(0, 100), data=st.data(), cell=CELL)
def test_fuzz_many_mutated_catalogs(tmp_path_factory, table, row, data, cell):
    test_a_mutated_catalog_loads_or_is_refused.hypothesis.inner_test(tmp_path_factory, table, row, data, cell)


@pytest.mark.fuzz
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(PROBLEM_PATHS), value=NASTY, delete=st.booleans())
def test_fuzz_the_cli_exits_0_1_or_2_without_a_traceback(tmp_path_factory, path, value, delete):
    """Through `gpuplan solve` (tiny time limit): exit 0, 1 or 2, no traceback, inputs unchanged."""
    from typer.testing import CliRunner

    from solver.cli import app

    data = mutate(SEED, path, value, delete)
    if isinstance(data, dict) and data.get("catalog") == SEED["catalog"]:
        data = {**data, "catalog": BEIJING.as_posix()}
    try:
        text = yaml.safe_dump(data, allow_unicode=True)
    except (yaml.YAMLError, RecursionError):
        return
    folder = tmp_path_factory.mktemp("cli")
    (folder / "p.yaml").write_text(text, encoding="utf-8")
    before = digest(folder, BEIJING)
    run = CliRunner().invoke(app, ["solve", str(folder / "p.yaml"), "--time-limit", "5", "--json"])
    assert run.exit_code in (0, 1, 2), (run.exit_code, run.output[-2000:], repr(run.exception))
    assert run.exception is None or isinstance(run.exception, SystemExit), repr(run.exception)
    assert digest(folder, BEIJING) == before
