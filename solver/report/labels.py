"""Where a chart's point labels go: inside the plot, clear of each other and of other points,
each nearer its own point than any other.

Why a search and not a fixed offset: a label always to the upper right of its point crossed
the right axis on the last point of a frontier, and with points close together a label sat
beside the neighbour it did not name (a reader's report on a frontier plot). The HTML
report's SVG (pixels, y down) and the matplotlib plot (display pixels, y up) both call
`place_labels`; the orientation does not matter to it, only boxes and distances.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle, x0 < x1 and y0 < y1 in whatever units the caller draws in."""

    x0: float
    y0: float
    x1: float
    y1: float

    def inside(self, other: "Box") -> bool:
        return other.x0 <= self.x0 and self.x1 <= other.x1 and other.y0 <= self.y0 and self.y1 <= other.y1

    def overlaps(self, other: "Box") -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def distance(self, x: float, y: float) -> float:
        """From a point to the nearest point of the box (0 inside it)."""
        dx = max(self.x0 - x, 0.0, x - self.x1)
        dy = max(self.y0 - y, 0.0, y - self.y1)
        return math.hypot(dx, dy)

    def shifted_into(self, area: "Box") -> "Box":
        """The box moved (not resized) to lie inside area as far as its size allows."""
        dx = max(area.x0 - self.x0, 0.0) - max(self.x1 - area.x1, 0.0)
        dy = max(area.y0 - self.y0, 0.0) - max(self.y1 - area.y1, 0.0)
        return Box(self.x0 + dx, self.y0 + dy, self.x1 + dx, self.y1 + dy)


def candidates(x: float, y: float, w: float, h: float, gap: float) -> list[Box]:
    """Positions around (x, y): the four diagonal corners, then beside, above and below, each at
    gap, then at twice and three times gap (crowded points)."""
    out = []
    for g in (gap, 2 * gap, 3 * gap):
        out += [Box(x + g, y + g, x + g + w, y + g + h), Box(x + g, y - g - h, x + g + w, y - g),
                Box(x - g - w, y + g, x - g, y + g + h), Box(x - g - w, y - g - h, x - g, y - g),
                Box(x + g, y - h / 2, x + g + w, y + h / 2), Box(x - g - w, y - h / 2, x - g, y + h / 2),
                Box(x - w / 2, y + g, x + w / 2, y + g + h), Box(x - w / 2, y - g - h, x + w / 2, y - g)]
    return out


def place_labels(points: list[tuple[float, float]], sizes: list[tuple[float, float]], area: Box, *,
                 gap: float = 8.0, marker: float = 5.0, gaps: list[float] | None = None,
                 avoid: list[Box] | None = None, bystanders: list[tuple[float, float]] = (),
                 faults: list[int] | None = None) -> list[Box]:
    """A box per label (sizes[i] for points[i]) that lies inside `area`, overlaps no other label,
    no other point's marker (a square of half-side `marker`) and nothing in `avoid`, and is nearer
    its own point than any other point (`bystanders`: more points that get no label here). Points are served in order, each taking the first
    candidate (see `candidates`; `gaps[i]` overrides gap for one label) that keeps every rule;
    when none does, the candidate inside the area breaking the fewest (an overlap with another label
    counts three; ties: the first). `faults`, when given, receives each label's count of broken rules
    (all 0: every rule kept), so a caller can fall back to shorter labels."""
    placed: list[Box] = []
    blocked = list(avoid or [])
    everyone = list(points) + list(bystanders)
    markers = [Box(px - marker, py - marker, px + marker, py + marker) for px, py in everyone]
    for i, ((x, y), (w, h)) in enumerate(zip(points, sizes)):
        best, best_faults = None, math.inf
        for box in candidates(x, y, w, h, (gaps or [gap] * len(points))[i]):
            box = box if box.inside(area) else box.shifted_into(area)
            own = box.distance(x, y)
            broken = (3 * sum(box.overlaps(b) for b in placed + blocked)   # two labels on one another: worst
                      + sum(box.overlaps(m) for j, m in enumerate(markers) if j != i)
                      + sum(box.distance(px, py) <= own for j, (px, py) in enumerate(everyone) if j != i)
                      + (not box.inside(area)) + (box.overlaps(markers[i])))
            if broken < best_faults:
                best, best_faults = box, broken
            if broken == 0:
                break
        assert best is not None
        placed.append(best)
        if faults is not None:
            faults.append(int(best_faults))
    return placed
