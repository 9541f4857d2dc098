"""The report page's contract checklist: per vendor in the plan, the questions most rental disputes
are about (what the price includes, stopped-but-kept fees, fault compensation, performance, export),
pre-answered where the catalog knows."""

from __future__ import annotations

from solver.i18n import N_, _, is_zh, money_unit
from solver.model.catalog import Catalog
from solver.model.modes import MODES
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.report.markup import esc, table
from solver.report.words import FABRIC_NAMES, TIME_UNITS, mode_name

QUESTIONS = (
    ("storage", N_("Are storage and bandwidth included in the price?"), "含存储和带宽吗？"),
    ("stopped", N_("Is there a fee for stopped-but-kept machines (often {share} of the list price)? "
                   "Put the stop policy in a contract annex."), "停机保留费？停机策略写进合同附件"),
    ("faults", N_("Fault compensation: for an outage (power, network, hardware), is the machine-time fee refunded "
                  "in full, or only the rent of the outage itself?"), "故障赔偿条款"),
    ("performance", N_("Performance: at least {share} of the GPU's rated compute, for the GPU model named in the "
                       "contract?"), "性能达标：不低于官方标准算力的95%"),
    ("export", N_("Is export of model weights, logs and data free when training ends?"),
     "数据迁移：模型权重、日志、数据集是否免费导出？"),
)
"""The questions (English, translated by the catalog) and the rental guides' own Chinese clause,
shown beside the English question in an English report. Percentages are `{share}` (QUESTION_SHARES):
gettext tools read "50% of" as a printf placeholder."""
QUESTION_SHARES = {"stopped": "20–50%", "performance": "95%"}


def checklist(plan: Plan, problem: Problem, catalog: Catalog, used: dict) -> str:
    """Per vendor in the plan, the rental guides' contract questions, pre-answered where the catalog knows.
    In Chinese the whole checklist is Chinese; in English each question carries the guide's clause."""
    storage_tb = {j.name: j.storage_tb for j in problem.jobs}
    egress_tb = sum(j.egress_tb for j in problem.jobs)
    by_vendor: dict[str, list] = {}
    for o in used.values():
        if o is not None:
            by_vendor.setdefault(o.vendor, []).append(o)
    intro = esc(_("Before signing, ask every vendor in the plan: these are the clauses most rental disputes are "
                  "about (what the price includes, stopped-but-kept fees, fault compensation, performance, export)."))
    legend = _("{green}: what the catalog says — confirm it in writing; {ask}: the catalog does not know.").format(
        green='<span class="known">' + esc(_("Green")) + '</span>', ask='<span class="ask">' + esc(_("ask")) + '</span>')
    out = [f"<p>{intro} {legend}</p>"]
    for vendor, offers in sorted(by_vendor.items()):
        answers = _answers(offers, plan, storage_tb, egress_tb)
        rows = [[str(i), esc(_(q).format(share=QUESTION_SHARES.get(key, ""))) +
                 ("" if is_zh() else f' <span class="zh" lang="zh-CN">{esc(zh)}</span>'),
                 answers[key]] for i, (key, q, zh) in enumerate(QUESTIONS, 1)]
        names = ", ".join(sorted(f"{o.offer}" for o in offers))
        offers_line = esc(_("offers: {names}").format(names=names))
        out.append(f'<h3 class="vendor">{esc(vendor)}</h3><p class="muted">{offers_line}</p>'
                   + table(["#", _("question"), _("what we know")], rows, cls="checklist"))
    return "\n".join(out)


def _answers(offers: list, plan: Plan, storage_tb: dict, egress_tb: float) -> dict[str, str]:
    def known(text: str) -> str:
        return f'<span class="known">{esc(text)}</span>'

    ask = '<span class="ask">' + esc(_("ask")) + '</span>'
    sites: dict[str, tuple[float, float, str]] = {}
    for o in offers:
        sites.setdefault(o.datacenter, (o.storage_per_tb_month, o.egress_per_tb, o.currency))
    storage_parts, egress_parts = [], []
    for site, (st, eg, cur) in sorted(sites.items()):
        price = _("included (0)") if st == 0 else _("{price} {unit}/TB-month").format(price=f"{st:,.0f}",
                                                                                     unit=money_unit(cur))
        storage_parts.append(_("{site}: storage {price}").format(site=site, price=price))
        egress_parts.append(f"{site}: " + (_("free (0)") if eg == 0 else f"{eg:,.0f} {money_unit(cur)}/TB"))
    fabric = [_("{offer}: {fabrics} at {prices} {unit}/node-{per} extra").format(
        offer=o.offer, fabrics=" / ".join(FABRIC_NAMES.get(ic, ic) for ic in o.interconnect),
        prices=" / ".join(f"{p:,.0f}" for p in o.interconnect_price),
        unit=money_unit(o.currency), per=_(TIME_UNITS[MODES[o.mode].unit])) for o in offers if any(o.interconnect_price)]
    semi = _("; ")
    storage = known(_("catalog: {what}").format(what=semi.join(storage_parts)) +
                    (_(". Interconnect {what}").format(what=semi.join(fabric)) if fabric
                     else _(". Interconnect included"))) + \
        " — " + _("{ask} about the bandwidth of the line to your data").format(ask=ask)
    guaranteed = sorted({o.perf_guarantee_pct for o in offers if o.perf_guarantee_pct is not None})
    unknown = [o.offer for o in offers if o.perf_guarantee_pct is None]
    if guaranteed:
        text = _("catalog: guaranteed {pcts}").format(pcts=", ".join(f"{g:g}%" for g in guaranteed))
        perf = known(text) + (' <span class="warn">' + esc(_("below 95%")) + '</span>' if min(guaranteed) < 95 else "")
        if unknown:
            perf += semi + _("{ask} for {offers}").format(ask=ask, offers=esc(", ".join(unknown)))
    else:
        perf = _("{ask} (no guarantee in the catalog)").format(ask=ask)
    spot = [o.offer for o in offers if o.preemptible]
    committed = [o for o in offers if o.committed]
    stopped = ask
    if committed:
        stopped += " — " + esc(_("committed contracts in the plan ({modes}) are paid for their whole term anyway").format(
            modes=", ".join(mode_name(m) for m in sorted({o.mode for o in committed}))))
    faults = ask
    if spot:
        faults += " — " + esc(_("spot capacity ({offers}) can be reclaimed without compensation; the plan counts its "
                                "preemptions as lost work").format(offers=", ".join(spot)))
    export = known(_("catalog: egress {what}").format(what=semi.join(egress_parts))) + \
        esc(_("; the problem exports {tb} TB in total").format(tb=f"{egress_tb:g}")) + " — " + \
        _("{ask} whether weights and data may leave free").format(ask=ask)
    return {"storage": storage, "stopped": stopped, "faults": faults, "performance": perf, "export": export}
