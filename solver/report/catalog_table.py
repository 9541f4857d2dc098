"""`gpuplan catalog show`: one catalog table within the console's width (the terminal's, 100 when piped).

Why its own widths: rich on its own cut whole columns off at 100 columns; here names a
user copies into edits are never folded while they fit, and when they cannot (long imported
ids in a narrow terminal) they break only after a '-' or '_', never inside a word; every
row's as_of and source stay on screen as a numbered note under the table.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from rich import box

from solver.errors import ProblemError
from rich.console import Console
from rich.table import Table
from rich.text import Text

TABLES = ("offers", "gpus", "datacenters")
"""The tables render_table can show, the first by default (`gpuplan catalog show --table`)."""
KEEP_WHOLE = {"offer", "vendor", "site", "mode", "gpu", "datacenter"}
"""Names a user copies into --set edits and restrict lists: never folded while the table fits."""
NUMBERS = {"memory GB", "bf16 TFLOPS", "fp8 TFLOPS", "mem TB/s", "TDP W", "default MFU", "power kW", "PUE",
           "WAN Gbit/s", "max nodes × GPUs", "term / lead days"}
WHOLE_LINES = {"fabric", "offer / site"}
"""Cells of one line per interconnect option: the fabric's line and its price's stay side by side."""


@dataclass(frozen=True)
class OfferFilter:
    """Which offers `catalog show` lists: allow-lists (empty: all) and the N cheapest per GPU.
    `rates`: units of `currency` for one unit of another currency, to rank offers in several
    currencies on one scale (without them each offer's price stays in its own currency)."""

    gpus: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    vendors: tuple[str, ...] = ()
    top: int | None = None
    currency: str = "CNY"
    rates: tuple[tuple[str, float], ...] = ()


def select_offers(catalog, how: OfferFilter) -> tuple[list, dict[str, float] | None, bool]:
    """The offers to show, grouped by GPU and cheapest first (all-in per GPU-hour); the rate of
    each offer's currency into how.currency when --rate was given (None: prices stay in their
    own); whether the offers are in several currencies. --region matches a datacenter's region or
    its name. Without rates, offers in several currencies are ranked (and --top counted) within
    each currency: the caption says so."""
    def keep(o) -> bool:
        dc = catalog.datacenters.get(o.datacenter)
        return ((not how.gpus or o.gpu in how.gpus) and (not how.modes or o.mode in how.modes)
                and (not how.vendors or o.vendor in how.vendors)
                and (not how.regions or o.datacenter in how.regions or (dc is not None and dc.region in how.regions)))

    rows = [o for o in catalog.offers.values() if keep(o)]
    currencies = {o.currency for o in rows}
    convert = None
    if how.rates:
        convert = {**dict(how.rates), how.currency: 1.0}
        missing = sorted(currencies - set(convert))
        if missing:
            raise ProblemError(f"no --rate for {missing[0]}, the currency of some offers shown", key="--rate",
                               fix=f"add --rate {missing[0]}=N (N {how.currency} for one {missing[0]})")

    def cost(o) -> tuple:
        price = _cheapest(o) * (convert[o.currency] if convert else 1.0)
        return (o.gpu, "" if convert else o.currency, price, o.offer)

    rows.sort(key=cost)
    if how.top:
        seen: dict[tuple[str, str], int] = {}
        kept = []
        for o in rows:
            key = (o.gpu, "" if convert else o.currency)
            if seen.get(key, 0) < how.top:
                seen[key] = seen.get(key, 0) + 1
                kept.append(o)
        rows = kept
    return rows, convert, len(currencies) > 1


def render_table(catalog, console: Console, name: str, how: OfferFilter | None = None) -> None:
    """One catalog table. Offers are grouped by GPU and sorted by their cheapest all-in price per
    GPU-hour (rent, interconnect and platform fee; the caption names what is left out); every
    row's as_of and source become a numbered note under the table, shared by rows that cite the same.
    Why all-in: ranked by rent alone, an offer with a 10% platform fee or a dear fabric looked
    cheaper than it bills (a user's review, 2026-12-03)."""
    if name == "gpus":
        rows = list(catalog.gpus.values())
        header = ["gpu", "memory GB", "bf16 TFLOPS", "fp8 TFLOPS", "mem TB/s", "TDP W", "form", "class", "stack",
                  "default MFU", "confidence"]
        cells = [[g.gpu, _num(g.memory_gb), _num(g.bf16_tflops), _num(g.fp8_tflops), _num(g.mem_bw_tbs),
                  _num(g.tdp_w), g.form, g.gpu_class, g.stack, _num(g.default_mfu), g.confidence] for g in rows]
        groups, caption = None, None
    elif name == "datacenters":
        rows = list(catalog.datacenters.values())
        header = ["datacenter", "region", "power kW", "PUE", "residency", "link group", "WAN Gbit/s"]
        cells = [[d.datacenter, d.region, _num(d.power_quota_kw), _num(d.pue), " ".join(d.residency), d.link_group,
                  _num(d.wan_gbps) or "default"] for d in rows]
        groups, caption = None, None
    else:
        how = how or OfferFilter()
        rows, convert, mixed = select_offers(catalog, how)
        shown = {o.currency for o in rows}
        single = convert is None and not mixed
        unit = how.currency if convert else (next(iter(shown)) if single and shown else "")
        price_col = f"all-in {unit}/GPU-h" if unit else "all-in per GPU-h"

        def prices(o) -> str:
            k = convert[o.currency] if convert else 1.0
            return "\n".join(f"{o.gpu_cost_per_hour(i) * k:.2f}" for i in range(len(o.interconnect)))
        header = ["offer", "vendor", "site", "mode", "max nodes × GPUs", "term / lead days", "fabric", price_col]
        cells = [[o.offer, o.vendor, o.datacenter, o.mode, f"{o.max_nodes}×{o.gpus_per_node}",
                  f"{o.term_days}/{o.lead_time_days}", "\n".join(o.interconnect), prices(o)] for o in rows]
        if _widths([*header, "src"], [c + ["0"] for c in cells], console.width) is None:
            # many long ids (imported clouds): the site goes under the offer id, the vendor is in both
            header = ["offer / site"] + header[3:]
            cells = [[f"{c[0]}\n  {c[2]}"] + c[3:] for c in cells]
        groups = [_gpu_heading(catalog, o.gpu) if single or convert
                  else f"{_gpu_heading(catalog, o.gpu)} (prices in {o.currency})" for o in rows]
        others = ", ".join(f"{c} {r:g}" for c, r in sorted(convert.items()) if c != how.currency) if convert else ""
        money = (f"{how.currency}, other currencies at {others}" if others
                 else unit or "the currency its GPU's group names")
        caption = (f"all-in per GPU-hour ({money}), one per fabric: rent, that fabric's interconnect price and the "
                   "platform fee, before volume discounts and, for spot, preemption losses; offers are sorted by "
                   "their cheapest" + (f", the {how.top} cheapest per GPU"
                                       + (" and currency" if mixed and not convert else "") + " shown" if how.top else "")
                   + (". Several currencies: give --rate USD=7.1 (units of --currency per USD) to rank them together"
                      if not single and not convert else "")
                   + ". The quoted price and unit, discount, power, storage and egress are in offers.csv"
                   + _other_stacks(catalog))
    notes: dict[tuple[str, str], int] = {}
    refs = [str(notes.setdefault((str(r.as_of or ""), r.source), len(notes) + 1)) for r in rows]
    title = f"{catalog.path} — {name}"
    widths = _widths([*header, "src"], [c + [r] for c, r in zip(cells, refs)], console.width)
    if widths is None:        # names cannot stay whole: break them after '-' or '_' only
        widths = _widths([*header, "src"], [c + [r] for c, r in zip(cells, refs)], console.width, whole=False)
        if widths is not None:
            cells = [[_wrap_name(c, widths[k]) if _names(header[k]) else c for k, c in enumerate(row)]
                     for row in cells]
    table = _table(title, header, cells, refs, groups, widths)
    console.print(table)
    if caption:
        console.print(caption, highlight=False, markup=False)
    sources = Table.grid(padding=(0, 1))
    sources.add_column(justify="right")
    sources.add_column(overflow="fold")
    for (as_of, source), n in notes.items():
        sources.add_row(f"{n}.", Text(f"{as_of}: {source}" if as_of else source))
    console.print("src (as of, source):", highlight=False)
    console.print(sources)


def _widths(header: list[str], cells: list[list[str]], width: int, *, whole: bool = True) -> list[int] | None:
    """Column widths within `width` (one space between columns): each at least its widest word
    (names in KEEP_WHOLE: their longest value; with whole=False their longest piece between
    '-' and '_' breaks), then widened towards its longest line as room allows. None when even
    that does not fit: rich then folds cells, but drops no column."""
    def words(k: int) -> list[str]:
        if not whole and _names(header[k]):
            return header[k].split() + [p for row in cells for line in row[k].split("\n") for p in _pieces(line)]
        return header[k].split() + [w for row in cells for w in
                                    ([row[k]] if header[k] in KEEP_WHOLE else
                                     row[k].split("\n") if _whole_lines(header[k]) else row[k].split())]
    least = [max(map(len, words(k))) for k in range(len(header))]
    most = [max(least[k], len(header[k]), *(len(line) for row in cells for line in row[k].split("\n")))
            for k in range(len(header))]
    room = width - (len(header) - 1) - sum(least)
    if room < 0:
        return None
    widths = list(least)
    # small gaps closed first; names that must break first of all (fewer breaks in what users copy)
    for k in sorted(range(len(header)), key=lambda k: (whole or not _names(header[k]), most[k] - least[k])):
        grow = min(room, most[k] - least[k])
        widths[k] += grow
        room -= grow
    return widths


def _table(title: str, header: list[str], cells: list[list[str]], refs: list[str], groups: list[str] | None,
           widths: list[int] | None) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=0)
    for k, col in enumerate([*header, "src"]):
        table.add_column(col, justify="right" if col in NUMBERS or col == "src" or col.startswith("all-in") else "left",
                         overflow="fold",
                         width=widths[k] if widths else None)
    group = None
    for i, (row, ref) in enumerate(zip(cells, refs)):
        if groups is not None and groups[i] != group:
            if group is not None:
                table.rows[-1].end_section = True
            group = groups[i]
            table.add_row(Text(group, style="bold"))
        table.add_row(*(Text(c) for c in row), ref)
    return table


def _names(column: str) -> bool:
    """Columns of names a user copies (ids, sites): broken only between pieces when they must be."""
    return column in KEEP_WHOLE or column == "offer / site"


def _pieces(name: str) -> list[str]:
    """A name cut after each '-' or '_' (the hyphen stays at the end of its piece); leading spaces kept."""
    return [p for p in re.split(r"(?<=[-_])", name) if p]


def _wrap_name(cell: str, width: int) -> str:
    """Each line of a name cell filled with whole pieces up to `width` characters (a continued
    name is indented by two spaces, like a site under its offer)."""
    out = []
    for line in cell.split("\n"):
        current = ""
        for piece in _pieces(line):
            if current and len(current) + len(piece) > width:
                out.append(current)
                current = "  " + piece.lstrip() if len(piece.lstrip()) + 2 <= width else piece.lstrip()
            else:
                current += piece
        out.append(current)
    return "\n".join(out)


def _whole_lines(column: str) -> bool:
    """Cells kept one line per item: fabrics and their prices side by side, an offer id above its site."""
    return column in WHOLE_LINES or column.startswith("all-in")


def _gpu_heading(catalog, gpu: str) -> str:
    """An offers group's heading: the GPU, and its software stack when that is not the catalog's
    usual one (an Ascend 910B beside A100s: `Ascend-910B-64G (CANN)`, training code ported from CUDA)."""
    counts = Counter(g.stack for g in catalog.gpus.values())
    row = catalog.gpus.get(gpu)
    if row is None or row.stack == counts.most_common(1)[0][0]:
        return gpu
    return f"{gpu} ({row.stack.upper()})"


def _other_stacks(catalog) -> str:
    """The caption's word on GPUs marked with another stack, or nothing when the catalog has one."""
    counts = Counter(g.stack for g in catalog.gpus.values())
    marked = sorted(s.upper() for s in counts if s != counts.most_common(1)[0][0])
    if not marked:
        return ""
    return (f". A GPU marked {' or '.join(f'({m})' for m in marked)} needs another software stack than the rest: "
            "training code ported to it; a plan that mixes stacks says so")


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def _cheapest(offer) -> float:
    return min(offer.gpu_cost_per_hour(k) for k in range(len(offer.interconnect)))
