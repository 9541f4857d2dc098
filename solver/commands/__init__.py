"""Commands beyond solve/estimate/catalog, one module each, every one with `register(app)`.

Why a package: each analysis command (whatif, sweep, frontier, negotiate, ...) is parsed
and rendered in its own short module, so cli.py stays a table of contents.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer


def register_all(app: typer.Typer) -> None:
    """Import every command module here (except `common`) and let it add its commands."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name != "common":
            importlib.import_module(f"{__name__}.{info.name}").register(app)
