"""The words the analyses share for what a run left undetermined: not analysed, not determined, not
proven, and why (the run's time budget, or Ctrl-C).

Why a module (issue 44): explain and why each wrote "not determined within the time limit", "not
analysed: the run's time budget ran out" and "not proven within the time" themselves, each with its
own Ctrl-C variant, and negotiate said "the run's time budget (--max-seconds) ran out" where why said
"the run's time budget ran out (raise --max-seconds)" of the same end; two copies of a wording drift.
Each function says the time-limit case, or the Ctrl-C one when the user stopped the run
(solver.clock.ctrl_c_or decides which). The words of a solve that found no plan, or never started,
are solver.clock's (`no_plan_found`, `not_started`): below the api, where solver.api and the probe
engine reach them too, which this module (above them) is not.
"""

from __future__ import annotations

from solver.clock import ctrl_c_or

OUT_OF_TIME = "the run's time budget ran out (raise --max-seconds)"
"""Why something was left undetermined when the run's time budget ended it."""
STOPPED = "the run was stopped (Ctrl-C)"
"""Why something was left undetermined when Ctrl-C ended the run."""
NOT_ANALYSED = "not analysed"


def no_plan_text(hint: str = "") -> str:
    """A solve that ended with no plan and no proof: "not determined within the time limit (hint)"."""
    return ctrl_c_or("not determined within the time limit" + (f" ({hint})" if hint else ""),
                     "not determined: the run was stopped (Ctrl-C)")


def not_analysed_text() -> str:
    """A question never asked: the run's budget was spent (or Ctrl-C came) before its solve could start."""
    return ctrl_c_or(OUT_OF_TIME, STOPPED)


def not_proven_text(more_time: str) -> str:
    """An interval a stopped solve reached, not proven: "(not proven within the time; raise …)"."""
    return ctrl_c_or(f"(not proven within the time; raise {more_time})", "(not proven: the run was stopped by Ctrl-C)")
