"""Why preprocessing left a configuration out for a job: one small record, made once.

Why a record, not a line of text: the quick infeasibility reasons (solver.api), the
runners-up (solver.analysis.why) and the negotiation's "unusable" offers all sort these
reasons by kind and quote them. They used to split "config: kind: text" strings apart
again; now each reads the fields, and the words are rendered in one place (`text`),
exactly as the strings read.
"""

from __future__ import annotations

from dataclasses import dataclass

CODES = ("restrict", "stack", "spot", "residency", "precision", "memory", "fabric", "window", "lead_time", "capacity",
         "dominated")
"""Every reason preprocessing gives; stack and the last six are written `<code>: <detail>`."""
_WRITTEN_WITH_CODE = frozenset({"stack", "memory", "fabric", "window", "lead_time", "capacity", "dominated"})


@dataclass(frozen=True)
class Exclusion:
    """Configuration `config` cannot carry the job, for reason `code`; `detail` says it in words."""

    code: str       # one of CODES
    config: str     # the configuration key, `<offer>:<interconnect>`
    detail: str     # the words after the code (for restrict, spot, residency, precision: all of them)

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown exclusion code {self.code!r}")

    @property
    def text(self) -> str:
        """The reason as users read it: `memory: the model does not fit …`, or the detail alone."""
        return f"{self.code}: {self.detail}" if self.code in _WRITTEN_WITH_CODE else self.detail

    @property
    def kind(self) -> str:
        """What one line of a summary stands for: the code where the words start with it;
        otherwise the words themselves (they name the place: one line per datacenter)."""
        return self.code if self.code in _WRITTEN_WITH_CODE else self.detail

    def __str__(self) -> str:
        return f"{self.config}: {self.text}"
