"""Terminal output: tables within 100 columns, --no-color plain text, --quiet accepted everywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.builders import ROOT



def gpuplan(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **env})


@pytest.mark.parametrize("args", [
    ("solve", "problems/hybrid-burst.yaml", "--baselines"),
    ("solve", "problems/seed-7b-200b-30d.yaml"),
    ("whatif", "problems/hybrid-burst.yaml", "--set", "datacenters.Shunyi.power_quota_kw=400"),
    ("estimate", "--params", "7e9", "--tokens", "200e9"),
])
def test_tables_fit_100_columns_and_no_color_means_no_escape_codes(args):
    run = gpuplan("--no-color", "--quiet", *args, FORCE_COLOR="1", COLUMNS="200")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= 100
    assert "\x1b[" not in run.stdout + run.stderr


def test_colour_is_on_when_forced_and_not_disabled():
    run = gpuplan("solve", "problems/seed-7b-200b-30d.yaml", FORCE_COLOR="1")
    assert run.returncode == 0 and "\x1b[" in run.stdout


def test_readme_example_is_what_solve_prints():
    """README's "What you get" block is the real output of its command (only the time differs)."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = "$ gpuplan solve problems/seed-7b-200b-30d.yaml\n"
    block = readme[readme.index(command) + len(command):]
    shown = block[:block.index("```")].splitlines()
    run = gpuplan("solve", "problems/seed-7b-200b-30d.yaml", COLUMNS="100")
    assert run.returncode == 0, run.stderr
    printed = [line.rstrip() for line in run.stdout.splitlines()]
    timeless = [re.sub(r"\d+\.\d+ s, highs", "T s, highs", line) for line in printed]
    assert timeless == [re.sub(r"\d+\.\d+ s, highs", "T s, highs", line) for line in shown]


def test_a_long_job_name_wraps_whole_in_the_jobs_table(tmp_path):
    """The jobs table cut a long job name with … (the table is at most 100 columns wide)."""
    name = "pretrain-7b-on-the-full-two-hundred-billion-token-corpus-v2"
    text = (ROOT / "problems" / "seed-7b-200b-30d.yaml").read_text(encoding="utf-8")
    text = text.replace("- name: pretrain-7b", f"- name: {name}").replace(
        "catalog: ../catalogs", f"catalog: {(ROOT / 'catalogs').as_posix()}")
    problem = tmp_path / "long.yaml"
    problem.write_text(text, encoding="utf-8")
    run = gpuplan("--no-color", "solve", str(problem), COLUMNS="200")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Jobs"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("└"))
    first_cells = [line.split("│")[1].strip() for line in lines[start:end] if line.startswith("│")]
    assert "".join(first_cells) == name
    assert max(len(line) for line in lines) <= 100


def _with_stdout_closed(*args: str) -> subprocess.CompletedProcess:
    """Run gpuplan with a standard output whose reader is already gone (`| head` that has
    read its line): the first write fails with a broken pipe."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "solver.cli", *args], stdout=write, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [
    ("solve", "problems/seed-7b-200b-30d.yaml"),            # rich tables
    ("solve", "problems/seed-7b-200b-30d.yaml", "--json"),  # print: click's handler
    ("catalog", "show", "catalogs/beijing-sample"),
])
def test_a_closed_standard_output_is_not_reported_as_infeasible(args):
    """Exit 1 means infeasible; a reader that went away gets 141, as a shell reports SIGPIPE."""
    run = _with_stdout_closed(*args)
    assert run.returncode == 141, run.stderr
    assert "Traceback" not in run.stderr


def test_an_infeasible_problem_still_exits_1_with_standard_output_closed():
    run = _with_stdout_closed("solve", "problems/infeasible/shunyi-racks-short.yaml", "--no-explain")
    assert run.returncode == 1 and "infeasible" in run.stderr
