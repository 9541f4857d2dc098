"""The edit language of what-if, sweep and negotiation: `PATH=VALUE`, `PATH*=k`, `PATH+=k`.

Why one small language: users ask "what if this vendor were 10 % cheaper, that site had
300 kW, the deadline were 45 days?" — a row selection, a field and a change. Edits are
applied to plain copies of the validated models and the result is validated again, so a
what-if can never build a problem that `gpuplan solve` would reject.

Paths (dots between parts; `[k=v,...]` selects rows by their columns, `[*]` all rows):
    budget=2e6                         redundancy=0.2            horizon_days=60
    jobs.pretrain.deadline_days=45     jobs[*].mfu=0.45          jobs[0].tokens*=1.5
    offers.ali-a100-m.price*=0.9       offers[vendor=aliyun].price*=0.9
    offers[gpu=A100-80G,mode=monthly].max_nodes+=4
    datacenters.Yizhuang.power_quota_kw=300                      gpus.H800-80G.default_mfu=0.5
    restrict.gpus=[A100-80G,H800-80G]  (values are read as YAML: numbers, lists, null)
A selector's value may be quoted, "..." or '...', when it holds a dot, bracket, comma or
`=` (a backslash escapes the quote): jobs[name="run [v2]"].deadline_days=45.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from solver.errors import ProblemError
from solver.model.catalog import Catalog
from solver.model.paths import row_path  # noqa: F401 - part of the edit language's API (solver.model.paths)
from solver.model.problem import Problem

CATALOG_TABLES = {"offers": "offer", "gpus": "gpu", "datacenters": "datacenter"}


@dataclass(frozen=True)
class Edit:
    """One parsed edit; `text` is what the user wrote, kept for tables and messages."""

    text: str
    path: tuple[str, ...]     # names and "[selector]" parts
    op: str                   # "=", "*=", "+="
    value: Any


@dataclass(frozen=True)
class Change:
    """What one edit did to one field of one row."""

    edit: str
    where: str
    old: Any
    new: Any


def parse_edit(text: str) -> Edit:
    """`offers[vendor=x].price*=0.9` → Edit; ProblemError naming the edit when it does not parse."""
    path_text, op, raw = _split_operator(text)
    if not path_text and list(_scan(text))[-1][2] != 0:
        raise ProblemError("unbalanced [ ] or quotes", key=text, fix='quote a name that holds brackets: jobs[name="run [v2]"]')
    if not path_text:
        raise ProblemError("not an edit", key=text, fix="write PATH=VALUE, PATH*=FACTOR or PATH+=AMOUNT, "
                           "e.g. offers[vendor=aliyun].price*=0.9")
    parts = _path_parts(path_text, text)
    value = _read_value(raw)
    if op != "=" and not _is_number(value):
        raise ProblemError(f"{op} needs a number, got {raw!r}", key=text, fix="e.g. price*=0.9 or max_nodes+=4")
    return Edit(text.strip(), parts, op, value)


def _split_operator(text: str) -> tuple[str, str, str]:
    """(path, operator, value) at the first `=` outside brackets and quotes; ("", "", "") when there is none."""
    for i, ch, depth in _scan(text):
        if ch == "=" and depth == 0:
            op = text[i - 1] + "=" if i and text[i - 1] in "*+" else "="
            return text[:i - len(op) + 1].strip(), op, text[i + 1:].strip()
    return "", "", ""


def _scan(text: str):
    """(index, character, bracket depth) of every character outside quotes. Inside brackets,
    quoted text ("..." or '...', a backslash escapes) is skipped whole, so a selector's value
    may hold [ ] . , =. Ends with (len(text), "", depth) or, for an open quote, depth -1."""
    depth, quote, escaped = 0, None, False
    for i, ch in enumerate(text):
        if quote:
            escaped, quote = (False, quote) if escaped else (ch == "\\", None if ch == quote else quote)
            continue
        if ch in "\"'" and depth > 0:
            quote = ch
            continue
        depth += (ch == "[") - (ch == "]")
        yield i, ch, depth
    yield len(text), "", -1 if quote else depth


def _path_parts(path_text: str, text: str) -> tuple[str, ...]:
    """Names between dots and whole `[...]` selectors (quotes inside kept for _conditions)."""
    parts: list[str] = []
    start = 0
    for i, ch, depth in _scan(path_text):
        if depth < 0 or (not ch and depth):
            raise ProblemError("unbalanced [ ] or quotes in the path", key=text,
                               fix='quote a name that holds brackets: jobs[name="run [v2]"]')
        if (ch == "[" and depth == 1) or (ch in (".", "") and depth == 0):
            parts.append(path_text[start:i])
            start = i + (ch == ".")
        elif ch == "]" and depth == 0:
            parts.append(path_text[start:i + 1])
            start = i + 1
    return tuple(p.strip() for p in parts if p.strip())


def _conditions(inner: str) -> list[tuple[str, str | None]]:
    """A selector's `column=value, ...`, split at commas outside quotes; quoted values unquoted
    (None: no `=`)."""
    cuts = [i - 1 for i, ch, depth in _scan(f"[{inner}") if ch == "," and depth == 1]
    pieces = [inner[a + 1:b] for a, b in zip([-1, *cuts], [*cuts, len(inner)])]
    out = []
    for cond in filter(None, (p.strip() for p in pieces)):
        column, eq, value = cond.partition("=")
        out.append((column.strip(), _unquote(value.strip()) if eq else None))
    return out


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def _read_value(raw: str) -> Any:
    """YAML scalars and lists; 3e7 (a string to YAML 1.1) is a number here."""
    if not raw:
        return None
    number = _number(raw)
    if number is not None:
        return int(number) if number.is_integer() and "." not in raw and "e" not in raw.lower() else number
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw


def apply_edits(problem: Problem, catalog: Catalog, edits: list[Edit | str]) -> tuple[Problem, Catalog, list[Change]]:
    """Apply edits in order to copies; validate the result like a loaded file would be."""
    prob = problem.model_dump(mode="python", by_alias=True, exclude_none=False)
    cat = {t: {k: row.model_dump(mode="python", by_alias=True) for k, row in getattr(catalog, t).items()}
           for t in CATALOG_TABLES}
    changes: list[Change] = []
    for edit in edits:
        edit = parse_edit(edit) if isinstance(edit, str) else edit
        root = edit.path[0]
        if root in CATALOG_TABLES:
            changes += _apply_rows(cat[root], edit, root)
        else:
            changes += _apply_problem(prob, edit)
    try:
        new_problem = Problem.model_validate(prob)
        new_catalog = Catalog.model_validate({**cat, "path": catalog.path})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        what = err["msg"].removeprefix("Value error, ")
        raise ProblemError(f"the edits make an invalid input: {where + ': ' if where else ''}{what}",
                           key="; ".join(e if isinstance(e, str) else e.text for e in edits),
                           fix="change the edit's value") from None
    return new_problem, new_catalog, changes


def _apply_rows(table: dict[str, dict], edit: Edit, name: str) -> list[Change]:
    if len(edit.path) != 3:
        raise ProblemError("a catalog edit is TABLE.ROW.COLUMN or TABLE[SELECTOR].COLUMN", key=edit.text,
                           fix=f"e.g. {name}[*].{_example_column(name)}*=1.1")
    selector, column = edit.path[1], edit.path[2]
    rows = _select(table, selector, edit, name)
    out = []
    for key in rows:
        row = table[key]
        if column not in row:
            raise ProblemError(f"{name} have no column {column!r}", key=edit.text,
                               fix=f"columns: {', '.join(sorted(row))}")
        old = row[column]
        row[column] = _combine(old, edit)
        out.append(Change(edit.text, f"{name}.{key}.{column}", old, row[column]))
    return out


def _select(table: dict[str, dict], selector: str, edit: Edit, name: str) -> list[str]:
    """Row keys chosen by `key`, `[*]` or `[column=value,...]`; at least one, or a ProblemError."""
    if not selector.startswith("["):
        if selector not in table:
            raise ProblemError(f"no {CATALOG_TABLES[name]} {selector!r}", key=edit.text,
                               fix=f"use one of {', '.join(sorted(table))}")
        return [selector]
    inner = selector[1:-1].strip()
    if inner == "*":
        return list(table)
    tests = []
    for column, value in _conditions(inner):
        if value is None or not any(column in row for row in table.values()):
            raise ProblemError(f"bad selector {column!r}", key=edit.text,
                               fix=f"write [column=value], columns: {', '.join(sorted(next(iter(table.values()))))}")
        tests.append((column, value))
    chosen = [k for k, row in table.items() if all(_matches(row.get(c), v) for c, v in tests)]
    if not chosen:
        column, value = tests[0]
        seen = sorted({str(row.get(column)) for row in table.values()})
        raise ProblemError(f"{selector} matches no row of {name}", key=edit.text,
                           fix=f"{column} is one of {', '.join(seen)}")
    return chosen


def _matches(cell: Any, wanted: str) -> bool:
    if isinstance(cell, (tuple, list)):
        return wanted in [str(c) for c in cell]
    return str(cell) == wanted or (_is_number(cell) and _is_number(_number(wanted)) and float(cell) == _number(wanted))


def _apply_problem(prob: dict, edit: Edit) -> list[Change]:
    """Walk the problem's keys; a list (jobs) takes the next part as its selector."""
    targets: list[tuple[dict, str]] = [(prob, "")]
    path, k, created = edit.path, 0, set()
    while k < len(path) - 1:
        part, nxt = path[k], []
        for node, where in targets:
            if part.startswith("[") or part not in node:
                keys = ", ".join(sorted(node))
                raise ProblemError(f"no key {part!r} here", key=edit.text, fix=f"keys: {keys}")
            child = node[part]
            if isinstance(child, list):
                if k + 2 >= len(path):
                    raise ProblemError(f"{part} needs an entry and a key", key=edit.text,
                                       fix=f"e.g. {part}[*].deadline_days=45")
                nxt += [(child[i], f"{where}{part}.{child[i].get('name', i)}.")
                        for i in _pick_list(child, path[k + 1], edit, part)]
            elif child is None and k + 2 == len(path):
                node[part] = {}  # an optional section (restrict, model) the file left out
                created.add(id(node[part]))
                nxt.append((node[part], f"{where}{part}."))
            elif isinstance(child, dict):
                nxt.append((child, f"{where}{part}."))
            else:
                raise ProblemError(f"{part!r} is a value, not a section", key=edit.text, fix=f"end the path at {part}")
        k += 2 if isinstance(targets[0][0].get(part), list) else 1
        targets = nxt
    field, out = path[-1], []
    for node, where in targets:
        if field not in node and id(node) not in created:  # a new section's keys are checked by validation
            raise ProblemError(f"no key {field!r}", key=edit.text, fix=f"keys: {', '.join(sorted(node))}")
        old = node.get(field)
        node[field] = _combine(old, edit)
        out.append(Change(edit.text, f"{where}{field}", old, node[field]))
    return out


def _pick_list(items: list, selector: str, edit: Edit, part: str) -> list[int]:
    """jobs.NAME, jobs[0], jobs[*], jobs[kind=lora] → indices (at least one); selectors as for catalog rows."""
    inner = selector[1:-1].strip() if selector.startswith("[") else None
    if inner is None or inner.isdigit():
        wanted = [i for i, it in enumerate(items) if (it.get("name") == selector if inner is None else i == int(inner))]
        if not wanted:
            names = ", ".join(str(it.get("name", i)) for i, it in enumerate(items))
            raise ProblemError(f"{part} has no entry {selector!r}", key=edit.text, fix=f"entries: {names}")
        return wanted
    return [int(k) for k in _select({str(i): it for i, it in enumerate(items)}, selector, edit, part)]


def _combine(old: Any, edit: Edit) -> Any:
    if edit.op == "=":
        return edit.value
    if isinstance(old, (tuple, list)) and all(_is_number(x) for x in old):
        return type(old)(_arith(x, edit) for x in old)
    if not _is_number(old):
        raise ProblemError(f"{edit.op} needs a number here, the current value is {old!r}", key=edit.text,
                           fix="use = to set it")
    return _arith(old, edit)


def _arith(old: float, edit: Edit) -> float:
    """Integers stay integers when the result is whole (max_nodes+=4, deadline_days*=1.5 → 45)."""
    value = old * edit.value if edit.op == "*=" else old + edit.value
    return int(value) if isinstance(old, int) and float(value).is_integer() else value


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _example_column(name: str) -> str:
    return {"offers": "price", "gpus": "default_mfu", "datacenters": "power_quota_kw"}[name]
