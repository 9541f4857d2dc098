"""What a plan shows, re-derived from its schedule: the checks solver.verify.rules adds for the fields
people read (`ShownFields`, a part of its verifier).

Why: the verifier checked the schedule's rules and total, not the summary printed from it. In a
fault run, changing an allocation's cost, vendor, datacenter or GPU, a job's finish day, work
or GPUs, or moving money between cost_breakdown parts (total kept) passed verification in 10
of 10 plans each: a bug in solver.milp.extract could have shown the wrong vendor or price.
Each field is derived here again from the schedule, the problem and the catalog, in code of
its own (no MILP code): allocation lines from contracts and runs of equal rentals, their cost
from the offer's price, the jobs' figures from their assignments, and the cost parts from the
same prices split as the breakdown names them.
"""

from __future__ import annotations

import math
from collections import defaultdict

from solver.verify.helpers import node_parts, term_days

TOL_CENTS = 0.01
"""Each shown amount is rounded to the cent."""


class ShownFields:
    """Checks of the shown fields; mixed into solver.verify.rules' verifier, whose problem (`p`),
    catalog (`cat`), plan, period length (`pd`), `hours`, `rate`, `need`, `_work` and `fail` they use."""

    def _lines(self) -> list[tuple[tuple, dict[str, float]]]:
        """The allocation lines the schedule makes, each (offer, interconnect, nodes, start, end)
        with its cost parts in the problem's currency: one per contract, one per run of
        consecutive periods of an offer rented at the same size."""
        lines = []
        for c in self.plan.schedule.contracts:
            offer = self.cat.offers.get(c.offer)
            if offer is None or c.interconnect not in offer.interconnect:
                continue
            start = c.start_period * self.pd
            parts = node_parts(offer, c.interconnect, term_days(offer), c.nodes)
            lines.append(((c.offer, c.interconnect, c.nodes, start, start + term_days(offer)),
                          {k: v * self.rate(offer) for k, v in parts.items()}))
        held: dict[tuple[str, str], dict[int, int]] = defaultdict(dict)
        for r in self.plan.schedule.rentals:
            offer = self.cat.offers.get(r.offer)
            if offer is not None and r.interconnect in offer.interconnect:
                held[r.offer, r.interconnect][r.period] = held[r.offer, r.interconnect].get(r.period, 0) + r.nodes
        for (name, ic), by_period in held.items():
            offer = self.cat.offers[name]
            run: list[int] = []
            for t in sorted(by_period) + [None]:
                if run and (t is None or t != run[-1] + 1 or by_period[t] != by_period[run[0]]):
                    parts: dict[str, float] = defaultdict(float)
                    for p in run:
                        for k, v in node_parts(offer, ic, self.hours(p) / 24, by_period[p]).items():
                            parts[k] += v * self.rate(offer)
                    end = min((run[-1] + 1) * self.pd, self.p.horizon_days)
                    lines.append(((name, ic, by_period[run[0]], run[0] * self.pd, end), dict(parts)))
                    run = []
                if t is not None:
                    run.append(t)
        return lines

    def _shown(self) -> None:
        """Every field the plan shows, against the schedule (run after the rules)."""
        lines = self._lines()
        self._shown_allocations(lines)
        self._shown_jobs()
        self._shown_parts(lines)

    def _shown_allocations(self, lines) -> None:
        derived = {key: sum(parts.values()) for key, parts in lines}
        shown = {}
        for a in self.plan.allocations:
            offer = self.cat.offers.get(a.offer)
            if offer is None:
                self.fail(f"allocations: offer {a.offer!r} is not in the catalog")
                continue
            said = (a.vendor, a.datacenter, a.gpu, a.mode, a.gpus)
            truth = (offer.vendor, offer.datacenter, offer.gpu, offer.mode, a.nodes * offer.gpus_per_node)
            if said != truth:
                self.fail(f"allocations: {a.offer} shows vendor/site/GPU/mode/GPUs {said}, the catalog gives {truth}")
            shown[a.offer, a.interconnect, a.nodes, a.start_day, a.end_day] = a.cost
        if len(shown) != len(self.plan.allocations) or set(shown) != set(derived):
            extra, missing = sorted(set(shown) - set(derived))[:2], sorted(set(derived) - set(shown))[:2]
            self.fail(f"allocations: the lines shown differ from the schedule's rentals (shown only: {extra}; "
                      f"in the schedule only: {missing})")
        for key, cost in shown.items():
            if key in derived and not math.isclose(cost, derived[key], abs_tol=TOL_CENTS + 1e-9 * abs(cost)):
                self.fail(f"allocations: {key[0]} from day {key[3]} shows {cost:,.2f}, its price gives "
                          f"{derived[key]:,.2f} {self.p.currency}")

    def _shown_jobs(self) -> None:
        per_period: dict[tuple[str, int], list] = defaultdict(list)
        for a in self.plan.schedule.assignments:
            if a.job in self.jobs and a.offer in self.cat.offers:
                per_period[a.job, a.period].append(a)
        for r in self.plan.jobs:
            job = self.jobs.get(r.name)
            if job is None:
                self.fail(f"jobs: {r.name!r} is not a job of the problem")
                continue
            mine = {t: pieces for (name, t), pieces in per_period.items() if name == r.name}
            offers = [self.cat.offers[a.offer] for pieces in mine.values() for a in pieces]
            finish = min((max(mine) + 1) * self.pd, self.p.horizon_days) if mine else 0
            gpus = max((sum(a.replicas * a.group_gpus for a in pieces) for pieces in mine.values()), default=0)
            done = sum(self._work(job, pieces, a) for pieces in mine.values() for a in pieces) / 1e18
            truth = (finish, gpus, sorted({o.gpu for o in offers}), sorted({o.datacenter for o in offers}))
            said = (r.finish_day, r.gpus, sorted(r.gpu_types), sorted(r.sites))
            if said != truth:
                self.fail(f"jobs: {r.name} shows finish day/GPUs/GPU types/sites {said}, its assignments give {truth}")
            need = self.need(job) / 1e18
            if not math.isclose(r.required_eflop, need, rel_tol=1e-6, abs_tol=0.0015):
                self.fail(f"jobs: {r.name} shows {r.required_eflop:,.3f} EFLOP required, it needs {need:,.3f}")
            # The plan counts work at the one size tier its job chose, which is never faster than this
            # verifier's per-period reading; so the work shown lies between the need and that reading.
            if not need * (1 - 1e-6) - 0.0015 <= r.done_eflop <= done * (1 + 1e-6) + 0.0015:
                self.fail(f"jobs: {r.name} shows {r.done_eflop:,.3f} EFLOP done, its assignments do {done:,.3f} "
                          f"and it needs {need:,.3f}")

    def _shown_parts(self, lines) -> None:
        want: dict[str, float] = defaultdict(float)
        for _, parts in lines:
            for k, v in parts.items():
                want[k] += v
        for k, v in self.data_parts.items():
            want[k] += v
        got = self.plan.cost_breakdown
        for part in sorted(set(want) | set(got)):
            if not math.isclose(got.get(part, 0.0), want[part], rel_tol=1e-6, abs_tol=1.0):
                self.fail(f"cost_breakdown: {part} shows {got.get(part, 0.0):,.2f}, the schedule gives "
                          f"{want[part]:,.2f} {self.p.currency}")

