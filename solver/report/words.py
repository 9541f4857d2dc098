"""The report's shared words: rental modes, cost parts, limits, reasons, layouts and fabrics as people
read them, in the active language (solver.i18n). The HTML page, the terminal, the spreadsheets, why,
what-if and the explanation all name things through here, so a word is changed in one place.

Plain text, no markup; imports no solver stack at load time (`--help` and `estimate` load it).
"""

from __future__ import annotations

from solver.i18n import N_, _, is_zh, money_unit

PART_NAMES = {"gpu_rent": N_("GPU rent"), "interconnect": N_("interconnect"), "platform_fee": N_("platform fees"),
              "storage": N_("storage"), "egress": N_("egress"), "volume_discount": N_("volume discount")}


MODE_NAMES = {"hourly": N_("hourly"), "monthly": N_("monthly"), "yearly": N_("yearly"), "hosted": N_("hosted"),
              "spot": N_("spot"), "storage": N_("storage"), "egress": N_("egress")}
"""Rental modes (and the cash flow's storage and egress columns) as words; the data keeps the key."""


def mode_name(mode: str) -> str:
    """A rental mode in the active language (`hourly`, 按小时计费)."""
    return _(MODE_NAMES[mode]) if mode in MODE_NAMES else mode


def part_name(part: str) -> str:
    """A cost part (`gpu_rent`) in words, in the active language."""
    return _(PART_NAMES[part]) if part in PART_NAMES else part.replace("_", " ")


def money(value: float) -> str:
    """An amount as the report's tables show it: whole units, thousands separated."""
    return f"{value:,.0f}"


AXIS_WORDS = {"finishing day": N_("finishing day"), "cost": N_("cost"), "budget": N_("budget"),
              "share of work on spot nodes": N_("share of work on spot nodes"),
              "vendors rented from": N_("vendors rented from")}
"""The frontier's axis labels (solver.analysis.frontier.LABELS) in words; `cost (CNY)` keeps its unit."""


def axis_label(label: str) -> str:
    """A frontier axis label in the active language: `cost (CNY)` → 费用（元）."""
    base, _sep, rest = label.partition(" (")
    if base not in AXIS_WORDS:
        return label
    if not rest:
        return _(AXIS_WORDS[base])
    return _("{what} ({unit})").format(what=_(AXIS_WORDS[base]), unit=money_unit(rest.rstrip(")")))


LAYOUT_GLOSS = N_("Layout: TP×PP is the GPUs one copy of the model is split over (TP: each layer across GPUs, "
                   "PP: layers in stages); replicas are copies trained side by side, and DP, the data-parallel "
                   "degree, counts them (× any ZeRO sharding).")
"""One line for readers who do not train models, wherever a layout is shown to them (`_()` it there)."""
MARGIN_GLOSS = N_("MFU margin: the lowest MFU, as a share of the one planned with, at which the job still ends in "
                  "time.")

FABRIC_NAMES = {"ib_ndr": "InfiniBand NDR", "ib_hdr": "InfiniBand HDR", "roce": "RoCE", "ethernet": "Ethernet"}
"""The catalog's interconnect codes in words (never `ib_ndr|roce` in a report)."""


def layout_words(job) -> str:
    """A job's layout (JobResult.layout_text, "55 replicas of TP4×PP2 (DP55), recompute"), in Chinese
    written from its layout's numbers; the plan's own text in English."""
    lay = job.layout or {}
    if not is_zh() or not {"tp", "pp", "dp", "replicas"} <= set(lay):
        return job.layout_text
    shards = lay.get("zero_shards", 1)   # the group's own ZeRO sharding; `dp` is the job's whole DP
    group = f"TP{lay['tp']}×PP{lay['pp']}" + (_(" sharded over {n}").format(n=shards) if shards > 1 else "")
    parts = [_("{n} replicas of {group} (DP{dp})").format(n=lay["replicas"], group=group, dp=lay["dp"])]
    if lay.get("zero"):
        parts.append(f"ZeRO-{lay['zero']}")
    if lay.get("recompute"):
        parts.append(_("recompute"))
    return _(", ").join(parts)


def binding_text(b) -> str:
    """What a binding limit is (Binding.text), in Chinese written from its numbers; the plan's own text in English."""
    if not is_zh():
        return b.text
    fam = _families().get(b.kind)
    if fam is None or not isinstance(fam.labels.binding, str):
        return b.text
    money = fam.unit == _money()
    return _(fam.labels.binding).format(name=b.name, span=f"{b.start_day}–{b.end_day}",
                                        unit=money_unit(b.unit) if money else b.unit,
                                        used=f"{b.used:,.0f}" if money else f"{b.used:,.1f}",
                                        limit=f"{b.limit:,.1f}" if b.unit == "kW" else f"{b.limit:,.0f}")


def _families() -> dict:
    """The constraint families by name (solver.milp.registry through the api): their words.

    Imported here, when a limit is shown, not with the module: a plan's limits are shown after
    a solve has loaded the solver anyway, and `--help` or `estimate` need none of it."""
    from solver.api import FAMILIES

    return {fam.name: fam for fam in FAMILIES}


def _money() -> str:
    from solver.api import MONEY

    return MONEY


REASONS = {"price": N_("price"), "memory": N_("memory"), "power": N_("power"), "lead_time": N_("lead time"),
           "availability": N_("availability"), "residency": N_("residency"), "deadline": N_("deadline"),
           "fabric": N_("fabric"), "restrict": N_("restricted"), "stack": N_("software stack"), "spot": N_("spot"),
           "precision": N_("precision"), "window": N_("window"), "capacity": N_("capacity"),
           "dominated": N_("dominated")}
"""Why an option lost or was left out (solver.analysis.why.CODES, solver.milp.exclusion.CODES) in words,
in Chinese; an English report keeps the code, as `--json` does."""


def reason_name(code: str) -> str:
    return _(REASONS[code]) if is_zh() and code in REASONS else code


def family_labels(kind: str):
    """The words of the constraint family named `kind` (Family.labels); None: no such family."""
    fam = _families().get(kind)
    return None if fam is None else fam.labels


def limit_name(kind: str) -> str:
    """A limit's kind (Plan.binding's, a relaxation's: a constraint family's name) in words."""
    fam = _families().get(kind)
    return _(fam.labels.name) if fam is not None else kind


PRICE_UNITS = {"per gpu hour": N_("per GPU-hour"), "per node hour": N_("per node-hour"),
               "per gpu month": N_("per GPU-month"), "per node month": N_("per node-month"),
               "per node year": N_("per node-year")}
"""An offer's price_unit (its `cny_` prefix dropped) in words."""
TIME_UNITS = {"hour": N_("hour"), "month": N_("month"), "year": N_("year")}

