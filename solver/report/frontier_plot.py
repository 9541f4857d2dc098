"""A frontier as a picture: PREFIX.png and PREFIX.svg, knee marked, each point labelled by its mix.

matplotlib is an optional extra (`pip install .[plot]`), imported only here and only when
a plot is asked for; the Agg backend draws without a display.
"""

from __future__ import annotations

from pathlib import Path

from solver.analysis.frontier import Frontier, is_money, mix_label
from solver.errors import ProblemError
from solver.files import check_new_file, save_atomic
from solver.report.labels import Box, place_labels

SUFFIXES = (".png", ".svg")
INLINE_LABELS = 6
"""Up to this many points carry their mix beside them; more get a number and a key."""


def plot_paths(prefix: str | Path) -> list[Path]:
    prefix = Path(prefix)
    return [prefix.with_name(prefix.name + suffix) for suffix in SUFFIXES]


def check_plot_paths(prefix: str | Path, *, force: bool = False) -> list[Path]:
    """The files a plot would write, each checked by solver.files.check_new_file (exists without force,
    a link, its folder missing or not writable: the words of every other output)."""
    return [check_new_file(path, "--plot", force=force, example="frontier (PREFIX: .png and .svg are added)")
            for path in plot_paths(prefix)]


def require_matplotlib() -> None:
    """ProblemError (with the install hint) when matplotlib is missing."""
    _pyplot()


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ProblemError("plotting needs matplotlib, which is not installed", key="--plot",
                           fix="pip install .[plot]") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _fmt(axis_label: str, value: float) -> str:
    if is_money(axis_label):
        return f"{value / 1e6:,.2f}M" if abs(value) >= 1e6 else f"{value:,.0f}"
    if "share" in axis_label:
        return f"{value:.0%}"
    return f"{value:g}"


def plot_frontier(result: Frontier, prefix: str | Path, *, force: bool = False) -> list[Path]:
    """Draw the frontier and write PREFIX.png and PREFIX.svg; returns the two paths."""
    paths = check_plot_paths(prefix, force=force)
    plt = _pyplot()
    fig = draw_frontier(result)
    try:
        for path in paths:
            save_atomic(path, lambda tmp, path=path: fig.savefig(tmp, format=path.suffix[1:], bbox_inches="tight",
                                                                 dpi=120 if path.suffix == ".png" else None))
    finally:
        plt.close(fig)
    return paths


def draw_frontier(result: Frontier, inline: bool | None = None):
    """The frontier as a matplotlib figure: step line, points, knee ring and note, and each point's
    label placed by solver.report.labels (inside the axes, clear of the legend, of other labels and
    points, nearest its own point). Its annotations carry `gid` `label-<n>` (1-based) and `knee-note`.

    Up to INLINE_LABELS points carry their mix beside them, unless a mix cannot be placed by those
    rules (points close together): then, as with more points, numbers and a key beside the plot."""
    plt = _pyplot()
    from matplotlib.text import Text
    x_label, y_label, _ = result.labels
    points = result.points
    if inline is None:
        inline = len(points) <= INLINE_LABELS
    fig, ax = plt.subplots(figsize=(10, 6.5) if inline else (13, 6.5))
    xs, ys = [p.x for p in points], [p.y for p in points]
    ax.step(xs, ys, where="post", color="#9aa7b8", linewidth=1, zorder=1)
    ax.plot(xs, ys, "o", color="#1f5fa8", markersize=6, zorder=2, label="non-dominated plan")
    knee = result.knee
    if knee is not None:
        ax.plot([knee.x], [knee.y], "o", markersize=16, markerfacecolor="none", markeredgecolor="#d62728",
                markeredgewidth=2, zorder=3, label="knee")
    ax.margins(x=0.08, y=0.12)  # room for a label beside a point at the edge of the data
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    if "share" in x_label:
        ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:.0%}")
    for label, axis in ((x_label, ax.xaxis), (y_label, ax.yaxis)):
        if is_money(label):
            axis.set_major_formatter(lambda v, _pos: f"{v:,.0f}")
    ax.set_title(f"{result.problem}: {y_label} vs {x_label} ({len(points)} non-dominated "
                 f"of {result.requested} requested)", fontsize=11)
    ax.grid(True, alpha=0.3)
    legend = ax.legend(loc="best", fontsize=8)
    if not inline:  # many points: numbers on the plot, their mixes in a key beside it
        fig.subplots_adjust(right=0.62)
        key = "\n".join(f"{i:>2}: {mix_label(p.plan, most=2)}{'  <- knee' if p.knee else ''}"
                        for i, p in enumerate(points, 1))
        fig.text(0.64, 0.5, "plan mix (peak nodes × GPUs per node)\n\n" + key, fontsize=7,
                 family="monospace", va="center", ha="left")
    else:
        fig.tight_layout()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = legend.get_window_extent(renderer)      # pin the legend where "best" put it, then keep labels off it
    legend.set_loc(tuple(ax.transAxes.inverted().transform((frame.x0, frame.y0))))
    texts = [ax.annotate(f"{i}: {mix_label(p.plan, most=2)}" if inline else str(i), (p.x, p.y),
                         textcoords="offset points", xytext=(0, 0), ha="left", va="bottom",
                         fontsize=7 if inline else 8, color="#333333", gid=f"label-{i}")
             for i, p in enumerate(points, 1)]
    scale = fig.dpi / 72                               # display pixels per point
    centres = [tuple(ax.transData.transform((p.x, p.y))) for p in points]
    inner = ax.get_window_extent(renderer)
    area = Box(inner.x0 + 2, inner.y0 + 2, inner.x1 - 2, inner.y1 - 2)
    sizes = [(Text.get_window_extent(t, renderer).width, Text.get_window_extent(t, renderer).height)
             for t in texts]
    legend_box = Box(frame.x0, frame.y0, frame.x1, frame.y1)
    broken: list[int] = []
    boxes = place_labels(centres, sizes, area, gap=6 * scale, marker=4 * scale, avoid=[legend_box],
                         gaps=[(12 if p.knee else 6) * scale for p in points], faults=broken)
    if inline and any(broken):  # a mix would cross an axis, a neighbour or sit nearer another point
        plt.close(fig)
        return draw_frontier(result, inline=False)
    for text, box, (cx, cy) in zip(texts, boxes, centres):
        text.set_position(((box.x0 - cx) / scale, (box.y0 - cy) / scale))
    if knee is not None:
        number = next(i for i, p in enumerate(points) if p is knee)
        note = ax.annotate(f"knee: {_fmt(x_label, knee.x)}, {_fmt(y_label, knee.y)}", (knee.x, knee.y),
                           textcoords="offset points", xytext=(0, 0), ha="left", va="bottom", color="#d62728",
                           fontsize=9, gid="knee-note", arrowprops={"arrowstyle": "->", "color": "#d62728"})
        extent = Text.get_window_extent(note, renderer)  # the text alone: its arrow is drawn to the point
        others = [c for i, c in enumerate(centres) if i != number]
        (box,) = place_labels([centres[number]], [(extent.width, extent.height)], area, gap=28 * scale,
                              marker=4 * scale, avoid=[legend_box, *boxes], bystanders=others)
        note.set_position(((box.x0 - centres[number][0]) / scale, (box.y0 - centres[number][1]) / scale))
    return fig
