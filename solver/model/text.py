"""Text from files we did not write (problems, catalogs, quote sheets, sacct, SkyPilot lists):
no control characters in it, and none reaches a terminal.

Why: a job, vendor or datacenter named with `ESC[2J` (clear screen), `ESC]0;…` (window title)
or `ESC]8;;http://…` (a hidden link) reached the terminal raw in `solve`, `why` and
`catalog show`; rich escapes its markup, not terminal sequences. Names are refused at load
(`control_character`, used by the models' validators), and every other piece of outside
text is shown with its control characters written out (`shown`).

Invisible characters are refused with them (issue 47): a zero-width space (U+200B), joiner
(U+200D) or byte-order mark (U+FEFF) inside a name makes two names that look identical differ,
so `restrict: [a]` misses the offer printed as `a`. `INVISIBLE` is every Unicode format
character (general category Cf, tests/cli/test_hostile_names.py checks the list against the
running Python's Unicode database) and the characters drawn as nothing (the combining grapheme
joiner, the Hangul fillers).
"""

from __future__ import annotations

import re

CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""C0 and C1 controls (tab and newline excepted), DEL, and the bidirectional overrides that
make text read differently from what it is ("Trojan Source")."""
INVISIBLE = ("\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u180e"
             "\u200b-\u200d\u2060-\u2065\u206a-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb"
             "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
             "\U000e0001\U000e0020-\U000e007f")
"""Characters drawn as nothing: the format characters (Cf) not among CONTROLS (zero-width space,
non-joiner and joiner, word joiner, byte-order mark, soft hyphen, tags, …), the combining grapheme
joiner and the Hangul fillers."""
CONTROL = re.compile(f"[{CONTROLS}{INVISIBLE}]")
"""What no name may hold and no terminal receives raw: CONTROLS and INVISIBLE."""
_INVISIBLE = re.compile(f"[{INVISIBLE}]")


def control_character(text: str) -> str | None:
    """The first control or invisible character in `text`, written out (U+001B), or None."""
    found = CONTROL.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def _kind(char: str) -> str:
    """How an error names a refused character: invisible (drawn as nothing) or control."""
    return "invisible character" if _INVISIBLE.fullmatch(char) else "control character"


def shown(text: str) -> str:
    """`text` with each control character written as an escape (`\\x1b`, `\\u202e`): safe to print."""
    return CONTROL.sub(lambda m: (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                  else f"\\u{ord(m.group()):04x}"), text)


def refuse_control(value: object) -> object:
    """A validator's check: `value` (or the strings in a list of them) without control or invisible characters."""
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if isinstance(item, str):
            found = CONTROL.search(item)
            if found:
                raise ValueError(f"contains the {_kind(found.group())} U+{ord(found.group()):04X} at position "
                                 f"{found.start() + 1} ({shown(item)[:60]!r})")
    return value
