"""How likely a plan's job is to meet its deadline, in words, for the terminal and the HTML report.

Beside the MFU margin (how far the run may slow before the deadline slips) the plan says how
likely that is: `JobResult.deadline_probability`, read from the published runs' spread around
the estimate, or from a calibrated job's own measurement (solver.estimate.spread). Here only
the words; the numbers come with the plan.
"""

from __future__ import annotations

from solver.estimate.spread import PUBLISHED, RUNS
from solver.i18n import N_, _

DEADLINE_GLOSS = N_("In time: the probability that the job's run is fast enough for this plan's rentals, from the "
                    "spread of {runs} published training runs around the estimate (catalogs/reference); a job "
                    "calibrated on a measured run (mfu_measured) reads its measurement's ±10 per cent instead. With "
                    "confidence: a job is planned at the throughput it reaches with that probability.")


def deadline_gloss() -> str:
    """The jobs table's note on its `in time` column, in the active language."""
    return _(DEADLINE_GLOSS).format(runs=RUNS)


def deadline_text(job) -> str:
    """`58%`; `93%, planned at 66% of the estimate`; `97%, measured`; `—` without a margin."""
    if job.deadline_probability is None:
        return "—"
    words = [f"{job.deadline_probability:.0%}"]
    if job.planned_factor is not None and job.planned_factor < 1:
        words.append(_("planned at {share} of the estimate").format(share=f"{job.planned_factor:.0%}"))
    if job.throughput_spread == "measured":
        words.append(_("measured"))
    return _(", ").join(words)


def robust_quantile_text(factor: float) -> str:
    """What `--robust`'s factor means against the published runs:
    `× 0.8 is the P22 of published runs: 78% of them reach it`."""
    below = PUBLISHED.quantile_of(factor)
    return _("× {factor} is the P{q} of published runs: {share} of them reach it").format(
        factor=f"{factor:g}", q=f"{below * 100:.0f}", share=f"{1 - below:.0%}")
