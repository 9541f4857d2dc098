"""Preprocessing: problem + catalog → the index sets and coefficients of the MILP.

Offers are expanded into configurations (offer × interconnect option); each job gets,
per configuration it may use, its model-parallel group (from the memory estimator),
its effective FLOP/s per GPU and its size tiers. Everything the MILP needs is a plain
number here, so the constraint modules stay short and the verifier can be checked
against the same inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

from solver.estimate.efficiency import Efficiency, layout_efficiency
from solver.estimate.flops import flops_factor, training_flops
from solver.estimate.memory import Layout, minimal_layout
from solver.estimate.shape import infer_shape
from solver.estimate.spread import job_factor
from solver.estimate.throughput import fabric_factor, peak_tflops, scale_factor, scale_tiers, spot_loss
from solver.milp.exclusion import Exclusion
from solver.milp.periods import Periods, event_periods, problem_events, uniform_periods
from solver.milp.prune import prune_dominated
from solver.model.catalog import Catalog, Gpu, Offer, priced_in
from solver.model.problem import Job, Problem, Restrict

UNGUARANTEED_PERF = 0.90
"""Throughput factor where the contract guarantees nothing: seed 002 warns that
degraded or down-clocked cards run 10 %+ slower; a ≥95 % clause gives 0.95."""

FIT_TOLERANCE = 1e-9
"""Relative slack when asking whether a domain can do a job's work at all (floating point)."""

WORK_UNIT = 1e18  # work is counted in EFLOP so coefficients stay near 1


@dataclass(frozen=True)
class Config:
    """One rentable configuration: an offer with one of its interconnect options."""

    key: str
    offer: Offer
    option: int
    interconnect: str
    link_group: str
    first_period: int          # nothing before the lead time has passed
    term_periods: int          # committed: whole periods inside one contract's term (Instance.covered is exact)
    node_cost_hour: float      # hourly/spot: rent + interconnect + fee per node-hour
    node_cost_term: float      # committed: rent + interconnect + fee per node per term
    rent_share: float          # fraction of the node cost that is GPU rent (for the breakdown)
    fee_share: float           # fraction that is the platform fee

    @property
    def committed(self) -> bool:
        return self.offer.committed

    @property
    def discount_nodes(self) -> int | None:
        """Nodes from which the volume discount applies, if the offer has one."""
        if self.offer.discount_from_gpus is None:
            return None
        return math.ceil(self.offer.discount_from_gpus / self.offer.gpus_per_node)


@dataclass(frozen=True)
class Tier:
    """A size class in which a job's GPUs run at `factor` × rate.

    `domain_gpus` None: the single-node tier — this configuration only, within one node.
    Otherwise the bound on the job's GPUs across its whole fabric domain in this tier.
    """

    max_replicas: int          # bound on this option's replicas in the tier
    factor: float
    domain_gpus: int | None = None


@dataclass(frozen=True)
class JobOption:
    """Job j may run on configuration o in `periods`, in groups of `group_gpus`."""

    job: str
    config: str
    group_gpus: int
    layout: Layout
    rate_flops: float          # FLOP/s per GPU, before size tiers
    tiers: tuple[Tier, ...]
    periods: tuple[int, ...]
    domain: str | None         # fabric domain of a synchronous job; None: replicas are independent

    def work_per_replica(self, hours: float, factor: float) -> float:
        """EFLOP one replica does in a period of `hours` hours at a size tier's `factor`."""
        return self.group_gpus * self.rate_flops * factor * hours * 3600 / WORK_UNIT


@dataclass
class Instance:
    """Everything the MILP is built from."""

    problem: Problem
    catalog: Catalog
    timeline: Periods                   # each period's first day (uniform, or event buckets)
    configs: dict[str, Config]
    required: dict[str, float]          # EFLOP each job must complete, redundancy included
    options: list[JobOption]
    excluded: dict[str, list[Exclusion]] = field(default_factory=dict)  # job → why configs were dropped
    as_given: Catalog | None = None      # the catalog before priced_in (its own currencies): what verify reads
    rates_used: dict[str, float] = field(default_factory=dict)  # currency → rate, for offers not in the problem's
    closest: dict[str, tuple[float, Exclusion]] = field(default_factory=dict)  # job → (most EFLOP, its reason)

    @property
    def period_days(self) -> int:
        """Days per period of the schedule (the problem's effective_period_days; 1 for event buckets)."""
        return self.timeline.grain

    @cached_property
    def hours(self) -> list[float]:
        """Hours in each period (the last one cut at the horizon)."""
        return self.timeline.hours()

    @property
    def periods(self) -> range:
        return range(len(self.hours))

    def covered(self, cfg: Config, start: int) -> range:
        """Periods a contract starting in period `start` may be used in: those wholly inside its
        term (no free days), counting the last period only up to the horizon (a short last
        period inside the term is covered although a whole one would not be)."""
        end_day = self.timeline.starts[start] + cfg.offer.term_days
        stop = start
        while stop < len(self.hours) and self.timeline.end(stop) <= end_day:
            stop += 1
        return range(start, stop)

    def held(self, cfg: Config, start: int) -> range:
        """Periods in which a contract starting in `start` holds its nodes, the last maybe only
        in part: the vendor's stock and a rack's power count it there (capacity.held_nodes)."""
        return range(start, self.timeline.first_from(self.timeline.starts[start] + cfg.offer.term_days))


def build_instance(problem: Problem, catalog: Catalog, prune: bool = True) -> Instance:
    """Expand offers, size every job on every GPU type, keep only usable pairs (and, with
    `prune`, drop the configurations another of the same offer dominates: solver.milp.prune).

    Every price is turned into the problem's currency here, once (solver.model.catalog.priced_in):
    inst.catalog is the converted catalog, inst.as_given the one the caller gave."""
    given, catalog = catalog, priced_in(catalog, problem.currency, problem.rates())
    pd = problem.effective_period_days
    allowed = [offer for offer in catalog.offers.values() if _allowed(offer, problem.restrict)]
    timeline = uniform_periods(pd, problem.horizon_days) if problem.periods == "uniform" else \
        event_periods(*problem_events(problem, allowed, lambda job, dc: transfer_days(job, dc, catalog)))
    configs = {c.key: c for offer in allowed for c in expand_offer(offer, catalog, timeline)}
    rates = problem.rates()
    inst = Instance(problem, catalog, timeline, configs, {}, [], as_given=given,
                    rates_used={c: rates[c] for c in sorted({o.currency for o in given.offers.values()})
                                if c != problem.currency})
    for job in problem.jobs:
        inst.required[job.name] = job_flops(job) * (1 + problem.redundancy) / WORK_UNIT
        inst.excluded[job.name] = []
        options = []
        for config in configs.values():
            option = _job_option(job, config, inst)
            if isinstance(option, JobOption):
                options.append(option)
            else:
                code, detail = option
                inst.excluded[job.name].append(Exclusion(code, config.key, detail))
        inst.options.extend(_with_tiers(job, options, configs, inst))
    if prune:
        inst.options = prune_dominated(inst.options, configs, inst.excluded)
    return inst


def job_flops(job: Job) -> float:
    """Total FLOPs of a job without recompute (the layout's recompute slows the rate instead)."""
    if job.flops is not None:
        return job.flops
    assert job.model is not None and job.tokens is not None
    return training_flops(job.model.params, job.tokens, job.kind,
                          active_params=job.model.active_params, trials=job.trials)


def _allowed(offer: Offer, restrict: Restrict | None) -> bool:
    if restrict is None:
        return True
    checks = ((restrict.gpus, offer.gpu), (restrict.modes, offer.mode), (restrict.vendors, offer.vendor),
              (restrict.datacenters, offer.datacenter), (restrict.offers, offer.offer))
    return all(not allow or value in allow for allow, value in checks)


def expand_offer(offer: Offer, catalog: Catalog, timeline: Periods) -> list[Config]:
    """The offer's configurations (one per interconnect option), priced in the catalog's money
    (`catalog` is already in the problem's currency here); solver.milp.reprice re-prices with it."""
    fee = 1 + offer.platform_fee_pct / 100
    out = []
    for i, interconnect in enumerate(offer.interconnect):
        cost = offer.node_cost_per_term if offer.committed else offer.node_cost_per_hour
        rent, total = cost(i, rent_only=True), cost(i)
        out.append(Config(
            key=f"{offer.offer}:{interconnect}", offer=offer, option=i, interconnect=interconnect,
            link_group=catalog.datacenters[offer.datacenter].link_group,
            first_period=timeline.first_from(offer.lead_time_days),
            term_periods=timeline.term_periods(offer.lead_time_days, offer.term_days) if offer.committed else 0,
            node_cost_hour=0.0 if offer.committed else total * fee,
            node_cost_term=total * fee if offer.committed else 0.0,
            rent_share=rent / total / fee,
            fee_share=(fee - 1) / fee))
    return out


def _job_option(job: Job, config: Config, inst: Instance) -> JobOption | tuple[str, str]:
    """The job's option on this configuration, or why it cannot use it: (code, detail) of an Exclusion."""
    offer, problem = config.offer, inst.problem
    if not _allowed(offer, job.restrict) or (
            job.restrict and job.restrict.interconnects and config.interconnect not in job.restrict.interconnects):
        return "restrict", "excluded by the job's restrict list"
    if problem.restrict and problem.restrict.interconnects and config.interconnect not in problem.restrict.interconnects:
        return "restrict", "excluded by restrict.interconnects"
    stacks = problem.job_stacks(job)
    if stacks is not None and inst.catalog.gpus[offer.gpu].stack not in stacks:
        return "stack", (f"{offer.gpu} needs {inst.catalog.gpus[offer.gpu].stack.upper()}; the job's code runs on "
                         f"{' or '.join(x.upper() for x in stacks)} (stacks)")
    if offer.preemptible and not job.interruptible:
        return "spot", "spot capacity can be reclaimed; the job is not interruptible"
    if job.residency and job.residency not in inst.catalog.datacenters[offer.datacenter].residency:
        return "residency", f"datacenter {offer.datacenter} does not carry residency {job.residency}"
    gpu = inst.catalog.gpus[offer.gpu]
    max_gpus = offer.gpus_per_node * offer.max_nodes
    layout = job_layout(job, gpu, offer.gpus_per_node, max_gpus)
    if layout is None:
        return "memory", f"the model does not fit on {max_gpus} × {gpu.gpu}"
    if layout.multi_node and config.interconnect == "ethernet":
        return "fabric", "its model-parallel group spans nodes and needs RDMA (IB or RoCE)"
    try:
        peak = peak_tflops(gpu.bf16_tflops, gpu.fp8_tflops, job.precision)
    except ValueError as exc:
        return "precision", str(exc)
    wait = transfer_days(job, offer.datacenter, inst.catalog)
    window = [t for t in inst.periods if inst.timeline.starts[t] >= job.start_day + wait and
              inst.timeline.end(t) <= job.deadline_days]
    periods = tuple(t for t in window if t >= config.first_period)
    if not periods:
        return _why_no_period(job, inst, wait, window)
    rate = effective_rate(job, offer, peak, gpu, layout)
    return JobOption(job.name, config.key, layout.gpus, layout, rate, (), periods, None)


def _why_no_period(job: Job, inst: Instance, wait: int, window: list[int]) -> tuple[str, str]:
    """Why no period of the plan lies inside the job's window on this configuration (`window`:
    the periods wholly inside it, lead time aside)."""
    pd = inst.period_days
    if not window and pd > 1:
        return "window", (f"days {job.start_day + wait}–{job.deadline_days} hold no whole {pd}-day period of the "
                          f"plan (periods start on multiples of {pd}); set period_days: 1, or widen the window")
    if wait and job.data is not None:
        return "lead_time", (f"not available inside the job's window once its {job.data.dataset_tb:g} TB "
                             f"dataset has moved from {job.data.site} ({wait} days)")
    return "lead_time", "not available inside the job's window"


def transfer_days(job: Job, datacenter: str, catalog: Catalog) -> int:
    """Whole days the job waits at `datacenter` for its dataset, counted from its start_day
    (`DataSpec.transfer_days`, shared with the ledger's storage payments)."""
    if job.data is None:
        return 0
    try:
        return job.data.transfer_days(datacenter, catalog)
    except ValueError as exc:
        raise ValueError(f"job {job.name}: {exc}") from None


def job_layout(job: Job, gpu: Gpu, gpus_per_node: int, max_gpus: int) -> Layout | None:
    """Smallest model-parallel group of this job on this GPU (pipeline before tensor parallel on PCIe cards)."""
    assert job.model is not None
    shape = infer_shape(job.model)
    return minimal_layout(shape, memory_kind(job.kind), gpu.memory_gb, gpus_per_node=gpus_per_node,
                          max_gpus=max_gpus, micro_batch=job.micro_batch, lora_rank=job.lora_rank,
                          nvlink=gpu.nvlink)


def memory_kind(kind: str) -> str:
    """Preprocessing runs its model forward only (filters, classifiers): inference memory."""
    return "inference" if kind == "preprocess" else kind


def effective_rate(job: Job, offer: Offer, peak: float, gpu: Gpu, layout: Layout) -> float:
    """FLOP/s per GPU of useful work: peak × sustained MFU × performance clause × (1 − spot loss)
    ÷ recompute; the sustained MFU is the GPU's (or the job's) derated for the layout's tensor
    parallelism on the card's link and its pipeline bubble (solver.estimate.efficiency)."""
    mfu = sustained_mfu(job, gpu, peak, layout).sustained
    perf = offer.perf_guarantee_pct / 100 if offer.perf_guarantee_pct else UNGUARANTEED_PERF
    loss = spot_loss(offer.preemptions_per_day, job.checkpoint_interval_hours, job.restart_hours) \
        if offer.preemptible else 0.0
    slow = flops_factor(job.kind, True) / flops_factor(job.kind, False) if layout.recompute else 1.0
    return peak * 1e12 * mfu * perf * (1 - loss) / slow


def sustained_mfu(job: Job, gpu: Gpu, peak: float, layout: Layout) -> Efficiency:
    """The job's MFU on this GPU in this layout, with the factors that make it (its confidence's factor,
    solver.estimate.spread.job_factor, in the figure)."""
    assert job.model is not None
    mfu = (job.mfu if job.mfu is not None else gpu.default_mfu) * job.mfu_factor * job_factor(job)
    return layout_efficiency(mfu, tp=layout.tp, pp=layout.pp,
                             hidden=infer_shape(job.model).hidden, peak_tflops=peak, nvlink=gpu.nvlink)


def fabric_domain(cfg: Config) -> str:
    """The nodes one synchronous job may span: one vendor's GPUs of one type on one fabric in a
    link group, and either all spot or none. Why the last: a reclaimed spot node stalls every
    GPU of a synchronous job, so spot's loss cannot be charged to the spot GPUs alone."""
    spot = "/spot" if cfg.offer.preemptible else ""
    return f"{cfg.offer.vendor}@{cfg.link_group}/{cfg.interconnect}/{cfg.offer.gpu}{spot}"


def _with_tiers(job: Job, options: list[JobOption], configs: dict[str, Config],
                inst: Instance) -> list[JobOption]:
    """Attach size tiers: per fabric domain for a synchronous job, per group otherwise.

    A synchronous job must do all its work inside one (domain, tier), so a tier whose
    whole capacity over the job's window cannot do the work is dropped, and a domain
    left without tiers is dropped for the job: exact pruning that removes most choices.
    """
    if not job.single_site:
        return [replace(o, tiers=(_independent_tier(o, configs[o.config]),)) for o in options]
    by_domain: dict[str, list[JobOption]] = {}
    for o in options:
        by_domain.setdefault(fabric_domain(configs[o.config]), []).append(o)
    out = []
    for domain, members in by_domain.items():
        capacity = sum(_max_gpus(configs[o.config]) for o in members)
        tiers_all = domain_tiers(configs[members[0].config].interconnect, capacity)
        work = {tier: _most_work(members, configs, inst, *tier) for tier in tiers_all}
        node_work = {o.config: _most_work([o], configs, inst, configs[o.config].offer.gpus_per_node, 1.0)
                     for o in members}
        most = max([*work.values(), *node_work.values()])
        shared = [tier for tier in tiers_all if _enough(work[tier], inst.required[job.name])]
        for o in members:
            cfg = configs[o.config]
            gpn = cfg.offer.gpus_per_node
            tiers = [Tier(gpn // o.group_gpus, 1.0)] if o.group_gpus <= gpn else []
            if tiers and (shared and math.isclose(shared[0][1], 1.0)
                          or not _enough(node_work[o.config], inst.required[job.name])):
                tiers = []  # as fast as the first domain tier, or one node cannot do the job alone
            tiers += [Tier(min(bound, _max_gpus(cfg)) // o.group_gpus, factor, bound) for bound, factor in shared]
            tiers = [t for t in tiers if t.max_replicas >= 1]
            if tiers:
                out.append(replace(o, tiers=tuple(tiers), domain=domain))
            else:
                reason = Exclusion("capacity", o.config, f"all of {domain} does at most {most:,.0f} of the "
                                   f"{inst.required[job.name]:,.0f} EFLOP needed by day {job.deadline_days}")
                inst.excluded[job.name].append(reason)
                best = inst.closest.get(job.name)
                if best is None or most > best[0]:
                    inst.closest[job.name] = (most, reason)
    return out


def _enough(work: float, required: float) -> bool:
    """work ≥ required up to rounding: an exact fit (116 GPU-days in 116 days) computes as
    a hair less in floating point, and dropping its domain made such problems infeasible."""
    return work >= required * (1 - FIT_TOLERANCE)


def _most_work(members: list[JobOption], configs: dict[str, Config], inst: Instance,
               bound_gpus: int, factor: float) -> float:
    """EFLOP the options could do at most in their windows with at most bound_gpus GPUs at once."""
    total = 0.0
    for t, hours in enumerate(inst.hours):
        present = [o for o in members if t in o.periods]
        if present:
            gpus = min(bound_gpus, sum(_max_gpus(configs[o.config]) for o in present))
            rate = max(o.rate_flops for o in present)
            total += gpus * rate * factor * hours * 3600 / WORK_UNIT
    return total


def _max_gpus(cfg: Config) -> int:
    return cfg.offer.gpus_per_node * cfg.offer.max_nodes


def _independent_tier(o: JobOption, cfg: Config) -> Tier:
    """Independent replicas (sweeps, preprocessing, inference) only pay for a group spanning nodes."""
    gpn = cfg.offer.gpus_per_node
    factor = 1.0 if o.group_gpus <= gpn else \
        fabric_factor(cfg.interconnect, True) * scale_factor(cfg.interconnect, o.group_gpus)
    return Tier(_max_gpus(cfg) // o.group_gpus, factor)


def domain_tiers(interconnect: str, capacity_gpus: int) -> list[tuple[int, float]]:
    """(GPU bound, factor) of the multi-node size tiers a domain of `capacity_gpus` can reach.

    The fabric factor times the size tier's factor (seed 000: speed-up falls past ~512
    cards). Consecutive tiers with equal factors merge; tiers past the capacity are cut.
    """
    fabric = fabric_factor(interconnect, True)
    tiers: list[tuple[int, float]] = []
    for bound, factor in scale_tiers(interconnect):
        bound = min(bound, capacity_gpus)
        if tiers and bound <= tiers[-1][0]:
            break
        if tiers and math.isclose(tiers[-1][1], fabric * factor):
            tiers[-1] = (bound, tiers[-1][1])
        else:
            tiers.append((bound, fabric * factor))
    return tiers


def options_as_written(inst: Instance, stock: dict[str, int], leads: dict[str, int]) -> tuple[
        list[JobOption], dict[str, list[Exclusion]]]:
    """The job options, and the exclusions of those dropped, that preprocessing gives when the
    offers in `stock` hold only that many nodes and those in `leads` arrive only after that many
    days, from an Instance built with more stock and shorter lead times (a model built with room
    for negotiate's levers and held at the written catalog by bounds: solver.analysis.negotiate
    reads which offers a job can use as written). A group that no longer fits is dropped for its
    memory, an option left without a period for its lead time, and the size tiers and domains are
    decided again (a domain that cannot do a job's work any more is dropped for its capacity)."""
    configs = {key: replace(cfg, offer=cfg.offer.model_copy(update={"max_nodes": stock[cfg.offer.offer]}))
               if cfg.offer.offer in stock else cfg for key, cfg in inst.configs.items()}
    view = replace(inst, configs=configs, excluded={job: [] for job in inst.excluded}, closest={})
    out: list[JobOption] = []
    for job in inst.problem.jobs:
        mine = []
        for o in (o for o in inst.options if o.job == job.name):
            cfg = configs[o.config]
            first = inst.timeline.first_from(leads.get(cfg.offer.offer, cfg.offer.lead_time_days))
            periods = tuple(t for t in o.periods if t >= first)
            if o.group_gpus > _max_gpus(cfg):
                view.excluded[job.name].append(Exclusion("memory", o.config, f"the model does not fit on "
                                                         f"{_max_gpus(cfg)} × {cfg.offer.gpu}"))
            elif not periods:
                view.excluded[job.name].append(Exclusion("lead_time", o.config, "not available inside the job's window"))
            else:
                mine.append(replace(o, tiers=(), domain=None, periods=periods))
        out += _with_tiers(job, mine, configs, view)
    return out, view.excluded
