"""`gpuplan --no-color` writes no escape codes, even where stderr is a terminal (README).

rich's spinner and progress bar redraw themselves with cursor codes (hide cursor, erase
line, move up) whatever the colour setting; a reviewer saw them under a real TTY. Here
FORCE_COLOR makes rich treat the pipes as a terminal, as a TTY would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.builders import HANG_SECONDS, ROOT

SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"


def gpuplan(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "solver.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=HANG_SECONDS, cwd=ROOT, env=env)


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("grid") / "grid.yaml"
    path.write_text('grid:\n  "redundancy=": [0.3]\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["solve", "sweep"])
def test_no_escape_codes_on_a_terminal(command, grid):
    extra = ["--grid", grid, "-j", "1"] if command == "sweep" else []
    plain = gpuplan("--no-color", command, SEED, *extra)
    assert plain.returncode == 0, plain.stderr
    assert "\x1b" not in plain.stdout and "\x1b" not in plain.stderr, repr(plain.stderr[:200])
    assert "…" in plain.stderr                  # still says that it is working, in one plain line
    coloured = gpuplan(command, SEED, *extra)   # the control: without --no-color the terminal gets them
    assert coloured.returncode == 0, coloured.stderr
    assert "\x1b" in coloured.stdout + coloured.stderr
