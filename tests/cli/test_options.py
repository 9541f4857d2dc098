"""Option values that cannot mean anything exit 2 with one message naming the option, before any
work: estimate's numbers, every solving command's --gap and --time-limit, negotiate's levers;
and `calibrate --help-formats` needs no other option.

In process (typer's CliRunner): every case fails while parsing or before the first solve.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from solver.cli import app
from tests.builders import ROOT

SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"
ESTIMATE = ["estimate", "--params", "7e9", "--tokens", "200e9"]


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def assert_bad(result, *needles: str) -> None:
    """Exit 2, nothing on stdout, no traceback, the needles in the one message on stderr."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.stdout.strip() == "", result.stdout
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)


# --- estimate -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, needles", [
    (["--precision", "fp8"], ["--precision", "A100-80G has no FP8", "gpus.csv", "--precision bf16", "H800-80G"]),
    (["--precision", "int4"], ["--precision", "int4", "bf16"]),
    (["--days", "0"], ["--days", "> 0"]),
    (["--days", "-5"], ["--days", "-5", "> 0"]),
    (["--days", "nan"], ["--days", "nan"]),
    (["--gpus-per-node", "0"], ["--gpus-per-node"]),
    (["--redundancy", "-1"], ["--redundancy", "from 0 to 5"]),
    (["--redundancy", "inf"], ["--redundancy", "inf"]),
    (["--tokens", "nan"], ["--tokens", "finite"]),
    (["--params", "inf"], ["--params", "finite"]),
])
def test_estimate_refuses_values_that_mean_nothing(args, needles):
    assert_bad(run(*ESTIMATE, *args), *needles)


def test_estimate_active_params_above_params_says_so():
    result = run(*ESTIMATE, "--active-params", "9e9")
    assert_bad(result, "--active-params", "more than --params", "at most --params")
    assert "positive" not in result.stderr                     # the old, wrong fix


def test_estimate_hidden_not_a_multiple_of_heads_is_bad_input():
    """The model's second cross-check: it used to be read as the first (a traceback formatting None)."""
    assert_bad(run(*ESTIMATE, "--hidden", "4095", "--heads", "32"), "--hidden/--heads", "not a multiple of heads 32")


def test_estimate_fp8_on_a_gpu_that_has_it():
    result = run(*ESTIMATE, "--gpu", "H800-80G", "--precision", "fp8", "--json")
    assert result.exit_code == 0, result.stderr
    assert '"gpu": "H800-80G"' in result.stdout


# --- --gap and --time-limit of every command that solves ----------------------------------------

SOLVING = {
    "solve": ["solve", SEED],
    "why": ["why", SEED],
    "whatif": ["whatif", SEED, "--set", "budget=1e7"],
    "frontier": ["frontier", SEED],
    "negotiate": ["negotiate", SEED],
    "sweep": ["sweep", SEED, "--grid", "unused.yaml"],
    "report": ["report", SEED, "-o", "/nonexistent-gpuplan-folder/unused.html"],
}
BAD_SOLVER_OPTIONS = [
    (["--gap", "-0.1"], ["--gap", "-0.1", "≥ 0"]),
    (["--gap", "inf"], ["--gap", "inf"]),
    (["--time-limit", "-1"], ["--time-limit", "-1", "> 0"]),
    (["--time-limit", "0"], ["--time-limit", "> 0"]),         # 0 used to mean "no limit", silently
    (["--time-limit", "nan"], ["--time-limit", "nan"]),
    (["--time-limit", "1e20"], ["--time-limit", "1e+20", "≤ 2,592,000"]),   # was an OverflowError traceback
]


@pytest.mark.parametrize("command", list(SOLVING))
@pytest.mark.parametrize("option, needles", BAD_SOLVER_OPTIONS)
def test_solver_options_are_checked_by_every_command(command, option, needles):
    assert_bad(run(*SOLVING[command], *option), *needles)


MAX_SECONDS = [c for c in SOLVING if c != "sweep"]   # sweep has no whole-run budget


@pytest.mark.parametrize("command", MAX_SECONDS)
@pytest.mark.parametrize("value", ["1e20", "1e308", "2592001"])
def test_a_huge_max_seconds_is_exit_2_not_an_overflow(command, value):
    """Issue 47, item 14: `--max-seconds 1e20` was an OverflowError traceback (solve, negotiate, frontier)."""
    assert_bad(run(*SOLVING[command], "--max-seconds", value), "--max-seconds", "≤ 2,592,000")


def test_solve_with_gap_zero_and_a_time_limit_still_solves():
    result = run("solve", SEED, "--gap", "0", "--time-limit", "30", "--json")
    assert result.exit_code == 0, result.stderr
    assert '"status": "optimal"' in result.stdout


@pytest.mark.parametrize("option, needles", [
    (["--kw", "-5"], ["--kw", "> 0"]),
    (["--kw", "nan"], ["--kw", "nan"]),
    (["--lead-days", "0"], ["--lead-days"]),
    (["--nodes", "0"], ["--nodes"]),
    (["--max-seconds", "0"], ["--max-seconds", "> 0"]),
])
def test_negotiate_levers_are_checked(option, needles):
    assert_bad(run("negotiate", SEED, *option), *needles)


# --- calibrate --help-formats ---------------------------------------------------------------------

def test_calibrate_help_formats_needs_no_gpu():
    result = run("calibrate", "--help-formats")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "nvidia-smi" in result.stdout and "step" in result.stdout
    assert "Missing option" not in result.stdout + result.stderr


def test_calibrate_still_requires_gpu_without_help_formats():
    result = run("calibrate", "--params", "7e9", "--tokens-per-sec-per-gpu", "3000")
    assert result.exit_code == 2 and "--gpu" in result.stderr
