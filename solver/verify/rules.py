"""The verifier's rules: a plan checked against its problem and catalog, no solver involved.

Why: a MILP can be mis-built in ways that still solve (a wrong coefficient, a missing
row). This module re-derives every rule from the problem text and the catalog rows —
units, windows, capacity, memory, work, cost — in its own code, so a plan is shown only
when two independent readings of the rules agree. The rules of a limit a user can relax
(the budget, a site's power quota, an offer's stock, a job's deadline) are that family's
check (solver.milp.families.<family>: `Family.verify`), which the verifier calls through
the registry, in the families' order, with itself as the reader of the plan: a check uses
the verifier's readings (`held_days`, `work_done`, `need`, `total`) and `fail`, never the
MILP's (tests/milp/test_registry.py).
"""

from __future__ import annotations

import math
from collections import defaultdict

from solver.estimate.efficiency import layout_efficiency
from solver.estimate.flops import flops_factor
from solver.estimate.memory import minimal_layout
from solver.estimate.shape import infer_shape
from solver.estimate.spread import job_factor
from solver.estimate.throughput import fabric_factor, peak_tflops, scale_factor, spot_loss
from solver.milp import registry
from solver.model.catalog import DEFAULT_WAN_GBPS, Catalog, Offer
from solver.model.modes import MODES
from solver.model.plan import Plan
from solver.model.problem import Job, Problem
from solver.verify.helpers import TOL_MONEY, TOL_REL, job_flops, node_cost, node_share, restrict_ok, term_days
from solver.verify.packing import packs
from solver.verify.shown import ShownFields


class Verifier(ShownFields):
    """One plan's check: its rules run in order (`run`), each broken one a line in `violations`."""

    TOL_MONEY = TOL_MONEY   # a family's check compares money within this (solver.milp.families.budget)

    def __init__(self, problem: Problem, catalog: Catalog, plan: Plan) -> None:
        self.p, self.cat, self.plan = problem, catalog, plan
        self.pd = plan.schedule.period_days
        self.n_periods = math.ceil(problem.horizon_days / self.pd)
        self.jobs = {j.name: j for j in problem.jobs}
        self.violations: list[str] = []
        self.data_parts: dict[str, float] = defaultdict(float)   # storage and egress, for the breakdown
        self.held: dict[tuple[str, str, int], int] = defaultdict(int)
        self.total = 0.0                                          # the schedule's cost (set by _cost)
        self.work: dict[str, float] = defaultdict(float)          # FLOPs each job's assignments do (_assignments)
        self.placed: list[tuple[Job, object]] = []                 # (job, assignment) of known jobs and offers

    def fail(self, text: str) -> None:
        self.violations.append(text)

    def rate(self, offer: Offer) -> float:
        """Units of the problem's currency for one unit of the offer's, read from the problem text
        (exchange_rates.rates); a currency with no rate is a violation, priced at 0 meanwhile."""
        if offer.currency == self.p.currency:
            return 1.0
        rates = self.p.exchange_rates.rates if self.p.exchange_rates else {}
        if offer.currency not in rates:
            self.fail(f"cost: offer {offer.offer} is priced in {offer.currency}, and the problem gives no rate for it")
            return 0.0
        return rates[offer.currency]

    def hours(self, t: int) -> float:
        return 24.0 * (min(self.p.horizon_days, (t + 1) * self.pd) - t * self.pd)

    def days(self, t: int) -> tuple[int, int]:
        """Period t's first day and the day after its last (the horizon cuts the last period)."""
        return t * self.pd, min((t + 1) * self.pd, self.p.horizon_days)

    def need(self, job: Job) -> float:
        """FLOPs the job must get done, redundancy included."""
        return job_flops(job) * (1 + self.p.redundancy)

    def run(self) -> None:
        expected = self.p.period_days or (1 if self.p.horizon_days <= 120 or self.p.periods == "events" else 5)
        if self.pd != expected:
            self.fail(f"plan uses {self.pd}-day periods, the problem {expected}-day periods")
        self._rentals()
        self._assignments()
        self._cost()
        for fam in registry.FAMILIES:   # each limit's own rule: the budget, power, stock, deadlines
            if not isinstance(fam.verify, registry.NotApplicable):
                fam.verify(self)
        self._summaries()
        self._shown()   # solver.verify.shown: every field the plan shows

    def _offer(self, name: str, interconnect: str, what: str) -> Offer | None:
        offer = self.cat.offers.get(name)
        if offer is None:
            self.fail(f"{what}: offer {name!r} is not in the catalog")
            return None
        if interconnect not in offer.interconnect:
            self.fail(f"{what}: offer {name} has no interconnect {interconnect}")
            return None
        if not restrict_ok(self.p.restrict, offer, interconnect):
            self.fail(f"{what}: offer {name} is excluded by the problem's restrict list")
        return offer

    def _rentals(self) -> None:
        for c in self.plan.schedule.contracts:
            offer = self._offer(c.offer, c.interconnect, f"contract {c.offer}@{c.start_period}")
            if offer is None:
                continue
            if not MODES[offer.mode].committed:
                self.fail(f"contract on {offer.offer}: {offer.mode} offers are not contracts")
            self._lead(offer, c.start_period, "contract")
            if not 0 <= c.start_period < self.n_periods:
                self.fail(f"contract on {offer.offer} starts outside the horizon (period {c.start_period})")
            if c.nodes <= 0:
                self.fail(f"contract on {offer.offer} with {c.nodes} nodes: counts must be positive")
            end_day = c.start_period * self.pd + term_days(offer)
            for t in range(max(c.start_period, 0), self.n_periods):  # periods wholly inside the term
                if min((t + 1) * self.pd, self.p.horizon_days) > end_day:
                    break
                self.held[offer.offer, c.interconnect, t] += c.nodes
        for r in self.plan.schedule.rentals:
            offer = self._offer(r.offer, r.interconnect, f"rental {r.offer}@{r.period}")
            if offer is None:
                continue
            if MODES[offer.mode].committed:
                self.fail(f"rental of {offer.offer}: {offer.mode} capacity must be a contract")
            if r.nodes <= 0:
                self.fail(f"rental of {offer.offer} with {r.nodes} nodes: counts must be positive")
            self._lead(offer, r.period, "rental")
            if not 0 <= r.period < self.n_periods:
                self.fail(f"rental of {offer.offer} outside the horizon (period {r.period})")
            self.held[offer.offer, r.interconnect, r.period] += r.nodes

    def _lead(self, offer: Offer, period: int, what: str) -> None:
        if period * self.pd < offer.lead_time_days:
            self.fail(f"{what} of {offer.offer} in period {period} (day {period * self.pd}) "
                      f"before its lead time of {offer.lead_time_days} days")

    def held_days(self):
        """(offer, day, nodes) for every day of the horizon on which a contract or rental holds nodes."""
        for c in self.plan.schedule.contracts:
            offer = self.cat.offers.get(c.offer)
            if offer is not None and MODES[offer.mode].committed and c.nodes > 0:
                first = c.start_period * self.pd
                for day in range(max(first, 0), min(first + math.ceil(term_days(offer)), self.p.horizon_days)):
                    yield offer.offer, day, c.nodes
        for r in self.plan.schedule.rentals:
            if r.offer in self.cat.offers and r.nodes > 0:
                for day in range(r.period * self.pd, min((r.period + 1) * self.pd, self.p.horizon_days)):
                    yield r.offer, day, r.nodes

    def _assignments(self) -> None:
        used: dict[tuple[str, str, int], int] = defaultdict(int)
        by_job_period: dict[tuple[str, int], list] = defaultdict(list)
        groups: dict[str, set[str]] = defaultdict(set)
        on_config: dict[tuple[str, str, int], list] = defaultdict(list)
        for a in self.plan.schedule.assignments:
            job = self.jobs.get(a.job)
            offer = self._offer(a.offer, a.interconnect, f"assignment of {a.job}")
            if job is None:
                self.fail(f"assignment names unknown job {a.job!r}")
            if job is None or offer is None:
                continue
            if a.replicas <= 0 or a.group_gpus <= 0:
                self.fail(f"assignment of {a.job}: {a.replicas} replicas of {a.group_gpus} GPUs: must be positive")
            self._job_may_use(job, offer, a.interconnect, a.period, a.group_gpus)
            self.placed.append((job, a))
            gpn = offer.gpus_per_node
            # a group within one node cannot straddle two: a node holds gpn // k of them
            taken = node_share(a.group_gpus, gpn)
            used[a.offer, a.interconnect, a.period] += a.replicas * taken
            link = self.cat.datacenters[offer.datacenter].link_group
            spot = " (spot)" if MODES[offer.mode].preemptible else ""  # a reclaimed spot node stalls the whole job
            groups[job.name].add(f"{offer.vendor}@{link}/{a.interconnect}/{offer.gpu}{spot}")
            by_job_period[job.name, a.period].append(a)
            on_config[a.offer, a.interconnect, a.period].append(a)
        for (name, ic, t), gpus in used.items():
            have = self.held.get((name, ic, t), 0) * self.cat.offers[name].gpus_per_node
            if gpus > have + 1e-9:
                self.fail(f"capacity: {gpus:g} GPUs of {name}/{ic} taken in period {t} (whole groups per node), "
                          f"{have} rented")
        for (job_name, t), pieces in by_job_period.items():
            self._one_node_claim(job_name, t, pieces)
        for (name, ic, t), pieces in on_config.items():
            if any(a.within_one_node for a in pieces) and name in self.cat.offers:
                self._packing(name, ic, t, pieces)
        for (name, t), pieces in by_job_period.items():
            self.work[name] += sum(self._work(self.jobs[name], pieces, a) for a in pieces)
        for job in self.p.jobs:
            if job.single_site and len(groups[job.name]) > 1:
                self.fail(f"site: synchronous job {job.name} is split over fabrics (vendor@link group/interconnect/GPU) "
                          f"{sorted(groups[job.name])}")

    def _one_node_claim(self, job: str, t: int, pieces: list) -> None:
        """A job credited single-node speed in a period has all of it on one node: one offer
        and interconnect, no more groups than one node holds."""
        claimed = [a for a in pieces if a.within_one_node]
        if not claimed:
            return
        if len(claimed) < len(pieces) or len({(a.offer, a.interconnect) for a in pieces}) > 1:
            self.fail(f"one node: job {job} claims one node in period {t} but runs on "
                      f"{sorted({(a.offer, a.interconnect) for a in pieces})}")
            return
        gpn = self.cat.offers[claimed[0].offer].gpus_per_node
        share = sum(a.replicas * node_share(a.group_gpus, gpn) for a in claimed)
        if share > gpn:
            self.fail(f"one node: job {job} claims one node in period {t} but its groups take "
                      f"{share:g} GPUs of {gpn}-GPU nodes")

    def _packing(self, name: str, ic: str, t: int, pieces: list) -> None:
        """Jobs at single-node speed each sit inside one node; every other group inside a node
        too, unless it is bigger than a node (then any GPUs left do): does a placement exist?"""
        gpn = self.cat.offers[name].gpus_per_node
        bundles: dict[str, float] = defaultdict(float)
        loose: dict[float, int] = defaultdict(int)
        for a in pieces:
            share = node_share(a.group_gpus, gpn)
            if a.within_one_node:
                bundles[a.job] += a.replicas * share
            else:
                loose[share] += a.replicas
        nodes = self.held.get((name, ic, t), 0)
        if max(bundles.values()) <= gpn and not packs(nodes, gpn, sorted(bundles.values(), reverse=True), loose):
            self.fail(f"packing: jobs {sorted(bundles)} each run inside one node of {name}/{ic} in period {t}; "
                      f"they and the other groups do not fit on the {nodes} nodes held")

    def _job_may_use(self, job: Job, offer: Offer, ic: str, t: int, group: int) -> None:
        start = t * self.pd
        wait = self._transfer_wait(job, offer.datacenter)
        if wait and start < job.start_day + wait:
            self.fail(f"data: job {job.name} runs at {offer.datacenter} from day {start}, before its dataset "
                      f"arrives from {job.data.site} on day {job.start_day + wait}")
        if MODES[offer.mode].preemptible and not job.interruptible:
            self.fail(f"spot: job {job.name} is not interruptible but runs on spot offer {offer.offer}")
        dc = self.cat.datacenters[offer.datacenter]
        if job.residency and job.residency not in dc.residency:
            self.fail(f"residency: job {job.name} needs {job.residency}, {dc.datacenter} has {list(dc.residency)}")
        if not restrict_ok(job.restrict, offer, ic):
            self.fail(f"restrict: job {job.name} may not use {offer.offer}/{ic}")
        layout = self._layout(job, offer)
        if layout is None or group < layout.gpus:
            need = "nothing fits" if layout is None else f"at least {layout.gpus} GPUs"
            self.fail(f"memory: job {job.name} on {offer.gpu} in groups of {group} GPUs; {need}")
        elif group > offer.gpus_per_node and ic == "ethernet":
            self.fail(f"fabric: job {job.name}'s {group}-GPU group spans nodes of {offer.offer} over ethernet")

    def _layout(self, job: Job, offer: Offer):
        gpu = self.cat.gpus[offer.gpu]
        assert job.model is not None
        kind = "inference" if job.kind == "preprocess" else job.kind  # forward-only model
        return minimal_layout(infer_shape(job.model), kind, gpu.memory_gb,
                              gpus_per_node=offer.gpus_per_node,
                              max_gpus=offer.gpus_per_node * offer.max_nodes,
                              micro_batch=job.micro_batch, lora_rank=job.lora_rank,
                              nvlink=gpu.form != "pcie")

    def _work(self, job: Job, pieces: list, a) -> float:
        """FLOPs one assignment does in its period, at the efficiency of the job's size then.

        A synchronous job's GPUs in a period form one cluster: inside one node of one
        offer nothing crosses the fabric; otherwise the fabric factor and the size tier
        of all its GPUs apply. Independent replicas pay only for a group spanning nodes.
        """
        offer, gpu = self.cat.offers[a.offer], self.cat.gpus[self.cat.offers[a.offer].gpu]
        gpus = a.replicas * a.group_gpus
        mfu = (job.mfu if job.mfu is not None else gpu.default_mfu) * job.mfu_factor * job_factor(job)
        perf = (offer.perf_guarantee_pct or 90.0) / 100
        loss = spot_loss(offer.preemptions_per_day, job.checkpoint_interval_hours, job.restart_hours) \
            if MODES[offer.mode].preemptible else 0.0
        layout = self._layout(job, offer)
        slow = flops_factor(job.kind, True) / flops_factor(job.kind, False) if layout and layout.recompute else 1.0
        if job.single_site:  # single-node speed only where the plan places the job in one node (checked)
            cluster, one_node = sum(p.replicas * p.group_gpus for p in pieces), a.within_one_node
        else:
            cluster, one_node = a.group_gpus, a.group_gpus <= offer.gpus_per_node
        size = 1.0 if one_node else fabric_factor(a.interconnect, True) * scale_factor(a.interconnect, cluster)
        peak = peak_tflops(gpu.bf16_tflops, gpu.fp8_tflops, job.precision) * 1e12
        if layout is not None:  # the layout's tensor parallelism on the card's link, its pipeline bubble
            mfu = layout_efficiency(mfu, tp=layout.tp, pp=layout.pp, hidden=infer_shape(job.model).hidden,
                                    peak_tflops=peak / 1e12, nvlink=gpu.form != "pcie").sustained
        return gpus * peak * mfu * perf * (1 - loss) / slow * size * self.hours(a.period) * 3600

    def _cost(self) -> None:
        total = 0.0
        for c in self.plan.schedule.contracts:
            offer = self.cat.offers.get(c.offer)
            if offer is not None and c.interconnect in offer.interconnect:
                total += node_cost(offer, c.interconnect, term_days(offer), c.nodes) * self.rate(offer)
        for r in self.plan.schedule.rentals:
            offer = self.cat.offers.get(r.offer)
            if offer is not None and r.interconnect in offer.interconnect:
                total += node_cost(offer, r.interconnect, self.hours(r.period) / 24, r.nodes) * self.rate(offer)
        total += self._data_cost()
        self.total = total
        if not math.isclose(total, self.plan.total_cost, rel_tol=TOL_REL, abs_tol=TOL_MONEY):
            self.fail(f"cost: the schedule costs {total:,.2f} {self.p.currency}, the plan says {self.plan.total_cost:,.2f}")
        parts = sum(self.plan.cost_breakdown.values())
        if not math.isclose(parts, self.plan.total_cost, rel_tol=TOL_REL, abs_tol=TOL_MONEY):
            self.fail(f"cost: breakdown adds up to {parts:,.2f}, total is {self.plan.total_cost:,.2f}")

    def _summaries(self) -> None:
        """The plan's job × rental GPU-days, idle capacity and cash flow (solver.model.ledger), each
        re-added here from the schedule: GPU-days per job and offer, GPU-days paid per line, and
        payments adding up to the total. Plans without them (older JSON, hand-made) are not held to them."""
        plan = self.plan
        if plan.job_rentals or plan.rental_use:
            want: dict[tuple[str, str], float] = defaultdict(float)
            for a in plan.schedule.assignments:
                days = min((a.period + 1) * self.pd, self.p.horizon_days) - a.period * self.pd
                want[a.job, a.offer] += a.replicas * a.group_gpus * days
            got: dict[tuple[str, str], float] = defaultdict(float)
            entries: dict[tuple[str, str], int] = defaultdict(int)   # each entry is rounded to the cent
            per_line: dict[int, float] = defaultdict(float)
            on_line: dict[int, int] = defaultdict(int)
            for jr in plan.job_rentals:
                if not 1 <= jr.rental <= len(plan.allocations) or plan.allocations[jr.rental - 1].offer != jr.offer:
                    self.fail(f"job_rentals: {jr.job} on rental {jr.rental} ({jr.offer}) names no such rental line")
                    continue
                got[jr.job, jr.offer] += jr.gpu_days
                entries[jr.job, jr.offer] += 1
                per_line[jr.rental] += jr.gpu_days
                on_line[jr.rental] += 1
            for key in sorted(set(want) | set(got)):
                if not math.isclose(want[key], got[key], abs_tol=0.01 * (entries[key] + 1) + 1e-6 * want[key]):
                    self.fail(f"job_rentals: job {key[0]} has {got[key]:,.2f} GPU-days on {key[1]}, "
                              f"the schedule {want[key]:,.2f}")
            for use in plan.rental_use:
                line = plan.allocations[use.rental - 1] if 1 <= use.rental <= len(plan.allocations) else None
                if line is None:
                    self.fail(f"rental_use: rental {use.rental} is not a rental line")
                    continue
                paid = line.gpus * (line.end_day - line.start_day)
                used = per_line[use.rental]
                tol = 0.01 * (on_line[use.rental] + 2) + 1e-6 * paid
                if not (math.isclose(use.gpu_days_paid, paid, abs_tol=0.01)
                        and math.isclose(use.gpu_days_used, used, abs_tol=tol)
                        and math.isclose(use.idle_gpu_days, paid - used, abs_tol=tol) and used <= paid + tol):
                    self.fail(f"rental_use: rental {use.rental} ({use.offer}) says {use.gpu_days_paid:,.2f} GPU-days "
                              f"paid, {use.gpu_days_used:,.2f} used, {use.idle_gpu_days:,.2f} idle; its line holds "
                              f"{paid:,.2f} and jobs use {used:,.2f}")
        if plan.cash_flow:
            paid = sum(p.amount for p in plan.cash_flow)
            if not math.isclose(paid, plan.total_cost, rel_tol=TOL_REL, abs_tol=TOL_MONEY + 0.01 * len(plan.cash_flow)):
                self.fail(f"cash_flow: payments add up to {paid:,.2f}, the plan costs {plan.total_cost:,.2f}")

    def _data_cost(self) -> float:
        sites = {(a.job, self.cat.offers[a.offer].vendor, self.cat.offers[a.offer].datacenter)
                 for a in self.plan.schedule.assignments if a.offer in self.cat.offers and a.job in self.jobs}
        finish: dict[str, int] = defaultdict(int)  # storage is kept until the job ends,
        first: dict[tuple[str, str, str], int] = {}  # from its first GPU day at the site less the transfer
        for a in self.plan.schedule.assignments:
            finish[a.job] = max(finish[a.job], min((a.period + 1) * self.pd, self.p.horizon_days))
            if a.offer in self.cat.offers and a.job in self.jobs:
                key = a.job, self.cat.offers[a.offer].vendor, self.cat.offers[a.offer].datacenter
                first[key] = min(first.get(key, a.period * self.pd), a.period * self.pd)
        total = 0.0
        for job_name, vendor, dc in sites:
            job = self.jobs[job_name]
            offer = next(o for o in self.cat.offers.values() if o.vendor == vendor and o.datacenter == dc)
            since = first[job_name, vendor, dc] - self._transfer_wait(job, dc)
            if since < job.start_day:
                self.fail(f"storage: job {job_name} would store its data at {dc} from day {since}, before its "
                          f"start (day {job.start_day})")
            months = (finish[job_name] - since) / 30
            self.data_parts["storage"] += job.storage_tb * offer.storage_per_tb_month * months * self.rate(offer)
            self.data_parts["egress"] += job.egress_tb * offer.egress_per_tb * self.rate(offer)
            total += (job.storage_tb * offer.storage_per_tb_month * months
                      + job.egress_tb * offer.egress_per_tb) * self.rate(offer)
            if job.data is not None and dc != job.data.site:  # the dataset moved to this vendor's storage here
                price = job.data.egress_per_tb          # in the problem's currency
                if price is None:
                    price = max((o.egress_per_tb * self.rate(o) for o in self.cat.offers.values()
                                 if o.datacenter == job.data.site), default=0.0)
                total += job.data.dataset_tb * price
                self.data_parts["egress"] += job.data.dataset_tb * price
        return total

    def _transfer_wait(self, job: Job, dc: str) -> int:
        """Days the job's dataset takes to reach dc: none in the data site's link group,
        else TB × 8e12 bit ÷ the slower end's line (default DEFAULT_WAN_GBPS Gbit/s), in whole days."""
        if job.data is None or job.data.site not in self.cat.datacenters:
            return 0
        a, b = self.cat.datacenters[job.data.site], self.cat.datacenters[dc]
        if a.link_group == b.link_group:
            return 0
        bits_per_day = min(a.wan_gbps or DEFAULT_WAN_GBPS, b.wan_gbps or DEFAULT_WAN_GBPS) * 1e9 * 86_400
        return math.ceil(job.data.dataset_tb * 8e12 / bits_per_day - 1e-9)
