"""Every command's --help shows its help texts whole: rich markup must not eat an example.

Typer renders help through rich, which reads `[word]` as a style tag and drops it: whatif's
example `--set 'offers[vendor=sinnet].price*=0.9'` printed as `offers.price*=0.9`, an edit
that exits 2. Each bracketed piece of text a command or option documents must reach the
rendered help (escaped as `\\[` in the source).
"""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from solver.cli import app

BRACKETED = re.compile(r"\[[^\]\[]*\]")


def commands(group, path: tuple[str, ...] = ()):
    """Every (sub)command of the click tree typer builds, with the words that call it."""
    yield path, group
    for name, sub in sorted(getattr(group, "commands", {}).items()):
        yield from commands(sub, (*path, name))


def documented(command) -> list[str]:
    """Bracketed pieces of the command's own and its parameters' help texts, as the user should see them."""
    texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
    return [piece.replace("\\", "") for text in texts for piece in BRACKETED.findall(text.replace("\\[", "["))]


CASES = [(path, piece) for path, command in commands(typer.main.get_command(app)) if path
         for piece in documented(command)]


def test_some_help_text_has_brackets():
    """The check below has something to check (whatif's example at least)."""
    assert any(path == ("whatif",) for path, _ in CASES), CASES


@pytest.mark.parametrize("path, piece", CASES, ids=[" ".join(p) + " " + s for p, s in CASES])
def test_bracketed_help_text_is_shown(path, piece):
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    shown = re.sub(r"[\s│]+", " ", result.output)
    assert re.sub(r"\s+", " ", piece) in shown, (piece, result.output)
