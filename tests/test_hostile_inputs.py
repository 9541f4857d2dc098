"""Inputs that crashed instead of exit 2, and messages that did not help (items 5 and 9 of
issue 35), each reproduced on the loader: every case is one ProblemError naming the key, with
a fix, no pydantic class name and no line longer than a screenful of names."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.builders import ROOT

from solver.errors import ProblemError
from solver.load import load_problem

SEED = (ROOT / "problems" / "seed-13b-100b.yaml").read_text(encoding="utf-8").replace(
    "../catalogs/", (ROOT / "catalogs").as_posix() + "/")


def refused(tmp_path: Path, text: str) -> str:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProblemError) as caught:
        load_problem(path)
    message = caught.value.render()
    assert caught.value.fix, message
    assert "instance of" not in message and "pydantic" not in message
    return message


@pytest.mark.parametrize("old, new, key", [
    ("storage_tb: 10", "storage_tb: 1e308", "jobs[0].storage_tb"),
    ("egress_tb: 0.2", "egress_tb: 1e308", "jobs[0].egress_tb"),
    ("deadline_days: 30\n", "deadline_days: 30\n    trials: 1000000000000000000\n", "jobs[0].trials"),
    ("tokens: 100e9", "tokens: 1e300", "jobs[0].tokens"),
    ("params: 13e9", "params: 1e300", "jobs[0].model.params"),
    ("horizon_days: 30", "horizon_days: 30\nstart_date: 9999-12-31", "start_date"),
    ("horizon_days: 30", "horizon_days: 30\nbudget: 1e300", "budget"),
], ids=["storage", "egress", "trials", "tokens", "params", "date", "budget"])
def test_numbers_beyond_sane_magnitudes_are_refused_by_key(tmp_path, old, new, key):
    """storage_tb 1e308 overflowed to infinity in the MILP's objective (OR-Tools raised); start_date
    9999-12-31 ran past the calendar in the cash flow; trials 1e18 was accepted."""
    message = refused(tmp_path, SEED.replace(old, new))
    assert key in message and "out of range" in message


@pytest.mark.parametrize("nest", ["[" * 1000 + "]" * 1000, "{a: " * 1000 + "1" + "}" * 1000])
def test_yaml_nested_a_thousand_levels_is_refused_before_parsing(tmp_path, nest):
    """PyYAML's parser recursed per level: a RecursionError traceback."""
    assert "nested more than 50 levels" in refused(tmp_path, SEED + f"x: {nest}\n")


def test_a_five_thousand_digit_number_is_not_called_a_date(tmp_path):
    message = refused(tmp_path, SEED.replace("horizon_days: 30", "horizon_days: " + "9" * 5000))
    assert "too long" in message and "date" not in message.split("Fix:")[0]


def test_a_typo_of_a_required_key_is_named_as_the_typo(tmp_path):
    """`deadline_day: 7` was "deadline_days: required key is missing [and 1 more problem]"."""
    message = refused(tmp_path, SEED.replace("deadline_days: 30", "deadline_day: 30"))
    assert "jobs[0].deadline_day:" in message and "typo of the required key deadline_days" in message
    assert "rename it to deadline_days" in message and "more problem" not in message


def test_an_unknown_key_gets_did_you_mean(tmp_path):
    message = refused(tmp_path, SEED.replace("single_site: true", "single_sit: true"))
    assert "unknown key" in message and "did you mean single_site" in message


def test_a_job_that_is_not_a_mapping_names_no_class(tmp_path):
    """"Input should be a valid dictionary or instance of Job" named our class."""
    message = refused(tmp_path, SEED.split("jobs:")[0] + "jobs: [3]\n")
    assert "jobs[0]" in message and "mapping" in message and "Job" not in message


def test_an_unknown_offer_in_a_long_catalog_lists_a_few_and_counts_the_rest(tmp_path):
    """An unknown restrict.offers entry printed every offer of the catalog: 3.26 MB in one line."""
    message = refused(tmp_path, SEED.replace("restrict: {gpus: [A100-80G]}",
                                             "restrict: {offers: [vnet-yz-a100-80-8x-montly]}"))
    assert "did you mean vnet-yz-a100-80-8x-monthly?" in message
    assert "more)" in message and len(message) < 600


def test_every_refusal_has_a_fix(tmp_path):
    """A sample of the mutations the fault run found without a fix: each now says what to write."""
    for old, new in [("horizon_days: 30", "horizon_days: -3"), ("name: seed-13b-100b", "name: [a, b]"),
                     ("kind: pretrain", "kind: pretrian"), ("mfu: 0.60", "mfu: lots"),
                     ("model: {params: 13e9,", "model: {params: 13e9, wings: 2,"), ("jobs:", "jobs: 7\nx:")]:
        refused(tmp_path, SEED.replace(old, new))


def test_calibrate_with_a_thirty_megabyte_line_is_exit_2(tmp_path):
    from solver.tools.calibrate import read_nvidia_smi

    lines = (ROOT / "tests" / "data" / "nvidia-smi.csv").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "smi.csv"
    path.write_text("\n".join(lines[:3] + ["x" * 30_000_000] + lines[3:]) + "\n", encoding="utf-8")
    with pytest.raises(ProblemError, match="line 4"):
        read_nvidia_smi(path)


def test_a_skypilot_accelerator_count_of_1e12_is_a_bad_cell(tmp_path):
    """It reached the Offer model unchecked: a pydantic traceback."""
    import shutil

    from solver.ingest.skypilot import import_skypilot

    into = tmp_path / "cat"
    shutil.copytree(ROOT / "catalogs" / "beijing-sample", into)
    shutil.copy(ROOT / "catalogs" / "public-clouds-sample" / "gpus.csv", into)
    before = {p.name: p.read_bytes() for p in into.iterdir()}
    (tmp_path / "v7" / "lambda").mkdir(parents=True)
    (tmp_path / "v7" / "lambda" / "vms.csv").write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
        "gpu_8x_a100,A100,1e12,30,200,10.32,us-east-1,,\n", encoding="utf-8")
    with pytest.raises(ProblemError) as caught:
        import_skypilot(tmp_path / "v7", into, clouds=["lambda"])
    assert "AcceleratorCount" in str(caught.value) + " ".join(map(str, getattr(caught.value, "bad", [])))
    assert {p.name: p.read_bytes() for p in into.iterdir()} == before


def test_a_catalog_name_the_file_system_refuses_is_exit_2(tmp_path):
    """Found by the fuzz test: a catalog folder name longer than the file system allows raised
    OSError from the loader (a traceback) instead of one message naming the key."""
    from solver.errors import ProblemError
    from solver.load import load_problem

    import re
    seed = (Path(__file__).resolve().parents[1] / "problems" / "seed-7b-200b-30d.yaml").read_text(encoding="utf-8")
    path = tmp_path / "p.yaml"
    path.write_text(re.sub(r"(?m)^catalog:.*$", f"catalog: {'x' * 5000}", seed), encoding="utf-8")
    with pytest.raises(ProblemError) as caught:
        load_problem(path)
    assert caught.value.key == "catalog" and "cannot be opened" in str(caught.value)
