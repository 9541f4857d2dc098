"""Rental lines of one offer that overlap in time, shown as one contract line (issue 47, item 8).

Why: the MILP may rent one offer as two contracts a day apart (2 nodes days 14–44, 1 node days
15–45) where a buyer signs one 3-node contract. The schedule and the verifier keep the lines as
they are (and `--json` `allocations` too: a contract other tools read); the report shows them as
one line with its node count over time and says which rental numbers it joins, so the idle and
job tables, which cite the numbers, still read against it.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.i18n import _, ngettext
from solver.model.plan import Allocation


@dataclass(frozen=True)
class ContractLine:
    """One or more rental lines (their numbers, 1-based) of one offer, fabric and mode that overlap."""

    numbers: tuple[int, ...]
    lines: tuple[Allocation, ...]

    @property
    def first(self) -> Allocation:
        return self.lines[0]

    @property
    def start_day(self) -> int:
        return min(a.start_day for a in self.lines)

    @property
    def end_day(self) -> int:
        return max(a.end_day for a in self.lines)

    @property
    def cost(self) -> float:
        return sum(a.cost for a in self.lines)

    @property
    def merged(self) -> bool:
        return len(self.lines) > 1

    def steps(self) -> list[tuple[int, int, int]]:
        """(first day, end day, nodes held) of each stretch at one node count, in order."""
        cuts = sorted({d for a in self.lines for d in (a.start_day, a.end_day)})
        out: list[tuple[int, int, int]] = []
        for lo, hi in zip(cuts, cuts[1:]):
            nodes = sum(a.nodes for a in self.lines if a.start_day <= lo and hi <= a.end_day)
            if out and out[-1][2] == nodes and out[-1][1] == lo:
                out[-1] = (out[-1][0], hi, nodes)
            else:
                out.append((lo, hi, nodes))
        return out

    def label(self) -> str:
        """`1`, or `1+2` for lines joined."""
        return "+".join(map(str, self.numbers))


def contract_lines(allocations: list[Allocation]) -> list[ContractLine]:
    """The plan's rental lines with those of one offer, fabric and mode that overlap in time joined
    (a chain of overlaps joins all of it), in the order of their first number; lines that only
    follow one another (a monthly term renewed) stay apart."""
    groups: list[list[int]] = []
    for i, a in enumerate(allocations):
        joined = [g for g in groups if any(_overlap(a, allocations[j]) for j in g)]
        merged = sorted({i, *(j for g in joined for j in g)})
        groups = [g for g in groups if g not in joined] + [merged]
    groups.sort(key=lambda g: g[0])
    return [ContractLine(tuple(j + 1 for j in g), tuple(allocations[j] for j in g)) for g in groups]


def _overlap(a: Allocation, b: Allocation) -> bool:
    return ((a.offer, a.interconnect, a.mode) == (b.offer, b.interconnect, b.mode)
            and a.start_day < b.end_day and b.start_day < a.end_day)


def nodes_text(line: ContractLine) -> str:
    """The node count: `5`, or over time for joined lines: `2→3→1`."""
    return "→".join(str(n) for _lo, _hi, n in line.steps()) if line.merged else str(line.first.nodes)


def gpus_text(line: ContractLine) -> str:
    """The GPU count: `40`, or over time for joined lines: `16→24→8`."""
    per_node = line.first.gpus // max(line.first.nodes, 1)
    return "→".join(str(n * per_node) for _lo, _hi, n in line.steps()) if line.merged else str(line.first.gpus)


def merged_note(line: ContractLine, span) -> str:
    """What a joined line is, for the note under the table: its lines, its node count over time, and
    that a vendor may sign it as one contract. `span(first, end)` writes a range of days."""
    parts = _("; ").join(
        ngettext("#{n}: {nodes} node, {days}", "#{n}: {nodes} nodes, {days}", a.nodes).format(
            n=n, nodes=a.nodes, days=span(a.start_day, a.end_day)) for n, a in zip(line.numbers, line.lines))
    steps = _(", then ").join(
        ngettext("{nodes} node {days}", "{nodes} nodes {days}", nodes).format(nodes=nodes, days=span(lo, hi))
        for lo, hi, nodes in line.steps())
    return _("{label}: one offer ({offer}) rented as overlapping contracts ({parts}), shown as one line: "
             "{steps}; a vendor may sign it as one contract of {peak} nodes").format(
        label=line.label(), offer=line.first.offer, parts=parts, steps=steps,
        peak=max(n for _lo, _hi, n in line.steps()))
