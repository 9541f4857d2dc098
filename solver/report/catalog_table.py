"""`gpuplan catalog show`: one catalog table within the console (README: at most 100 columns).

Why its own widths: rich on its own cut whole columns off at 100 columns; here names a
user copies into edits are never folded, and every row's as_of and source stay on
screen as a numbered note under the table.
"""

from __future__ import annotations

from collections import Counter

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

TABLES = ("offers", "gpus", "datacenters")
"""The tables render_table can show, the first by default (`gpuplan catalog show --table`)."""
KEEP_WHOLE = {"offer", "vendor", "site", "mode", "gpu", "datacenter"}
"""Names a user copies into --set edits and restrict lists: never folded while the table fits."""
NUMBERS = {"memory GB", "bf16 TFLOPS", "fp8 TFLOPS", "mem TB/s", "TDP W", "default MFU", "power kW", "PUE",
           "WAN Gbit/s", "all-in CNY/GPU-h", "max nodes × GPUs", "term / lead days"}
WHOLE_LINES = {"fabric", "all-in CNY/GPU-h"}
"""Cells of one line per interconnect option: the fabric's line and its price's stay side by side."""


def render_table(catalog, console: Console, name: str) -> None:
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
        rows = sorted(catalog.offers.values(), key=lambda o: (o.gpu, _cheapest(o), o.offer))
        header = ["offer", "vendor", "site", "mode", "max nodes × GPUs", "term / lead days", "fabric",
                  "all-in CNY/GPU-h"]
        cells = [[o.offer, o.vendor, o.datacenter, o.mode, f"{o.max_nodes}×{o.gpus_per_node}",
                  f"{o.term_days}/{o.lead_time_days}", "\n".join(o.interconnect),
                  "\n".join(f"{o.gpu_cost_per_hour(k):.2f}" for k in range(len(o.interconnect)))]
                 for o in rows]
        groups = [_gpu_heading(catalog, o.gpu) for o in rows]
        caption = ("all-in CNY/GPU-h, one per fabric: rent, that fabric's interconnect price and the platform fee, "
                   "before volume discounts and, for spot, preemption losses; offers are sorted by their cheapest. "
                   "The quoted price and unit, discount, power, storage and egress are in offers.csv"
                   + _other_stacks(catalog))
    notes: dict[tuple[str, str], int] = {}
    refs = [str(notes.setdefault((str(r.as_of or ""), r.source), len(notes) + 1)) for r in rows]
    title = f"{catalog.path} — {name}"
    table = _table(title, header, cells, refs, groups, _widths([*header, "src"], [c + [r] for c, r in zip(cells, refs)],
                                                               console.width))
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


def _widths(header: list[str], cells: list[list[str]], width: int) -> list[int] | None:
    """Column widths within `width` (one space between columns): each at least its widest word
    (names in KEEP_WHOLE: their longest value), then widened towards its longest line as room
    allows. None when even that does not fit: rich then folds cells, but drops no column."""
    def words(k: int) -> list[str]:
        return header[k].split() + [w for row in cells for w in
                                    ([row[k]] if header[k] in KEEP_WHOLE else
                                     row[k].split("\n") if header[k] in WHOLE_LINES else row[k].split())]
    least = [max(map(len, words(k))) for k in range(len(header))]
    most = [max(least[k], len(header[k]), *(len(line) for row in cells for line in row[k].split("\n")))
            for k in range(len(header))]
    room = width - (len(header) - 1) - sum(least)
    if room < 0:
        return None
    widths = list(least)
    for k in sorted(range(len(header)), key=lambda k: most[k] - least[k]):   # small gaps closed first
        grow = min(room, most[k] - least[k])
        widths[k] += grow
        room -= grow
    return widths


def _table(title: str, header: list[str], cells: list[list[str]], refs: list[str], groups: list[str] | None,
           widths: list[int] | None) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=0)
    for k, col in enumerate([*header, "src"]):
        table.add_column(col, justify="right" if col in NUMBERS or col == "src" else "left", overflow="fold",
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
