"""Invisible characters in names are refused at load, exit 2 (issue 47 item 18): a zero-width
space, joiner or byte-order mark inside a name makes two names that look identical differ.
A byte-order mark that starts a CSV file (Excel writes one) is no part of any name and stays fine.
"""

from __future__ import annotations

import sys
import unicodedata

import pytest
from pydantic import ValidationError

from solver.model.catalog import Datacenter
from solver.model.problem import Job
from solver.model.text import CONTROL, shown
from tests.cli.test_hostile_names import SAMPLE, copy_catalog, gpuplan, seed_problem

ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\ufeff", "\u2060", "\u00ad"]


@pytest.mark.parametrize("char", ZERO_WIDTH, ids=lambda c: f"U+{ord(c):04X}")
def test_a_zero_width_character_in_a_name_is_refused_by_the_models(char):
    with pytest.raises(ValidationError, match=f"invisible character U\\+{ord(char):04X} at position 4"):
        Job.model_validate({"name": "job" + char + "a", "deadline_days": 3, "flops": 1e20})
    with pytest.raises(ValidationError, match="invisible character"):
        Datacenter.model_validate({"datacenter": "dc" + char, "power_quota_kw": 10})


def test_every_format_character_of_unicode_is_refused_and_written_out():
    """The list in solver.model.text against the running Python's Unicode database: every format
    character (category Cf) is caught, and shown escaped, never raw."""
    missed = [f"U+{c:04X}" for c in range(sys.maxunicode + 1)
              if unicodedata.category(chr(c)) == "Cf" and not CONTROL.fullmatch(chr(c))]
    assert missed == []
    assert shown("a\u200bb") == "a\\u200bb"


def test_ordinary_names_in_any_script_stay_fine():
    for name in ("预训练-7b", "Шуньи", "datacenter_1", "a b", "ジョブ", "مركز"):
        assert CONTROL.search(name) is None, name


def test_a_job_name_with_a_zero_width_space_is_exit_2_naming_the_key(tmp_path):
    problem = seed_problem(tmp_path, SAMPLE, "pretrain\u200b-7b")
    run = gpuplan("solve", problem)
    assert run.returncode == 2, run.stdout + run.stderr
    err = " ".join(run.stderr.split())
    assert "jobs[0].name" in err and "invisible character U+200B" in err and "Fix:" in err, err
    assert "\u200b" not in run.stdout + run.stderr and "Traceback" not in err


def test_a_vendor_with_a_zero_width_joiner_is_refused_but_a_leading_bom_of_the_file_is_not(tmp_path):
    def rename(row):
        row["vendor"] = "21\u200dvianet" if row["vendor"] == "21vianet" else row["vendor"]
        return row
    catalog = copy_catalog(tmp_path / "cat", rename)
    run = gpuplan("catalog", "validate", catalog)
    assert run.returncode == 2 and "invisible character U+200D" in run.stderr and "offers.csv" in run.stderr, run.stderr
    plain = copy_catalog(tmp_path / "bom", lambda row: row)
    offers = plain / "offers.csv"
    offers.write_bytes("\ufeff".encode() + offers.read_bytes())   # as Excel saves a CSV
    run = gpuplan("catalog", "validate", plain)
    assert run.returncode == 0, run.stderr
