"""Files the tool writes or reads beside its own: the checks before writing, the mode a written
file gets, and the optional openpyxl a spreadsheet needs.

Why one low module: the report writers (solver.report), the quote sheets (solver.quotes)
and the commands all need these, and quotes sits below report in the layering (model,
estimate → milp → api → analysis → report → commands → cli); kept here, no lower layer
imports report and report's modules need not import each other for a path check.

File modes: outputs are written to a temporary file beside the target and renamed over it,
so a crash never leaves half a file. `tempfile.mkstemp` makes that file 0600, and the rename
kept it: an imported catalog's offers.csv or a plan's .xlsx was readable only by its
writer, while the CSV and HTML outputs (plain open()) were 0644 under umask 022 — a
shared catalog on a team's server that nobody else could read.
"""

from __future__ import annotations

import os
from pathlib import Path

from solver.errors import ProblemError


def as_if_opened(path: str | os.PathLike) -> None:
    """Set `path`'s mode to 0666 less the process umask (what open(path, "w") gives a new file)."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def check_new_file(path: str | Path, option: str, *, force: bool, example: str) -> Path:
    """A file a command will write, checked before any work: not a folder, in a folder that exists,
    and an existing file is replaced only with --force (nothing a user wrote is overwritten)."""
    path = Path(path)
    if path.is_dir():
        raise ProblemError("is a folder", key=option, file=str(path), fix=f"give a file name, e.g. {example}")
    if not path.parent.is_dir():
        raise ProblemError("folder does not exist", key=option, file=str(path.parent),
                           fix="create it, or write the file elsewhere")
    if path.exists() and not force:
        raise ProblemError("already exists", key=option, file=str(path),
                           fix="choose another file, or pass --force to overwrite")
    return path


def require_openpyxl(key: str | None = "--xlsx"):
    """The openpyxl module, or a ProblemError (naming the option `key`) that says how to install it:
    .xlsx support is an optional extra (pip install .[excel])."""
    try:
        import openpyxl
    except ImportError:
        raise ProblemError("writing and reading .xlsx needs openpyxl", key=key,
                           fix="pip install .[excel] (or pip install openpyxl), or use --csv DIR") from None
    return openpyxl
