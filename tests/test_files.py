"""The one writer (solver.files): nothing a user had is lost, nothing is written through a link,
a write that cannot happen is exit 2 with the path and the cause, before any solving.

Items 1, 3, 4 and 8 of issue 35, each reproduced: `calibrate --in-place` truncated the problem
first; --html, --csv and the other outputs wrote over the target in place; a write error was a
traceback and exit 1; --html followed a dangling link and created its target elsewhere.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.builders import HANG_SECONDS, ROOT

from solver import files
from solver.errors import ProblemError
from solver.load import load_catalog

HYBRID = ROOT / "problems" / "seed-7b-200b-30d.yaml"   # solved in under a second: the writes are what is tested
SAMPLE = ROOT / "catalogs" / "beijing-sample"


def gpuplan(*args, preexec=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver.cli", "--quiet", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=HANG_SECONDS, preexec_fn=preexec)


def no_traceback(run: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in run.stderr and "Traceback" not in run.stdout, run.stderr


# ------------------------------------------------------------------ the writer itself

def test_a_failing_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old", encoding="utf-8")

    def half_then_fail(tmp: Path) -> None:
        tmp.write_text("new but cut", encoding="utf-8")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(ProblemError) as caught:
        files.save_atomic(target, half_then_fail)
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]
    text = caught.value.render()
    assert str(target) in text and "No space left" in text and "Fix:" in text


def test_a_written_file_gets_open_s_mode_and_replaces_a_link_not_its_target(tmp_path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("theirs", encoding="utf-8")
    link = tmp_path / "out.txt"
    link.symlink_to(elsewhere)
    files.write_text(link, "ours")
    assert not link.is_symlink() and link.read_text(encoding="utf-8") == "ours"
    assert elsewhere.read_text(encoding="utf-8") == "theirs"
    mask = os.umask(0)
    os.umask(mask)
    assert link.stat().st_mode & 0o777 == 0o666 & ~mask


def test_check_new_file_refuses_a_link_even_a_dangling_one(tmp_path):
    link = tmp_path / "r.html"
    link.symlink_to(tmp_path / "nowhere" / "x.html")
    with pytest.raises(ProblemError, match="symbolic link"):
        files.check_new_file(link, "--html", force=False, example="r.html")
    assert files.check_new_file(link, "--html", force=True, example="r.html") == link


def _file_checks():
    """Every check of a file a command writes, as (option, check(path, force), a good name)."""
    from solver.report.frontier_plot import check_plot_paths
    from solver.report.sweep import check_output
    from solver.report.tables import check_xlsx_target
    from solver.report.vendor_sheet import check_sheet
    return [("-o", lambda p, force: check_output(p, force=force), "sweep.csv"),
            ("--xlsx", lambda p, force: check_xlsx_target(p, force=force), "plan.xlsx"),
            ("--export-vendor", lambda p, force: check_sheet(p, force=force), "sheet.csv"),
            ("--html", lambda p, force: files.check_new_file(p, "--html", force=force, example="r.html"), "r.html"),
            ("--plot", lambda p, force: check_plot_paths(p.parent / p.stem, force=force)[0], "f.png")]


def _folder_checks():
    """Every check of a folder a command writes into, as (option, check(folder, force), a file it writes there)."""
    from solver.report.frontier_plans import check_plans_folder
    from solver.report.tables import check_csv_target
    return [("--csv", lambda p, force: check_csv_target(p, force=force), "allocations.csv"),
            ("--plans", lambda p, force: check_plans_folder(p, force=force), "point-01.json")]


def test_every_file_target_is_refused_in_one_wording(tmp_path):
    """Issue 44 item 3: six wordings of "this file exists" ("file exists; not overwritten", "file exists",
    "already exists", …); every writer now asks solver.files.check_new_file."""
    for option, check, name in _file_checks():
        place = tmp_path / option.strip("-")
        place.mkdir()
        with pytest.raises(ProblemError, match="folder does not exist") as missing:
            check(place / "no" / name, False)
        assert missing.value.key == option
        (place / name).write_text("mine", encoding="utf-8")
        with pytest.raises(ProblemError, match="already exists") as there:
            check(place / name, False)
        assert there.value.key == option and "--force" in there.value.fix
        assert check(place / name, True) == place / name
        link = place / f"link-{name}"
        link.symlink_to(place / name)
        with pytest.raises(ProblemError, match="symbolic link"):
            check(link, False)
        assert (place / name).read_text(encoding="utf-8") == "mine"


def test_every_folder_target_is_refused_in_one_wording(tmp_path):
    """--csv said "not a folder", "parent folder not found" and "… already there; nothing written"; --plans
    "is a file, not a folder" and two different "already there" (one in the command, one in the writer)."""
    for option, check, name in _folder_checks():
        place = tmp_path / option.strip("-")
        place.mkdir()
        assert check(place / "new", False) == place / "new" and not (place / "new").exists()  # made at the write
        with pytest.raises(ProblemError, match="folder does not exist") as missing:
            check(place / "no" / "such", False)
        assert missing.value.key == option and missing.value.file == str(place / "no")
        (place / "a-file").write_text("", encoding="utf-8")
        with pytest.raises(ProblemError, match="is not a folder"):
            check(place / "a-file", False)
        (place / "old").mkdir()
        (place / "old" / name).write_text("mine", encoding="utf-8")
        (place / "old" / "notes.txt").write_text("mine", encoding="utf-8")
        with pytest.raises(ProblemError, match="already exists") as there:
            check(place / "old", False)
        assert there.value.file == str(place / "old" / name) and "--force" in there.value.fix
        assert check(place / "old", True) == place / "old"


def test_check_new_folder_names_what_it_would_replace(tmp_path):
    (tmp_path / "a.csv").write_text("", encoding="utf-8")
    (tmp_path / "point-1.json").write_text("", encoding="utf-8")
    (tmp_path / "keep.txt").write_text("", encoding="utf-8")
    with pytest.raises(ProblemError, match=r"already exists \(and 1 more file it would replace\)") as caught:
        files.check_new_folder(tmp_path, "--x", force=False, names=["a.csv", "b.csv"], pattern="point-*.json")
    assert caught.value.file == str(tmp_path / "a.csv")
    assert files.check_new_folder(tmp_path, "--x", force=False, names=["b.csv"], pattern="plan-*.json") == tmp_path
    assert files.existing_in(tmp_path, ["a.csv", "b.csv"], "point-*.json") == [tmp_path / "a.csv",
                                                                               tmp_path / "point-1.json"]


def test_a_folder_that_cannot_be_written_is_found_by_the_check(tmp_path, monkeypatch):
    def denied(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(files.tempfile, "mkstemp", denied)
    with pytest.raises(ProblemError) as caught:
        files.check_new_file(tmp_path / "x.html", "--html", force=False, example="x.html")
    assert "Permission denied" in caught.value.render() and "--html" in caught.value.render()


def test_tables_replaced_together_are_all_new_after_a_kill_between_the_renames(tmp_path, monkeypatch):
    """A kill after the journal: the next load completes the swap (both new); before it: both old."""
    for name in ("a.csv", "b.csv"):
        (tmp_path / name).write_text(f"old {name}", encoding="utf-8")
    real = os.replace
    calls = []

    def killed_after_one(src, dst):
        if str(src).endswith(".staged"):
            calls.append(dst)
            if len(calls) == 2:
                raise KeyboardInterrupt   # stands for SIGKILL: nothing after this line runs
        return real(src, dst)

    monkeypatch.setattr(files.os, "replace", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        files.replace_together([(tmp_path / n, lambda tmp, n=n: tmp.write_text(f"new {n}", encoding="utf-8"))
                                for n in ("a.csv", "b.csv")], tmp_path)
    monkeypatch.setattr(files.os, "replace", real)
    assert (tmp_path / files.JOURNAL).exists()
    assert {(tmp_path / n).read_text(encoding="utf-8") for n in ("a.csv", "b.csv")} == {"new a.csv", "old b.csv"}
    assert files.finish_interrupted(tmp_path)
    assert [(tmp_path / n).read_text(encoding="utf-8") for n in ("a.csv", "b.csv")] == ["new a.csv", "new b.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]


def test_load_catalog_completes_an_interrupted_import(tmp_path):
    folder = tmp_path / "cat"
    shutil.copytree(SAMPLE, folder)
    new_offers = (SAMPLE / "offers.csv").read_text(encoding="utf-8").replace("21vianet", "21vianet-new")
    staged = folder / ".offers.csv.x.staged"
    staged.write_text(new_offers, encoding="utf-8")
    (folder / files.JOURNAL).write_text(f'[["{staged.name}", "offers.csv"]]', encoding="utf-8")
    cat = load_catalog(folder)
    assert any(o.vendor == "21vianet-new" for o in cat.offers.values())
    assert not (folder / files.JOURNAL).exists() and not staged.exists()


def test_csv_cells_that_a_spreadsheet_would_run_get_a_quote():
    for text in ("=HYPERLINK(\"http://evil.example\",\"click\")", "+1", "-cmd", "@SUM(A1)", "\tx", "\rx"):
        assert files.csv_cell(text) == "'" + text
    assert files.csv_cell("plain") == "plain" and files.csv_cell(-5) == -5 and files.csv_cell(None) is None


# ------------------------------------------------------------------ through the CLI

def test_calibrate_in_place_under_a_file_size_limit_keeps_the_problem_whole(tmp_path):
    """Item 1: under `prlimit --fsize` the problem was cut to the limit and still parsed."""
    import resource

    problem = tmp_path / "seed.yaml"
    problem.write_text((ROOT / "problems" / "seed-13b-100b.yaml").read_text(encoding="utf-8")
                       .replace("../catalogs/", str(ROOT / "catalogs") + "/"), encoding="utf-8")
    before = problem.read_bytes()
    limit = len(before) // 2

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    run = gpuplan("calibrate", "--gpu", "A100-80G", "--tokens-per-sec-per-gpu", 2000, "--problem", problem,
                  "--job", "pretrain-13b", "--write-problem", problem, "--in-place", preexec=small_files)
    no_traceback(run)
    assert run.returncode == 2, run.stderr
    assert str(problem) in run.stderr.replace("\n", "") and "too large" in run.stderr.lower()
    assert problem.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seed.yaml"]


def test_solve_html_refuses_a_dangling_link_and_with_force_replaces_it(tmp_path):
    """Item 8: the link's target was created elsewhere without --force, written through with it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    link = tmp_path / "r.html"
    link.symlink_to(outside / "made.html")
    run = gpuplan("solve", HYBRID, "--html", link)
    no_traceback(run)
    assert run.returncode == 2 and "symbolic link" in run.stderr and not (outside / "made.html").exists()
    (outside / "made.html").write_text("theirs", encoding="utf-8")
    assert gpuplan("solve", HYBRID, "--html", link, "--xlsx", tmp_path / "p.xlsx", "--force").returncode == 0
    assert not link.is_symlink() and "<html" in link.read_text(encoding="utf-8")
    assert (outside / "made.html").read_text(encoding="utf-8") == "theirs"


@pytest.mark.parametrize("option, name", [("--html", "p.html"), ("--xlsx", "p.xlsx"), ("--csv", "tables"),
                                          ("--export-mps", "m.mps")])
def test_an_unwritable_output_folder_is_exit_2_before_any_solve(tmp_path, monkeypatch, option, name):
    """Item 4: only the folder's existence was checked, so the whole solve ran first and the
    write ended in a traceback and exit 1 (read as "infeasible"). Root ignores permissions, so
    the folder's refusal is the probe's PermissionError."""
    from typer.testing import CliRunner

    import solver.commands.solve as solve_command
    from solver.cli import app

    def denied(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")

    def no_solve(*a, **k):
        raise AssertionError("solved before the output was checked")

    monkeypatch.setattr(files.tempfile, "mkstemp", denied)
    monkeypatch.setattr(solve_command, "_plan", no_solve)   # not solver.api's: a module imported meanwhile would keep the stub
    run = CliRunner().invoke(app, ["solve", str(HYBRID), option, str(tmp_path / name)])
    assert run.exit_code == 2, run.output
    assert "Permission denied" in run.output and option in run.output and "Fix:" in run.output


def test_a_write_error_after_the_solve_is_exit_2_with_the_cause(tmp_path):
    """A file-size limit the probe's empty file cannot meet: the late write fails, exit 2, no traceback."""
    import resource

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))

    run = gpuplan("solve", HYBRID, "--html", tmp_path / "p.html", preexec=small_files)
    no_traceback(run)
    assert run.returncode == 2 and "too large" in run.stderr.lower() and "Fix:" in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_failing_csv_write_leaves_the_old_tables(tmp_path):
    """Item 3: --csv wrote over each table in place (352 B of CSV left by a kill)."""
    import resource

    tables = tmp_path / "t"
    assert gpuplan("solve", HYBRID, "--csv", tables).returncode == 0
    before = {p.name: p.read_bytes() for p in tables.iterdir()}

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))

    run = gpuplan("solve", HYBRID, "--csv", tables, "--force", preexec=small_files)
    no_traceback(run)
    assert run.returncode == 2, run.stderr
    assert {p.name: p.read_bytes() for p in tables.iterdir()} == before


# ------------------------------------------------------------------ the swap journal (issue 47, items 15 and 16)

def catalog_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "cat"
    shutil.copytree(SAMPLE, folder)
    return folder


def tables(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


NESTED = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("journal", [
    NESTED,                                                    # was a RecursionError traceback
    '[["gpus.csv", "offers.csv"]]',                            # a user's file renamed over another
    '[[".offers.csv.abcdefgh.staged", "../offers.csv"]]',      # a target outside the folder
    '[[".gpus.csv.abcdefgh.staged", "offers.csv"]]',           # staged for another target
    '{"rename": [], "remove": [["gpus.csv", "gpus.csv"]]}',    # a removal not marked by gpuplan
    '{"rename": "x"}', '[["a"]]', "not json", "\udcff",
], ids=["nested", "user-file", "outside", "other-target", "removal", "shape", "short-pair", "text", "bytes"])
def test_a_journal_naming_anything_but_staged_files_is_refused_and_nothing_moves(tmp_path, journal):
    folder = catalog_copy(tmp_path)
    (folder / ".offers.csv.abcdefgh.staged").write_text("staged", encoding="utf-8")
    (folder / files.JOURNAL).write_text(journal, encoding="utf-8", errors="surrogateescape")
    before = tables(folder)
    with pytest.raises(ProblemError) as caught:
        files.finish_interrupted(folder)
    assert files.JOURNAL in caught.value.render() and "delete the journal" in caught.value.render()
    assert tables(folder) == before


def test_a_staged_link_is_never_moved_in_nor_shown(tmp_path):
    """The issue's case: an in-folder link to an outside file, named by a hand-made journal, became
    offers.csv and the error printed the outside file's first line."""
    folder = catalog_copy(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2\n", encoding="utf-8")
    (folder / ".offers.csv.abcdefgh.staged").symlink_to(secret)
    (folder / files.JOURNAL).write_text('[[".offers.csv.abcdefgh.staged", "offers.csv"]]', encoding="utf-8")
    before = (folder / "offers.csv").read_bytes()
    run = gpuplan("catalog", "validate", folder)
    assert run.returncode == 2 and files.JOURNAL in run.stderr and "link" in run.stderr, run.stderr
    assert "hunter2" not in run.stderr + run.stdout
    no_traceback(run)
    assert not (folder / "offers.csv").is_symlink() and (folder / "offers.csv").read_bytes() == before


def test_a_staged_hard_link_is_not_moved_in_either(tmp_path):
    folder = catalog_copy(tmp_path)
    outside = tmp_path / "outside.csv"
    outside.write_text("theirs", encoding="utf-8")
    os.link(outside, folder / ".offers.csv.abcdefgh.staged")
    (folder / files.JOURNAL).write_text('[[".offers.csv.abcdefgh.staged", "offers.csv"]]', encoding="utf-8")
    with pytest.raises(ProblemError, match="link"):
        files.finish_interrupted(folder)
    assert (folder / "offers.csv").read_bytes() == (SAMPLE / "offers.csv").read_bytes()


def test_a_journal_that_is_a_link_is_not_followed(tmp_path):
    folder = catalog_copy(tmp_path)
    elsewhere = tmp_path / "journal.json"
    (folder / ".offers.csv.abcdefgh.staged").write_text("staged", encoding="utf-8")
    elsewhere.write_text('[[".offers.csv.abcdefgh.staged", "offers.csv"]]', encoding="utf-8")
    (folder / files.JOURNAL).symlink_to(elsewhere)
    with pytest.raises(ProblemError, match="link"):
        files.finish_interrupted(folder)
    assert (folder / "offers.csv").read_bytes() == (SAMPLE / "offers.csv").read_bytes()


@pytest.mark.parametrize("args", [["catalog", "validate", "{cat}"],
                                  ["solve", HYBRID, "--csv", "{cat}", "--force"],
                                  ["frontier", HYBRID, "--points", "2", "--plans", "{cat}", "--force"]],
                         ids=["catalog-validate", "solve-csv", "frontier-plans"])
def test_a_deeply_nested_journal_is_exit_2_in_every_command_that_reads_it(tmp_path, args):
    folder = tmp_path / "cat"
    shutil.copytree(SAMPLE, folder)
    (folder / files.JOURNAL).write_text(NESTED, encoding="utf-8")
    run = gpuplan(*[str(a).format(cat=folder) for a in args])
    assert run.returncode == 2 and files.JOURNAL in run.stderr, run.stderr
    no_traceback(run)


STAGER = """
import sys, time
from pathlib import Path
from solver import files
folder = Path(sys.argv[1])
def hang(tmp):
    print("staged", flush=True)
    time.sleep(3600)
files.replace_together([(folder / "offers.csv", lambda tmp: tmp.write_text("new", encoding="utf-8")),
                        (folder / "datacenters.csv", hang)], folder)
"""


def test_a_killed_write_s_staged_files_are_cleaned_by_the_next_command(tmp_path):
    """SIGKILL before the journal: the staged files stayed forever (37 after random kills). The next
    command that reads the folder deletes them; the old tables are whole."""
    folder = catalog_copy(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", STAGER, str(folder)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert child.stdout.readline().strip() == "staged"
    assert len(list(folder.glob(".*.staged"))) == 2
    child.kill()
    child.wait(timeout=HANG_SECONDS)
    run = gpuplan("catalog", "validate", folder)
    assert run.returncode == 0, run.stderr
    assert not list(folder.glob(".*.staged"))
    assert tables(folder) == tables(SAMPLE)


def test_only_stale_staged_files_of_gpuplan_s_pattern_are_cleaned(tmp_path):
    """Stale: a process of this host that no longer runs, or older than STALE_SECONDS. Kept: a running
    write's (this process), another host's or an unknown one's while young, and any other name."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(timeout=HANG_SECONDS)
    host = files._host()
    names = {"dead": f".offers.csv.{host}-{dead.pid}.abcdefgh.staged",
             "old": ".offers.csv.abcdefgh.staged",
             "live": f".offers.csv.{host}-{os.getpid()}.abcdefgh.staged",
             "young": ".gpus.csv.abcdefgh.staged",
             "other host": f".gpus.csv.{'0' * 8 if host != '0' * 8 else '1' * 8}-{dead.pid}.abcdefgh.staged",
             "user's": ".notes.staged", "user's too": "offers.csv.abcdefgh.staged"}
    for name in names.values():
        (tmp_path / name).write_text("x", encoding="utf-8")
    hour_ago = (tmp_path / names["old"]).stat().st_mtime - files.STALE_SECONDS - 60
    os.utime(tmp_path / names["old"], (hour_ago, hour_ago))
    assert sorted(files.clean_stale(tmp_path)) == sorted([names["dead"], names["old"]])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(n for k, n in names.items() if k not in ("dead", "old"))


def test_removals_go_under_the_journal_and_finish_after_a_kill(tmp_path, monkeypatch):
    """The frontier --plans case: a kill after the swap and before the old extra points were deleted
    left a folder mixing two runs with no journal to repair it."""
    for i in range(1, 5):
        (tmp_path / f"point-0{i}.json").write_text("old", encoding="utf-8")
    real = os.unlink

    def killed(path, *args, **kwargs):
        if Path(path).name.startswith("point-"):
            raise KeyboardInterrupt   # stands for SIGKILL
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files.os, "unlink", killed)
    with pytest.raises(KeyboardInterrupt):
        files.replace_together([(tmp_path / n, lambda tmp: tmp.write_text("new", encoding="utf-8"))
                                for n in ("point-01.json", "point-02.json")], tmp_path,
                               remove=[tmp_path / "point-03.json", tmp_path / "point-04.json"])
    monkeypatch.setattr(files.os, "unlink", real)
    assert (tmp_path / files.JOURNAL).exists()
    assert files.finish_interrupted(tmp_path)
    assert tables(tmp_path) == {"point-01.json": b"new", "point-02.json": b"new"}
