"""Two commands writing one file at once (issue 47 item 18): no lock; the file is one writer's whole
output, never a mix, and the guide (docs/GUIDE.md) says that the last writer wins."""

from __future__ import annotations

import subprocess
import sys

from tests.builders import HANG_SECONDS, ROOT

WRITER = """
import sys
from solver.files import write_text
for _ in range(20):
    write_text(sys.argv[1], sys.argv[2] * 200_000)
"""


def test_two_concurrent_writers_leave_one_whole_file_and_readme_says_the_last_wins(tmp_path):
    target = tmp_path / "plan.csv"
    runs = [subprocess.Popen([sys.executable, "-c", WRITER, str(target), mark], cwd=ROOT) for mark in "ab"]
    assert [run.wait(timeout=HANG_SECONDS) for run in runs] == [0, 0]
    assert target.read_text() in ("a" * 200_000, "b" * 200_000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.csv"]   # no staged file left
    readme = " ".join((ROOT / "docs" / "GUIDE.md").read_text(encoding="utf-8").split())
    assert "the last rename wins" in readme and "Give concurrent runs different output paths" in readme
