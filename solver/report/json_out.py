"""The commands' one JSON writer: one object on stdout, UTF-8 text kept as it is.

Why a module of its own: `gpuplan estimate`, `calibrate` and `split-bill` print JSON and should
not load the plan tables, the HTML report's words or pydantic's plan models to do it (issue 34:
a command that solves nothing starts in a fraction of a second).
"""

from __future__ import annotations

import sys

from solver.files import json_text


def print_json(data: dict | list) -> None:
    """`data` as one JSON object on stdout, through solver.files.json_text: no NaN or infinity
    (an interval's open end is null), so any JSON reader accepts it."""
    sys.stdout.write(json_text(data) + "\n")
