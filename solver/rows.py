"""Rows as they are determined: what an analysis tells the command line while it works.

Why (issue 34, item 3): why, negotiate, the frontiers, what-if and the baselines each fill a
table one probe at a time, and a user watching a 60-second budget saw nothing until the
table was whole. An analysis announces each row the moment its figure is known (or known as
an interval); the command shows it at once — a line on stderr when stderr is a log or a
pipe, above the spinner in a terminal — and the whole table still comes at the end, on
stdout or as one JSON object. Library code never prints: it calls `ROWS.announce`, and
nothing is shown unless a command set a listener.

Importable from every layer (like solver.clock): it imports nothing of the project.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

Listener = Callable[[str, int, int | None], None]
"""(the row in words, rows determined so far, rows expected or None)"""


@dataclass
class RowNews:
    listener: Listener | None = None
    expected: int | None = None
    done: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def expect(self, count: int | None) -> None:
        """How many rows the table will have (None: not known yet); the count starts again."""
        with self._lock:
            self.expected, self.done = count, 0

    def announce(self, words: str) -> None:
        """One row is determined: `words` is the row as the user reads it (already translated)."""
        with self._lock:
            self.done += 1
            listener, done, expected = self.listener, self.done, self.expected
        if listener is not None:
            listener(words, done, expected)


ROWS = RowNews()
"""The running command's table news; set `ROWS.listener` to hear it (solver.commands.common)."""
