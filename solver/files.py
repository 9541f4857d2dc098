"""Files the tool writes: the one writer every output goes through, the checks before writing,
spreadsheet cells that stay text, and the optional openpyxl a spreadsheet needs.

Why one low module: the report writers (solver.report), the quote sheets (solver.ingest.quotes),
calibrate, the SkyPilot import and the commands all write files, and quotes sits below report
in the layering (model, estimate → milp → api → analysis → report → commands → cli); kept
here, every writer shares one set of guarantees:

- Nothing a user had is lost. Every file is written to a temporary file in the target's
  folder, flushed and fsynced, then renamed over the target (`write_text`, `write_bytes`,
  `save_atomic`): a kill, a full disk or a file-size limit leaves the old file or the new one,
  never a mix. `calibrate --in-place` once truncated the user's problem file first (a SIGKILL
  left it at 0 bytes). Tables that only make sense together (a catalog's datacenters.csv and
  offers.csv) are renamed under a journal (`replace_together`): a half-done swap is finished
  the next time the folder is read or written (`finish_interrupted`), and the staged files of a
  write killed before its journal are deleted then (`clean_stale`). A journal is data on disk,
  not trusted: it is followed only when it names gpuplan's own staged files (STAGED) beside plain
  names of its folder, never through a link.
- Nothing is written through a link. A symbolic link at an output path is refused unless
  --force, and then the rename replaces the link itself (the file it pointed to is untouched).
- A write that cannot happen is bad input, found before any solving where possible:
  `check_new_file` probes the folder with a temporary file; a write error later is a
  ProblemError (exit 2) with the path and the cause, never a traceback.

File modes: `tempfile.mkstemp` makes a file 0600, and the rename kept it: an imported catalog's
offers.csv was readable only by its writer, while open()'s outputs were 0644 under umask 022;
every written file gets open()'s mode (`as_if_opened`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import re
import socket
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from solver.errors import ProblemError

JOURNAL = ".gpuplan-swap.json"
"""The journal `replace_together` keeps in a folder while it renames several files into place."""

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell starting with one of these is a formula (or DDE call) to Excel and LibreOffice (OWASP,
"CSV Injection"); `csv_cell` prefixes such text with a single quote."""


def as_if_opened(path: str | os.PathLike) -> None:
    """Set `path`'s mode to 0666 less the process umask (what open(path, "w") gives a new file)."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def check_new_file(path: str | Path, option: str, *, force: bool, example: str) -> Path:
    """A file a command will write, checked before any work: not a folder, in a folder that exists
    and can be written, and an existing file or link is replaced only with --force (nothing a
    user wrote is overwritten; a dangling link's target is never created)."""
    path = Path(path)
    if path.is_dir():
        raise ProblemError("is a folder", key=option, file=str(path), fix=f"give a file name, e.g. {example}")
    if not path.parent.is_dir():
        raise ProblemError("folder does not exist", key=option, file=str(path.parent),
                           fix="create it, or write the file elsewhere")
    if path.is_symlink() and not force:
        raise ProblemError("is a symbolic link; it is not written through", key=option, file=str(path),
                           fix="give the real file's path, or pass --force to replace the link itself")
    if os.path.lexists(path) and not force:
        raise ProblemError("already exists", key=option, file=str(path),
                           fix="choose another file, or pass --force to overwrite")
    check_writable_folder(path.parent, option)
    return path


def check_new_folder(folder: str | Path, option: str, *, force: bool, names: Iterable[str] = (),
                     pattern: str | None = None) -> Path:
    """A folder a command will write files into, checked before any work, in check_new_file's words:
    an existing folder, or a new one whose parent exists (it is made when written), that can be
    written; the files it would replace there (`names`, and a previous run's files matching the glob
    `pattern`) are replaced only with --force. Other files in it are the user's and left alone."""
    folder = Path(folder)
    if os.path.lexists(folder) and not folder.is_dir():
        raise ProblemError("is not a folder", key=option, file=str(folder),
                           fix="give a folder (new or existing)")
    if not folder.exists() and not folder.parent.is_dir():
        raise ProblemError("folder does not exist", key=option, file=str(folder.parent),
                           fix="create it, or write the files elsewhere")
    there = existing_in(folder, names, pattern)
    if there and not force:
        more = f" (and {len(there) - 1} more file{'s' if len(there) > 2 else ''} it would replace)" if len(there) > 1 else ""
        raise ProblemError(f"already exists{more}", key=option, file=str(there[0]),
                           fix="choose another folder, or pass --force to overwrite")
    check_writable_folder(folder if folder.is_dir() else folder.parent, option)
    return folder


def existing_in(folder: str | Path, names: Iterable[str] = (), pattern: str | None = None) -> list[Path]:
    """The files (or links) in `folder` named `names` or matching the glob `pattern`, sorted; [] for
    a folder that is not there."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = {folder / name for name in names if os.path.lexists(folder / name)}
    if pattern:
        found |= set(folder.glob(pattern))
    return sorted(found)


def make_folder(folder: str | Path, option: str | None = None) -> Path:
    """The folder made (its parent exists: check_new_folder) when it is new; a failure is bad input."""
    folder = Path(folder)
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise write_error(exc, folder, option) from None
    return folder


def check_writable_folder(folder: str | Path, option: str | None = None) -> Path:
    """A folder a file can be created in, tried with a temporary file (permissions, a read-only
    disk, a full one): why a probe, not os.access: access() says yes on a read-only mount."""
    folder = Path(folder)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gpuplan-probe.")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise write_error(exc, folder, option) from None
    return folder


def write_error(exc: OSError, path: str | Path, option: str | None = None, action: str = "write") -> ProblemError:
    """An OSError while writing `path` as bad input (exit 2): the path, the cause and a fix."""
    cause = exc.strerror or str(exc)
    fixes = {errno.ENOSPC: "free space on that disk, or write the file elsewhere",
             errno.EDQUOT: "free space within your quota, or write the file elsewhere",
             errno.EFBIG: "raise the file-size limit (ulimit -f), or write the file elsewhere",
             errno.EROFS: "write the file to a disk that is not read-only",
             errno.EACCES: "write the file to a folder you may write to, or change its permissions",
             errno.EPERM: "write the file to a folder you may write to, or change its permissions"}
    return ProblemError(f"cannot {action}: {cause}", key=option, file=str(path),
                        fix=fixes.get(exc.errno, "check the disk and the folder, or write the file elsewhere"))


@contextmanager
def _temporary(path: Path) -> Iterator[Path]:
    """A temporary file beside `path`, removed unless renamed."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
    except OSError as exc:
        raise write_error(exc, path) from None
    try:
        yield Path(tmp)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _commit(tmp: Path, path: Path) -> None:
    """fsync `tmp`, give it open()'s mode and rename it over `path` (a link there is replaced, not
    followed); then fsync the folder so the rename itself survives a power cut."""
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    as_if_opened(tmp)
    os.replace(tmp, path)
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # a folder that cannot be opened for reading (Windows): the rename stands anyway
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save_atomic(path: str | Path, save: Callable[[Path], Any]) -> Path:
    """Let `save(tmp)` write a temporary file beside `path`, then rename it into place.
    For writers that take a path (openpyxl, pandas, OR-Tools); any OSError is a ProblemError."""
    path = Path(path)
    try:
        with _temporary(path) as tmp:
            save(tmp)
            _commit(tmp, path)
    except OSError as exc:
        raise write_error(exc, path) from None
    return path


def write_bytes(path: str | Path, data: bytes) -> Path:
    """`data` as the whole of `path`, atomically."""
    return save_atomic(path, lambda tmp: tmp.write_bytes(data))


def write_text(path: str | Path, text: str, *, encoding: str = "utf-8", newline: str | None = None) -> Path:
    """`text` as the whole of `path`, atomically (`newline=""` keeps the text's own line ends)."""
    def save(tmp: Path) -> None:
        with open(tmp, "w", encoding=encoding, newline=newline) as fh:
            fh.write(text)
    return save_atomic(path, save)


def replace_together(files: Sequence[tuple[Path, Callable[[Path], Any]]], folder: str | Path, *,
                     remove: Sequence[Path] = ()) -> None:
    """Write several files of one folder as one change: each `save(tmp)` writes a staged file
    (`_stage`, named by STAGED), then a journal naming every (staged, target) pair and every file to `remove`
    is written, the files are renamed into place, the removed ones deleted and the journal removed.
    A kill before the journal leaves every old file (its staged files are cleaned by a later
    command, `clean_stale`); after it, `finish_interrupted` (run by the next read or write of the
    folder) completes the change. Why a journal: two renames cannot be one, and a kill between them
    once left a catalog with a new offers.csv and the old datacenters.csv, unnoticed; frontier's old
    extra points deleted after the swap once left a folder mixing two runs (issue 47)."""
    folder = Path(folder)
    finish_interrupted(folder)
    staged: list[tuple[Path, Path]] = []
    gone: list[tuple[Path, Path]] = []
    journal = folder / JOURNAL
    try:
        for target, save in files:
            staged.append((_stage(folder, target), target))
            save(staged[-1][0])
            _seal(staged[-1][0])
        for target in remove:   # an empty staged file per removal: the journal names only gpuplan's files
            gone.append((_stage(folder, target), target))
        write_text(journal, json.dumps({"rename": [[tmp.name, target.name] for tmp, target in staged],
                                        "remove": [[mark.name, target.name] for mark, target in gone]}))
        _finish(folder, staged, gone)
    except OSError as exc:
        raise write_error(exc, folder) from None
    finally:
        if not journal.exists():
            for tmp, _ in staged + gone:
                if os.path.lexists(tmp):
                    os.unlink(tmp)


STAGED_TAIL = r"(?:(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]{1,10})\.)?[a-z0-9_]+\.staged"
STAGED = re.compile(r"\.(?P<target>.+?)\." + STAGED_TAIL)
"""The name of a file `replace_together` stages for `target`: `.<target>.<host>-<pid>.<random>.staged`
(without `<host>-<pid>`: written before issue 47). The journal may name no other file as a source,
and a later command deletes only stale files of this shape (`clean_stale`)."""
STALE_SECONDS = 3600.0
"""A staged file of another host, or of no known process, is stale after this long: no write stages
for an hour before its journal (they take seconds)."""
JOURNAL_BYTES = 1 << 20
"""The most a journal may hold (a frontier's thousand plans' names take 60 kB)."""


def _host() -> str:
    """This machine, as 8 hex digits in a staged name: a process id means something only on its host."""
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def _stage(folder: Path, target: Path) -> Path:
    """A new empty staged file for `target` in `folder`, named by STAGED with this host and process."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.{_host()}-{os.getpid()}.", suffix=".staged")
    os.close(fd)
    return Path(tmp)


def _seal(tmp: Path) -> None:
    """fsync a staged file and give it open()'s mode: whole on disk before the journal names it."""
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    as_if_opened(tmp)


def _finish(folder: Path, staged: list[tuple[Path, Path]], gone: list[tuple[Path, Path]] = ()) -> None:
    """Rename each staged file that is still there over its target, delete each target whose
    removal mark is still there (then the mark), then delete the journal; each step can run again."""
    for tmp, target in staged:
        if os.path.lexists(tmp):
            os.replace(tmp, target)
    for mark, target in gone:
        if os.path.lexists(mark):
            if os.path.lexists(target):
                os.unlink(target)   # a link is removed itself, never what it points to
            os.unlink(mark)
    _sync_folder(folder)
    (folder / JOURNAL).unlink()
    _sync_folder(folder)


def finish_interrupted(folder: str | Path) -> bool:
    """Complete a `replace_together` a kill interrupted in `folder` (True when there was one), then
    delete the folder's stale staged files (`clean_stale`). The journal is written only once every
    new file is whole, so finishing is always right; a journal that names anything but gpuplan's
    own staged files beside plain targets, or a link, is refused (exit 2) before anything is moved:
    a hand-made one once renamed a user's gpus.csv over offers.csv, or a link to a file outside."""
    folder = Path(folder)
    journal = folder / JOURNAL
    if not os.path.lexists(journal):
        clean_stale(folder)
        return False
    staged, gone = _read_journal(journal)
    try:
        _finish(folder, staged, gone)
    except OSError as exc:
        raise ProblemError(f"an interrupted import could not be completed: {exc.strerror or exc}",
                           file=str(journal), fix="make the folder writable and run the command again") from None
    clean_stale(folder)
    return True


def _read_journal(journal: Path) -> tuple[list[tuple[Path, Path]], list[tuple[Path, Path]]]:
    """The journal's renames and removals as paths in its folder, each checked (`_checked_pair`), or a
    ProblemError saying why it was not followed. Read without following a link, at most JOURNAL_BYTES;
    a nesting too deep for the parser is refused like any other shape (it was a RecursionError)."""
    try:
        info = os.lstat(journal)
        if not stat.S_ISREG(info.st_mode):
            raise _refused(journal, "it is a link or not a file")
        if info.st_size > JOURNAL_BYTES:
            raise _refused(journal, f"it holds {info.st_size:,} bytes, more than a journal ever does")
        with open(journal, "rb") as fh:
            data = json.loads(fh.read(JOURNAL_BYTES + 1).decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise _refused(journal, "it is not readable" if isinstance(exc, RecursionError) else f"it is not readable ({exc})")
    except OSError as exc:
        raise _refused(journal, f"it cannot be read ({exc.strerror or exc})")
    renames, removes = (data, []) if isinstance(data, list) else \
        (data.get("rename"), data.get("remove")) if isinstance(data, dict) else (None, None)
    if not isinstance(renames, list) or not isinstance(removes, list):
        raise _refused(journal, "it is not a list of renames")
    pairs = [_checked_pair(journal, pair) for pair in renames + removes]
    targets = [target.name for _, target in pairs]
    if len(set(targets)) < len(targets):
        raise _refused(journal, "it names a file twice")
    return pairs[:len(renames)], pairs[len(renames):]


def _checked_pair(journal: Path, pair: Any) -> tuple[Path, Path]:
    """One [staged, target] entry of a journal: the target a plain file name of the folder, the
    source the staged file gpuplan names for that target (STAGED), and, when it is there, a regular
    file with no other name, not a link, symbolic or hard (what it points to is never moved in, nor shown)."""
    if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(n, str) for n in pair)):
        raise _refused(journal, f"an entry is not a pair of file names: {str(pair)[:80]}")
    source, target = pair
    if not _plain_name(target) or target.startswith(".") or target == JOURNAL:
        raise _refused(journal, f"it names {target[:80]!r}, not a file of this folder")
    if not (_plain_name(source) and source.startswith(f".{target}.")
            and re.fullmatch(STAGED_TAIL, source[len(target) + 2:])):
        raise _refused(journal, f"it would move {source[:80]!r}, which is not a file gpuplan staged for {target!r}")
    path = journal.parent / source
    if os.path.lexists(path):
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:   # gpuplan's staged files have one name
            raise _refused(journal, f"{source!r} is a link or not a file")
    return path, journal.parent / target


def _plain_name(name: str) -> bool:
    """A name of a file directly in a folder: no separator, not . or .., no NUL."""
    return bool(name) and name not in (".", "..") and not any(c in name for c in "/\\\0")


def _refused(journal: Path, why: str) -> ProblemError:
    return ProblemError(f"an interrupted write left a journal that is not followed: {why}", file=str(journal),
                        fix="check the folder's files by hand (the old and the new ones are there), then delete "
                            "the journal")


def clean_stale(folder: str | Path) -> list[str]:
    """Delete the staged files (STAGED) a killed write left in `folder` and no journal names: those of a
    process of this host that is no longer running, and any older than STALE_SECONDS. A live write's
    staged files are kept (its process runs; a file on another host's share waits the hour). Returns
    the names deleted. Why: 37 of them stayed after random SIGKILLs, 28 in one CSV folder (issue 47)."""
    folder, deleted = Path(folder), []
    if os.path.lexists(folder / JOURNAL):
        return deleted
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return deleted
    for entry in entries:
        found = STAGED.fullmatch(entry.name)
        if found and _stale(entry, found):
            try:
                os.unlink(entry.path)
                deleted.append(entry.name)
            except OSError:
                pass   # another cleaner was first, or the folder is read-only: nothing is lost
    return deleted


def _stale(entry: os.DirEntry, found: re.Match) -> bool:
    """Whether a staged file belongs to no running write (see clean_stale)."""
    try:
        age = time.time() - entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return False
    if age > STALE_SECONDS:
        return True
    return found["host"] == _host() and not _running(int(found["pid"]))


def _running(pid: int) -> bool:
    """Whether a process `pid` runs on this machine (True when it cannot be told: nothing is deleted)."""
    if os.name != "posix":
        return True
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def finite(data: Any) -> Any:
    """`data` with every float that is not finite (NaN, ±infinity) as None, in dicts, lists and tuples.
    Why: Python writes them as NaN and -Infinity, which no JSON reader accepts (issue 47:
    `negotiate --json` printed "target_cost_low": -Infinity). In gpuplan's numbers such a value is
    an interval's open end: a low end of -inf means nothing was proven below the known cost, a high
    end of +inf that no plan is known; null says "not known" in JSON."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: finite(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(value) for value in data]
    return data


def json_text(data: Any, *, indent: int | None = 2) -> str:
    """The one JSON encoder of what gpuplan prints and writes (--json, frontier's plan files): every
    number finite (`finite`, then allow_nan=False as the guard), non-ASCII text kept as written,
    anything else (dates, paths) as its text."""
    return json.dumps(finite(data), indent=indent, ensure_ascii=False, allow_nan=False, default=str)


def csv_cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet will show as text: text starting =, +, -, @, tab or CR gets a
    leading single quote (OWASP); anything else, numbers included, is returned as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def csv_frame(frame):
    """A copy of a pandas DataFrame whose text cells went through `csv_cell` (for DataFrame.to_csv)."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype.kind not in "biufcmM":   # not a number, bool or date column: text may be in it
            out[col] = out[col].map(csv_cell)
    out.columns = [csv_cell(col) if isinstance(col, str) else col for col in out.columns]   # a vendor's name heads a column
    return out


def text_cells(sheet) -> None:
    """Every formula openpyxl made of a string in `sheet` becomes a text cell. openpyxl turns any
    string starting '=' into a formula: a job named =HYPERLINK(…) was a live link. Run it on a
    sheet after its data is in and before the writer's own formulas are added."""
    for row in sheet.iter_rows():
        for cell in row:
            if cell.data_type == "f" and isinstance(cell.value, str):
                cell.data_type = "s"


def text_cell(cell, value: Any) -> None:
    """Put `value` in an openpyxl cell as data: a string is text, never a formula. For cells written
    after `text_cells` ran (a sheet's headers in words): a vendor named =HYPERLINK(…) headed a
    cash_by_month column as a live formula (issue 47)."""
    cell.value = value
    if cell.data_type == "f":
        cell.data_type = "s"


def require_openpyxl(key: str | None = "--xlsx"):
    """The openpyxl module, or a ProblemError (naming the option `key`) that says how to install it:
    .xlsx support is an optional extra (pip install .[excel])."""
    try:
        import openpyxl
    except ImportError:
        raise ProblemError("writing and reading .xlsx needs openpyxl", key=key,
                           fix="pip install .[excel] (or pip install openpyxl), or use --csv DIR") from None
    return openpyxl
