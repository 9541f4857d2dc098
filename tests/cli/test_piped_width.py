"""Issue 47: a plan piped to a file or a pager was laid out at 100 columns whatever COLUMNS said, so
`COLUMNS=80 gpuplan solve P | less` wrapped every table line."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.builders import ROOT


def _widest(columns: str) -> int:
    env = {**os.environ, "COLUMNS": columns}
    run = subprocess.run([sys.executable, "-m", "solver.cli", "solve", "problems/seed-7b-200b-30d.yaml"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    return max(len(line) for line in run.stdout.splitlines())


def test_piped_output_takes_a_narrower_columns_and_never_more_than_100():
    assert 60 < _widest("80") <= 80
    assert 80 < _widest("250") <= 100
