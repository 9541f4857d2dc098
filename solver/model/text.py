"""Text from files we did not write (problems, catalogs, quote sheets, sacct, SkyPilot lists):
no control characters in it, and none reaches a terminal.

Why: a job, vendor or datacenter named with `ESC[2J` (clear screen), `ESC]0;…` (window title)
or `ESC]8;;http://…` (a hidden link) reached the terminal raw in `solve`, `why` and
`catalog show`; rich escapes its markup, not terminal sequences. Names are refused at load
(`control_character`, used by the models' validators), and every other piece of outside
text is shown with its control characters written out (`shown`).
"""

from __future__ import annotations

import re

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 controls (tab and newline excepted), DEL, and the bidirectional overrides that
make text read differently from what it is ("Trojan Source")."""


def control_character(text: str) -> str | None:
    """The first control character in `text`, written out (U+001B), or None."""
    found = CONTROL.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def shown(text: str) -> str:
    """`text` with each control character written as an escape (`\\x1b`, `\\u202e`): safe to print."""
    return CONTROL.sub(lambda m: (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                  else f"\\u{ord(m.group()):04x}"), text)


def refuse_control(value: object) -> object:
    """A validator's check: `value` (or the strings in a list of them) without control characters."""
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if isinstance(item, str):
            found = control_character(item)
            if found:
                raise ValueError(f"contains the control character {found} at position "
                                 f"{CONTROL.search(item).start() + 1} ({shown(item)[:60]!r})")
    return value
