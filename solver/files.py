"""Files the tool writes through a temporary file get the mode a plain open() would give.

Why: outputs are written to a temporary file beside the target and renamed over it, so a
crash never leaves half a file. `tempfile.mkstemp` makes that file 0600, and the rename
kept it: an imported catalog's offers.csv or a plan's .xlsx was readable only by its
writer, while the CSV and HTML outputs (plain open()) were 0644 under umask 022 — a
shared catalog on a team's server that nobody else could read.
"""

from __future__ import annotations

import os


def as_if_opened(path: str | os.PathLike) -> None:
    """Set `path`'s mode to 0666 less the process umask (what open(path, "w") gives a new file)."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)
