"""The frontier plot's labels (solver.report.frontier_plot): every point's label inside the axes, off
the legend, apart from the others, nearest its own point; the knee's note clear of them all.

Measured on the drawn figure: matplotlib's own text extents in display pixels.
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.builders import catalog, hourly, job, problem
from solver.analysis.frontier import frontier
from solver.report.labels import Box

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def tiers():
    cat = catalog(hourly("cheap", 4.0, max_nodes=1), hourly("mid", 5.0, max_nodes=1), hourly("dear", 6.0, max_nodes=3))
    return frontier(problem(job(days=40, deadline_days=10), horizon_days=10), cat, "deadline", 10)


def crowded(result):
    """The same plans squeezed together: three points within a day and 1% of cost at each end."""
    base = result.points[0]
    spots = [(3, 100.0), (3.2, 99.5), (3.4, 99.0), (9.6, 50.2), (9.8, 50.1), (10, 50.0)]
    points = [dataclasses.replace(base, x=x, y=y, knee=i == 3) for i, (x, y) in enumerate(spots)]
    return dataclasses.replace(result, points=points)


def boxes_of(fig):
    from matplotlib.text import Text
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    labels = {int(t.get_gid().split("-")[1]): t for t in ax.texts if (t.get_gid() or "").startswith("label-")}
    note = next((t for t in ax.texts if t.get_gid() == "knee-note"), None)
    box = lambda t: Box(*Text.get_window_extent(t, renderer).extents)  # noqa: E731 - the text alone, not its arrow
    return ax, {i: box(t) for i, t in labels.items()}, (box(note) if note is not None else None), renderer


@pytest.mark.parametrize("inline", [True, False], ids=["mixes beside points", "numbers and a key"])
@pytest.mark.parametrize("squeeze", [False, True], ids=["as solved", "crowded"])
def test_labels_inside_apart_and_beside_their_own_point(tiers, monkeypatch, inline, squeeze):
    import matplotlib.pyplot as plt

    from solver.report import frontier_plot
    monkeypatch.setattr(frontier_plot, "INLINE_LABELS", 10 if inline else 2)
    result = crowded(tiers) if squeeze else tiers
    fig = frontier_plot.draw_frontier(result)
    try:
        ax, labels, note, renderer = boxes_of(fig)
        inner = ax.get_window_extent(renderer)
        area = Box(inner.x0, inner.y0, inner.x1, inner.y1)
        legend = Box(*ax.get_legend().get_window_extent(renderer).extents)
        centres = [tuple(ax.transData.transform((p.x, p.y))) for p in result.points]
        assert sorted(labels) == list(range(1, len(result.points) + 1))
        texts = [t.get_text() for t in ax.texts if (t.get_gid() or "").startswith("label-")]
        if inline and not squeeze:
            assert all(": " in t for t in texts)                       # the mixes fit beside their points
        for i, box in labels.items():
            assert box.inside(area), f"label {i} crosses an axis: {box} outside {area}"
            assert not box.overlaps(legend), f"label {i} under the legend"
            own = box.distance(*centres[i - 1])
            nearest = min(range(len(centres)), key=lambda j: box.distance(*centres[j]))
            assert nearest == i - 1 and all(box.distance(*c) > own for j, c in enumerate(centres) if j != i - 1), \
                f"label {i} sits nearer point {nearest + 1}"
            assert not any(box.overlaps(b) for j, b in labels.items() if j != i), f"label {i} overlaps another"
        if result.knee is not None:
            assert note is not None and note.inside(area)
            assert not any(note.overlaps(b) for b in labels.values()) and not note.overlaps(legend)
            k = next(i for i, p in enumerate(result.points) if p is result.knee)
            ring = 8 * fig.dpi / 72                         # the knee's ring: a 16-pt marker
            assert note.distance(*centres[k]) > ring and labels[k + 1].distance(*centres[k]) >= ring
    finally:
        plt.close(fig)
