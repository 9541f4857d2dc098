"""The terminal never receives an escape sequence from data: every rich Console in the process
writes its text with control characters spelled out (solver.model.text.shown).

Why at the console, not at each print: names from problems and catalogs are refused at load
when they hold a control character, but outside text also reaches the terminal in error
messages (an unknown key, a file name, a quote sheet's cell, a sacct user) through dozens of
print calls, and rich escapes only its own markup. rich renders a line as segments: text
segments (the data) and control segments (its own cursor moves and the like); only the text
segments are cleaned, and rich's styles are added after, so colours still work.
"""

from __future__ import annotations

from rich.console import Console
from rich.segment import Segment

from solver.model.text import CONTROL, shown

_render_buffer = Console._render_buffer


def _clean_render_buffer(self: Console, buffer) -> str:
    return _render_buffer(self, (seg if seg.control or not CONTROL.search(seg.text)
                                 else Segment(shown(seg.text), seg.style, seg.control) for seg in buffer))


def install() -> None:
    """Clean every Console's text from now on (idempotent)."""
    Console._render_buffer = _clean_render_buffer
