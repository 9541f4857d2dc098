"""Errors are types: the CLI maps them to exit codes; library code never exits or prints."""

from __future__ import annotations


class ProblemError(Exception):
    """Bad input (exit 2): names the file, the key inside it and what is allowed."""

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None,
                 fix: str | None = None) -> None:
        self.file, self.key, self.fix, self.detail = file, key, fix, message
        super().__init__(self.render())

    def render(self) -> str:
        where = self.file or ""
        if self.key:
            where = f"{where}: {self.key}" if where else self.key
        text = f"{where}: {self.detail}" if where else self.detail
        if self.fix:
            text += f" Fix: {self.fix}"
        return text


class Infeasible(Exception):
    """No plan satisfies the problem (exit 1); `reasons` says what to relax.

    `proven` is False when the solver ran out of time before finding any plan.
    `explanation` is the optional JSON-ready payload of solver.analysis.explain
    (Explanation.to_dict(): smallest relaxations, with their words in "lines"); the
    library attaches it only when asked, since computing it means solving again.
    """

    def __init__(self, message: str, reasons: list[str] | None = None, *, proven: bool = True,
                 explanation: dict | None = None) -> None:
        self.reasons = reasons or []
        self.proven = proven
        self.explanation = explanation
        super().__init__(message)


class PlanRejected(Exception):
    """The independent verifier found a plan that breaks a constraint: never shown to a user."""

    def __init__(self, violations: list[str]) -> None:
        self.violations = violations
        super().__init__("plan failed verification: " + "; ".join(violations))
