"""The catalog's and the problem's readers: a text file the user wrote, YAML, a CSV table validated row
by row into its model, and a pydantic error as one ProblemError naming the file, the key (row and
column for CSV) and the fix.

`solver.load` reads catalogs and problems with them; the importers of this package (SkyPilot price
lists, quote sheets) read and check the tables they write with the same code, so an imported catalog
fails as a hand-written one would.
"""

from __future__ import annotations

import codecs
import csv
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from solver.errors import ProblemError
from solver.model.catalog import LEGACY_COLUMNS, Datacenter, Gpu, Offer
from solver.model.keys import keys_at, nearest
from solver.model.problem import Problem

TABLES: dict[str, tuple[type[BaseModel], str]] = {
    "gpus.csv": (Gpu, "gpu"),
    "datacenters.csv": (Datacenter, "datacenter"),
    "offers.csv": (Offer, "offer"),
}



def csv_rows(path: Path, *, what: str = "table",
             fix: str = "save it as comma-separated UTF-8 text with a header row") -> list[list[str]]:
    """Every record of a CSV file, as text (UTF-8, a byte-order mark dropped); a ProblemError naming the
    file when it is not UTF-8 or not CSV (the quote sheet's and SkyPilot's readers)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            return list(csv.reader(fh))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ProblemError(f"not a readable CSV {what} ({exc})", file=str(path), fix=fix) from None


def read_table(path: Path, model: type[BaseModel], key: str) -> dict[str, Any]:
    if not path.is_file():
        raise ProblemError("file not found", file=str(path), fix=f"every catalog needs {path.name}")
    try:
        columns, records = _csv_records(path)
    except (ValueError, csv.Error, UnicodeDecodeError) as exc:
        raise ProblemError(f"not a readable CSV table ({str(exc).strip()})", file=str(path),
                           fix="save it as comma-separated UTF-8 text with a header row") from None
    _check_columns(path, columns, model)
    rows: dict[str, Any] = {}
    for index, record in enumerate(records):
        cells = {col: (val.strip() or None) for col, val in record.items()}
        label = f"row {index + 2}" + (f" ({cells.get(key)})" if cells.get(key) else "")
        try:
            row = model.model_validate(cells)
        except ValidationError as exc:
            raise from_validation(exc, str(path), prefix=label) from None
        ident = getattr(row, key)
        if ident in rows:
            raise ProblemError(f"duplicate {key} {ident!r}", file=str(path), key=label,
                               fix=f"each {key} must be unique")
        rows[ident] = row
    if not rows:
        raise ProblemError("table has no rows", file=str(path), fix="add at least one row")
    return rows


def _csv_records(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the non-blank rows of a CSV file, every cell as text (a missing trailing
    cell as ""); ValueError for an empty file, a repeated column or a row longer than the header.

    Why the csv module and not pandas: `gpuplan estimate` reads a catalog, and pandas alone took
    longer to import than the whole command may take (issue 34)."""
    with open(path, encoding="utf-8-sig", newline="") as fh:
        lines = [(reader.line_num, row) for reader in [csv.reader(fh, skipinitialspace=True)] for row in reader
                 if any(cell.strip() for cell in row)]
    if not lines:
        raise ValueError("no columns to parse from file")
    (_, columns), body = lines[0], lines[1:]
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise ValueError(f"column {repeated[0]!r} appears twice in the header")
    for line, row in body:
        if len(row) > len(columns):
            raise ValueError(f"expected {len(columns)} fields in line {line}, saw {len(row)}")
    return columns, [dict(zip(columns, row + [""] * (len(columns) - len(row)))) for _, row in body]


def _check_columns(path: Path, columns: list[str], model: type[BaseModel]) -> None:
    allowed = {f.alias or name for name, f in model.model_fields.items()}
    if model is Offer:
        allowed |= set(LEGACY_COLUMNS)
        both = [old for old, new in LEGACY_COLUMNS.items() if old in columns and new in columns]
        if both:
            raise ProblemError(f"columns {both[0]!r} and {LEGACY_COLUMNS[both[0]]!r} are the same column "
                               "(its older and newer name)", file=str(path), key=both[0],
                               fix=f"keep {LEGACY_COLUMNS[both[0]]!r} only")
    unknown = [c for c in columns if c not in allowed]
    if unknown:
        raise ProblemError(f"unknown column {unknown[0]!r}", file=str(path), key=unknown[0],
                           fix=f"allowed columns: {', '.join(sorted(allowed))}")
    required = {f.alias or name for name, f in model.model_fields.items() if f.is_required()}
    missing = sorted(required - set(columns))
    if missing:
        raise ProblemError(f"missing column {missing[0]!r}", file=str(path), key=missing[0],
                           fix=f"required columns: {', '.join(sorted(required))}")

class _DuplicateKey(Exception):
    def __init__(self, key: Any, line: int, first_line: int) -> None:
        self.key, self.line, self.first_line = key, line, first_line


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key written twice in one mapping is an error: the
    default keeps the last value and silently drops the first (e.g. two deadline_days in a job).
    Keys brought in by a `<<:` merge may still be overridden, as YAML intends."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise _DuplicateKey(key, line, seen[key])
                seen[key] = line
            except TypeError:       # an unhashable key: the base loader reports it
                continue
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: Path, what: str, fix: str = "check indentation and quoting") -> Any:
    """The parsed YAML of a file; ProblemError naming the file (and the line) when it is missing,
    a folder, malformed, or has a key written twice in one mapping."""
    if path.is_dir():
        examples = sorted(p.name for p in path.glob("*.yaml"))[:3]
        raise ProblemError(f"is a folder, but a {what} (YAML) is expected", file=str(path),
                           fix="give the path of a .yaml file" + (f", e.g. one in it: {', '.join(examples)}"
                                                                  if examples else ""))
    if not path.is_file():
        raise ProblemError(f"{what} not found", file=str(path), fix="check the path")
    text = read_text(path)
    try:
        _check_nesting(text, path)
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    except _DuplicateKey as dup:
        also = "on the same line" if dup.first_line == dup.line else f"also on line {dup.first_line}"
        raise ProblemError(f"key written twice in one mapping ({also}); only the last value would count",
                           file=str(path), key=f"{dup.key} (line {dup.line})",
                           fix="keep the value you mean and delete the other") from None
    except ValueError as exc:  # YAML reads 2027-13-01 as a date and calendar.date refuses it
        if "digits" in str(exc):   # Python refuses to read an integer of more than 4,300 digits
            raise ProblemError("a number too long to read (over 4,300 digits)", file=str(path),
                               fix="write the number you mean, e.g. horizon_days: 90") from None
        raise ProblemError(f"a date that does not exist ({exc})", file=str(path),
                           fix="write an existing date as YYYY-MM-DD, e.g. start_date: 2027-01-04") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ProblemError(f"not valid YAML ({getattr(exc, 'problem', exc)})", file=str(path),
                           key=f"line {mark.line + 1}" if mark else None, fix=fix) from None


MAX_NESTING = 50
"""The deepest nesting of lists and mappings a YAML file may have (a problem needs 5)."""


def _check_nesting(text: str, path: Path) -> None:
    """Refuse YAML nested deeper than MAX_NESTING before it is parsed. Why: PyYAML's parser
    recurses once per level, and 1,000 nested brackets ended in a RecursionError traceback;
    its scanner, used here, does not recurse."""
    depth = 0
    starts = (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken, yaml.BlockSequenceStartToken,
              yaml.BlockMappingStartToken)
    ends = (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken, yaml.BlockEndToken)
    for token in yaml.scan(text, Loader=yaml.SafeLoader):
        if isinstance(token, starts):
            depth += 1
            if depth > MAX_NESTING:
                raise ProblemError(f"nested more than {MAX_NESTING} levels deep", file=str(path),
                                   key=f"line {token.start_mark.line + 1}",
                                   fix="a problem needs a few levels (jobs, a job, its model): "
                                       "check the brackets and indentation")
        elif isinstance(token, ends):
            depth -= 1


def read_text(path: Path) -> str:
    """A text file the user wrote: UTF-8 (with or without a byte-order mark), or UTF-16 with one
    (what Windows Notepad saves as "Unicode"). Anything else is a ProblemError naming the file.

    Why: Chinese Windows editors save GBK by default; reading it as UTF-8 raised
    UnicodeDecodeError, a traceback instead of a message."""
    data = path.read_bytes()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass  # a BOM on something else: reported below as not UTF-8
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        at = exc.start + (len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0)  # counted after the BOM
        raise ProblemError(f"not UTF-8 text (byte 0x{data[at]:02x} at offset {at}; "
                           "GBK or another local encoding?)", file=str(path),
                           fix="save the file as UTF-8 (e.g. Notepad: Save As, Encoding: UTF-8)") from None

def from_validation(exc: ValidationError, file: str, prefix: str | None = None) -> ProblemError:
    """The first pydantic error as one message: key path, what was wrong, what is allowed.
    An unknown key one edit from a missing required key beside it is reported as that typo."""
    errors = exc.errors()
    typo = _typo(errors)
    err = typo or errors[0]
    path = _key_path(err["loc"])
    key = f"{prefix}, column {path}" if prefix and path else (prefix or path or None)
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        allowed = keys_at(MODELS[exc.title], err["loc"][:-1]) if exc.title in MODELS else None
        near = nearest(err["loc"][-1], allowed) if allowed else None
        msg, fix = "unknown key", "remove it or check its spelling (see README, file formats)"
        if near:
            missing = any(e["type"] == "missing" and e["loc"] == (*err["loc"][:-1], near) for e in errors)
            msg = f"unknown key; a typo of the required key {near}?" if missing else "unknown key"
            fix = f"rename it to {near}" if missing else f"did you mean {near}? Otherwise remove it"
    elif err["type"] == "missing":
        msg, fix = "required key is missing", "add it (see README, file formats)"
    else:
        fix = _fix_for(err)
        msg = _no_class_names(msg.removeprefix("Value error, "))
        got = err.get("input")
        if "input" in err and not isinstance(got, (dict, list)) and str(got) not in msg:
            msg = f"{msg} (got {got.isoformat() if hasattr(got, 'isoformat') else repr(got)[:200]})"
    more = len(errors) - 1 - (typo is not None)   # the typo's own "missing" is the same problem
    if more:
        msg += f" [and {more} more problem{'s' if more > 1 else ''}]"
    return ProblemError(msg, file=file, key=key, fix=fix or "correct the value (see README, file formats)")


MODELS = {model.__name__: model for model in (Problem, Gpu, Datacenter, Offer)}
"""The models a file is validated against, by the name pydantic gives its errors' title."""


def _typo(errors: list[dict]) -> dict | None:
    """An unknown key that is a near miss of a required key missing beside it (deadline_day)."""
    missing = {e["loc"] for e in errors if e["type"] == "missing"}
    for e in errors:
        if e["type"] == "extra_forbidden" and isinstance(e["loc"][-1], str):
            beside = [loc[-1] for loc in missing if loc[:-1] == e["loc"][:-1] and isinstance(loc[-1], str)]
            if nearest(e["loc"][-1], beside):
                return e
    return None


def _no_class_names(msg: str) -> str:
    """pydantic's words without our class names: "a valid dictionary or instance of Job" is
    "a mapping (key: value lines)"."""
    msg = re.sub(r"Input should be a valid dictionary or instance of \w+", "should be a mapping of keys "
                 "(key: value lines, or {key: value})", msg)
    return re.sub(r" or instance of \w+", "", msg)


def _fix_for(err: dict) -> str | None:
    """What to write instead, for the pydantic errors a hand-written file runs into most."""
    ctx = err.get("ctx") or {}
    limits = {"greater_than": "a value above {gt}", "greater_than_equal": "a value of at least {ge}",
              "less_than": "a value below {lt}", "less_than_equal": "a value of at most {le}"}
    if err["type"] in limits:
        bounds = {k: f"{v:g}" if isinstance(v, (int, float)) else v for k, v in ctx.items()}
        return "use " + limits[err["type"]].format(**{k: bounds.get(k) for k in ("gt", "ge", "lt", "le")})
    if err["type"] in ("float_parsing", "float_type", "int_parsing", "int_type", "int_from_float"):
        return "write a plain number without units or suffixes (20e9, not 20B; 60000, not 60k)" + (
            " (a whole number here)" if err["type"].startswith("int") else "")
    if err["type"] == "finite_number":
        return "write a finite number (.inf and .nan are not values here)"
    if err["type"] in ("bool_parsing", "bool_type"):
        return "write true or false"
    if err["type"] == "too_short":
        least = ctx.get('min_length', 1)
        return f"give at least {least} item{'s' if least != 1 else ''}"
    if err["type"] in ("literal_error", "enum"):
        return "use one of the values listed"
    if "is out of range" in err.get("msg", ""):
        return "use a value within that range (a unit or a digit wrong?)"
    if "control character" in err.get("msg", ""):
        return "delete it: names and text must be printable (no escape sequences)"
    if "invisible character" in err.get("msg", ""):
        return ("delete it (retype the name): an invisible character makes two names that look alike differ "
                "(zero-width spaces and joiners, byte-order marks)")
    return None


def _key_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
