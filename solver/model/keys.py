"""Which keys a model takes at a place in a file, and the nearest to one that was misspelt.

Why: an unknown key was reported as "unknown key", and a misspelt required key twice over
("deadline_days: required key is missing [and 1 more problem]") without ever naming the
key the user wrote (`deadline_day`). The loader's messages ask here for the keys allowed
where an error points, to say "did you mean" (solver.ingest.readers.from_validation).
"""

from __future__ import annotations

import difflib
import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

SHOWN = 8
"""The most names a message lists; the rest are counted."""


def keys_at(model: type[BaseModel], loc: tuple) -> list[str] | None:
    """The keys the model nested at `loc` (a pydantic error location without its last part)
    accepts, or None when the path cannot be followed (a union picked by its type name)."""
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) or next(
            (f for f in model.model_fields.values() if f.alias == part), None)
        if field is None:
            return None
        inner = _model_in(field.annotation)
        if inner is None:
            return None
        model = inner
    return [f.alias or name for name, f in model.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType, list, tuple, dict) or get_args(annotation):
        for arg in get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None


def nearest(word: str, names: list[str] | set[str]) -> str | None:
    """The name closest to `word` (a typo of it), or None when none is close."""
    found = difflib.get_close_matches(str(word), sorted(names), n=1, cutoff=0.75)
    return found[0] if found else None


def one_of(names, given: str | None = None) -> str:
    """'use one of a, b, c' for a fix, at most SHOWN names and a count of the rest; with the
    nearest to `given` first as 'did you mean …?'. Why: an unknown offer in restrict.offers with
    a catalog of 60,000 offers printed all of them, one line of 3.26 MB."""
    names = sorted(set(map(str, names)))
    near = nearest(given, names) if given is not None else None
    listed = ", ".join(names[:SHOWN]) + (f", … ({len(names) - SHOWN} more)" if len(names) > SHOWN else "")
    return (f"did you mean {near}? Otherwise use one of {listed}" if near else f"use one of {listed}")
