"""The plan's periods: uniform (`period_days`) or buckets cut at every event (`periods: events`).

Why buckets: the model's size grows with its periods, and on long stretches nothing changes
from one day to the next (a 300-configuration, 60-day instance: the LP takes 74–87 s with
daily periods, 4.2 s with 5-day ones). A bucket of k days in which nothing changes holds the
same decision on each of its days, so one variable per bucket replaces k.

Event buckets (`event_periods`) are cut at
- day 0 and the horizon;
- each job's first usable day at each site (start_day plus the dataset's transfer wait) and
  its deadline;
- each offer's lead time;
- every day a contract term away from a cut, forwards and backwards, for each committed
  offer's term T (the cuts are closed under ±T inside the horizon): a contract starts on a
  cut, so its term ends on one (no day of it is lost to a part bucket), and the T-shift of
  a bucket is again a bucket.
Each such stretch is then split in pieces of 1, 2, 4, … days and the rest (`pieces`): any
number of days 0..k of it is a sum of some pieces, so a node count may step once inside the
stretch (a job that needs 3 node-days of a 10-day stretch holds one node for the 3-day
pieces, not for 10 days).

Exactness. Every bucket decision is a daily decision held on each of its days at the same
cost, so the bucket model's optimum is never below the daily model's (`period_days: 1`).
They are equal
- for the LP relaxation of the rows, always (the covering cuts, solver.milp.cover, round a
  job's need to whole nodes per period, so they differ): between cuts every coefficient (rent
  per node-day, work per replica-day, stock, power, windows, lead times) is constant, so
  averaging a daily solution over each stretch keeps every row; a contract started on day s
  inside a stretch [b, e) is the mix (e − s)/(e − b) of one started at b and the rest of one
  started at e, which covers the same days on average (the closure makes [b+T, e+T) one stretch);
- for the MILP, when moreover every offer is paid by the hour (no contract: a daily plan may
  start one mid-stretch, which no bucket plan can), a node holds whole groups (group ≤ node;
  several jobs on one node type share it slot by slot), and no per-day row couples offers or
  counts days before a job's finish (power quotas and fabric size tiers that do not bind, no
  volume discount, no storage). Then each offer's node-days in a stretch are q or q + 1
  nodes a day, and the q + 1 days are a union of pieces.
Where these fail the bucket plan may cost more than the daily one, never less, and it is
still a valid daily schedule: solver.milp.extract writes it day by day and solver.verify
checks it as any daily plan.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:
    from solver.model.catalog import Offer
    from solver.model.problem import Job, Problem


@dataclass(frozen=True)
class Periods:
    """Consecutive periods from day 0: period t is days [starts[t], end(t))."""

    starts: tuple[int, ...]
    horizon: int
    grain: int
    """Days per period of the schedule handed out (Schedule.period_days): the period itself
    when uniform, 1 for event buckets (their plan is written day by day)."""
    uniform: bool

    def end(self, t: int) -> int:
        return self.starts[t + 1] if t + 1 < len(self.starts) else self.horizon

    def hours(self) -> list[float]:
        return [24.0 * (self.end(t) - s) for t, s in enumerate(self.starts)]

    def first_from(self, day: int) -> int:
        """The first period starting on or after `day` (len(starts) when none does)."""
        return bisect.bisect_left(self.starts, day)

    def term_periods(self, lead_days: int, term_days: int) -> int:
        """Whole periods in a contract term from the first period past the lead time (uniform:
        term ÷ period, as if the plan ran on past the horizon): a price-per-hour estimate's divisor."""
        if self.uniform:
            return term_days // self.grain
        first = self.first_from(lead_days)
        if first == len(self.starts):
            return 0
        end_day = self.starts[first] + term_days
        return sum(1 for t in range(first, len(self.starts)) if self.end(t) <= end_day)

    def grain_hours(self, p: int) -> float:
        """Hours of the schedule's period p (the last one cut at the horizon)."""
        return 24.0 * (min(self.horizon, (p + 1) * self.grain) - p * self.grain)

    def period_of(self, p: int) -> int:
        """The period holding the schedule's period p."""
        return bisect.bisect_right(self.starts, p * self.grain) - 1

    def grains(self, t: int) -> range:
        """The schedule's periods that make up period t."""
        return range(self.starts[t] // self.grain, math.ceil(self.end(t) / self.grain))


def uniform_periods(period_days: int, horizon: int) -> Periods:
    """Periods of `period_days` days from day 0, the last one cut at the horizon."""
    return Periods(tuple(range(0, horizon, period_days)), horizon, period_days, uniform=True)


def problem_events(problem: Problem, offers: list[Offer],
                   wait: Callable[[Job, str], int]) -> tuple[list[int], list[int], int]:
    """(event days, contract terms, horizon) of a problem over the offers it may rent:
    `wait(job, datacenter)` is the days the job's dataset takes to reach the datacenter."""
    sites = sorted({o.datacenter for o in offers})
    events = [o.lead_time_days for o in offers]
    for job in problem.jobs:
        events += [job.deadline_days, *{job.start_day + wait(job, dc) for dc in sites}]
    terms = [o.term_days for o in offers if o.committed]
    return events, terms, problem.horizon_days


def event_periods(events: Iterable[int], terms: Iterable[int], horizon: int) -> Periods:
    """Buckets cut at the events and their shifts by whole terms, each split into pieces."""
    cuts = closed_cuts(events, terms, horizon)
    starts: list[int] = []
    for a, b in zip(cuts, cuts[1:]):
        day = a
        for length in pieces(b - a):
            starts.append(day)
            day += length
    return Periods(tuple(starts), horizon, 1, uniform=False)


def closed_cuts(events: Iterable[int], terms: Iterable[int], horizon: int) -> list[int]:
    """Sorted cut days: 0, the horizon, the events inside it, and every day a whole number of
    some term away from a cut (repeated until no term adds a day)."""
    cuts = {0, horizon} | {e for e in events if 0 < e < horizon}
    steps = sorted({t for t in terms if 0 < t < horizon})
    grown = True
    while grown:
        grown = False
        for step in steps:
            residues = {c % step for c in cuts}
            more = {d for r in residues for d in range(r, horizon + 1, step)} - cuts
            if more:
                cuts |= more
                grown = True
    return sorted(cuts)


def pieces(days: int) -> list[int]:
    """Lengths 1, 2, 4, … and the rest, summing to `days`: every 0..days is a sum of some."""
    out, power = [], 1
    while sum(out) + power <= days:
        out.append(power)
        power *= 2
    rest = days - sum(out)
    return out + [rest] if rest else out
