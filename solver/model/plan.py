"""Plan nouns: what to rent when, which job runs where, what it costs.

`schedule` is the raw decision (contracts, per-period rentals, per-period job
replicas); `allocations` and `jobs` are the readable summary of it, and so are
`job_rentals`, `rental_use` and `cash_flow` (read from allocations and schedule by
solver.model.ledger). The verifier reads only `schedule` and the problem to check the
plan, and checks the summaries against them in its own code.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from solver.model.modes import Mode


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Contract(_Out):
    """A committed contract: `nodes` nodes from `start_period` for the offer's whole term."""

    offer: str
    interconnect: str
    start_period: int = Field(ge=0)
    nodes: int = Field(gt=0)
    discounted: bool = False


class Rental(_Out):
    """Hourly or spot nodes held during one period."""

    offer: str
    interconnect: str
    period: int = Field(ge=0)
    nodes: int = Field(gt=0)
    discounted: bool = False


class Assignment(_Out):
    """`replicas` copies of a job's model-parallel group of `group_gpus` GPUs in one period."""

    job: str
    offer: str
    interconnect: str
    period: int = Field(ge=0)
    replicas: int = Field(gt=0)
    group_gpus: int = Field(gt=0)
    within_one_node: bool = Field(
        default=False,
        description="a synchronous job run at single-node speed: this period's groups share one node")


class Schedule(_Out):
    period_days: int = Field(gt=0)
    contracts: list[Contract] = []
    rentals: list[Rental] = []
    assignments: list[Assignment] = []


class Allocation(_Out):
    """One line of the rental plan (contract, or a run of hourly periods at constant size)."""

    offer: str
    vendor: str
    datacenter: str
    gpu: str
    mode: Mode
    interconnect: str
    nodes: int
    gpus: int
    start_day: int
    end_day: int
    cost: float = Field(description="in the plan's currency, platform fee included, discount deducted")


class JobResult(_Out):
    name: str
    finish_day: int
    gpus: int = Field(description="peak GPUs used at once")
    gpu_types: list[str]
    layout: dict
    layout_text: str
    memory_per_gpu_gb: float
    required_eflop: float
    done_eflop: float
    mfu_margin: float | None = Field(
        default=None, description="the lowest MFU, as a fraction of the one planned with, at which this plan's "
        "rentals still do the job's work (redundancy included) by its deadline, the other jobs' too "
        "(solver.analysis.margin; to 0.001, the feasible end); null: not computed")
    mfu_margin_low: float | None = Field(
        default=None, description="set when the margin's search was cut by the command's budget or Ctrl-C: "
        "the highest fraction found too low so far, so the margin lies above it and at most mfu_margin "
        "(proven feasible); null: the search ended, mfu_margin is to 0.001")
    deadline_probability: float | None = Field(
        default=None, description="the probability that the job meets its deadline on this plan's rentals: that "
        "the run reaches mfu_margin × planned_factor of the estimated throughput, read from the published runs' "
        "spread, or the measurement's for a calibrated job (solver.estimate.spread); null: no margin")
    planned_factor: float | None = Field(
        default=None, description="the factor of the estimated throughput the job was planned with: 1, or the "
        "quantile its confidence asks (solver.estimate.spread.job_factor); null: not computed")
    throughput_spread: str | None = Field(
        default=None, description="whose spread deadline_probability reads: published (the published runs') or "
        "measured (a calibrated job's mfu_measured: its measurement's)")
    sites: list[str]


class Binding(_Out):
    """A limit the plan runs into: more of it could make the plan cheaper (or feasible sooner)."""

    kind: str = Field(description="the constraint family that binds: budget | power | availability | deadline "
                      "(solver.milp.registry.BINDING_KINDS, the families with a binding reader; checked there, "
                      "as the model layer sits below the family list)")
    name: str = Field(description="budget | datacenter | offer | job")
    start_day: int
    end_day: int
    used: float
    limit: float
    unit: str
    text: str


class ExchangeRatesUsed(_Out):
    """The rates a plan's costs were converted with: the problem's currency units for one unit
    of each other currency its catalog's offers are priced in, and their date."""

    as_of: str
    source: str | None = None
    rates: dict[str, float]


class JobRental(_Out):
    """GPU-days of one job on one rental line (`rental`: its 1-based number in `allocations`)."""

    job: str
    rental: int = Field(gt=0)
    offer: str
    gpu_days: float


class RentalUse(_Out):
    """One rental line (`rental`: its 1-based number in `allocations`): GPU-days paid, used by
    jobs, left idle, and the idle part's share of the line's cost (cost × idle ÷ paid)."""

    rental: int = Field(gt=0)
    offer: str
    mode: Mode
    start_day: int
    end_day: int
    gpu_days_paid: float
    gpu_days_used: float
    idle_gpu_days: float
    idle_cost: float
    last_used_day: int | None = Field(description="day after the last day a job runs on it; null: never used")


class Payment(_Out):
    """What is paid to one vendor for one kind of charge in one block of time: a calendar month
    when the problem has a start_date, else a 30-day block from day 0 (solver.model.ledger)."""

    block: int = Field(ge=0, description="0-based: month (or 30-day block) number from the plan's start")
    label: str = Field(description="2027-01, or 'days 0–29'")
    start_day: int
    end_day: int
    vendor: str
    mode: str = Field(description="a rental mode, or storage / egress")
    billing: str = Field(description="as used | per month of term | up front | on finish | on start")
    amount: float


class PreferenceResult(_Out):
    """What one soft preference did to the plan (solver.milp.prefer) and what honouring it costs."""

    preference: str = Field(description="the preference in words")
    job: str | None = Field(description="the job it is about; null: every job")
    up_to_pct: float
    outcome: Literal["met", "kept", "declined", "impossible", "not_weighed"] = Field(
        description="met: the cheapest plan honours it anyway; kept: honoured at a premium within up_to_pct; "
                    "declined: honouring it costs more than up_to_pct; impossible: no plan honours it; "
                    "not_weighed: no time was left for its re-solve")
    premium: float | None = Field(description="cost of the best plan honouring it − cost of the best plan "
                                              "not bound by it (0 when met; null: unknown)")
    premium_pct: float | None = Field(description="premium in % of the plan honouring it")
    text: str


class StackSwitch(_Out):
    """A plan on a software stack other than the catalog's usual one, in a problem that did not
    say which stacks its code runs on (solver.milp.stacks): what the switch saves."""

    stacks: list[str] = Field(description="the stacks the plan uses other than the usual one")
    usual: str = Field(description="the catalog's usual stack (most of its GPU rows)")
    same_stack_cost: float | None = Field(description="the best plan on the usual stack alone; null: none "
                                                      "(infeasible, or no time left to solve it)")
    saving: float | None = Field(description="same_stack_cost − this plan's cost, when same_stack_cost is proven "
                                             "the usual stack's optimum; null otherwise (see saving_interval)")
    same_stack_bound: float | None = Field(default=None, description="the usual stack's solve stopped before a "
                                           "proof: no plan on it costs less than this; null: proven, or none")
    saving_interval: list[float] | None = Field(default=None, description="[least, most] the switch saves over the "
                                                "best plan on the usual stack, when that plan is not proven; the "
                                                "least may be negative (no saving proven)")
    text: str


class RobustPlan(_Out):
    """The cheapest plan that meets every deadline with every MFU × mfu_factor (solver.analysis.margin),
    priced beside the optimum."""

    mfu_factor: float
    status: Literal["optimal", "feasible", "infeasible", "not solved"]
    total_cost: float | None = Field(description="null: no such plan (infeasible) or no time to solve it")
    premium: float | None = Field(description="total_cost − the optimum's cost")
    premium_pct: float | None = Field(description="premium in % of the optimum's cost")
    allocations: list[Allocation] = []
    jobs: list[JobResult] = []
    text: str


class ThinJob(_Out):
    job: str
    mfu_margin: float
    headroom: float = Field(description="1 − mfu_margin: how far the MFU may fall below plan")


class ThinMargin(_Out):
    """Jobs whose MFU margin leaves less headroom than `threshold` (solve --thin-margin): the
    headline's warning, which names --robust."""

    threshold: float
    jobs: list[ThinJob]
    text: str


class Plan(_Out):
    problem: str
    status: Literal["optimal", "feasible"]
    total_cost: float
    currency: str = "CNY"
    exchange_rates: ExchangeRatesUsed | None = Field(
        default=None, description="rates used to convert offers in other currencies; null: none needed")
    allocations: list[Allocation]
    jobs: list[JobResult]
    cost_breakdown: dict[str, float]
    lower_bound: float
    gap: float
    solve_seconds: float
    backend: str
    tie_break: Literal["proven", "not proven", "proven without re-solve", "not applied"] = Field(
        default="not applied",
        description="among plans of this cost, the earliest finish then the fewest rentals: proven by a "
                    "re-solve with the cost fixed, not proven (its node or time limit stopped it; the best "
                    "plan found, never dearer), proven without re-solve (no plan can finish sooner or rent less), or not "
                    "applied (the cost is not proven optimal)")
    binding: list[Binding] = []
    warnings: list[str] = Field(default=[], description="what the plan assumes that the user should check")
    start_date: date | None = Field(default=None, description="calendar date of day 0 (the problem's start_date)")
    job_rentals: list[JobRental] = []
    rental_use: list[RentalUse] = []
    cash_flow: list[Payment] = []
    preferences: list[PreferenceResult] = Field(default=[], description="each soft preference: honoured or not, "
                                                                        "and its price")
    stack_switch: StackSwitch | None = Field(default=None, description="the plan leaves the catalog's usual "
                                             "software stack, which the problem left open: what that saves")
    robust_plan: RobustPlan | None = Field(default=None, description="asked for (problem's robust, --robust): the "
                                           "cheapest plan meeting every deadline at a pessimistic MFU")
    thin_margin: ThinMargin | None = Field(default=None, description="solve --json, when a job's MFU margin is "
                                           "thin (the headline's warning; solver.report.terminal.thin_margins)")
    schedule: Schedule
