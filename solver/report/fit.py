"""Terminal tables that keep numbers, dates and ids whole at any width (issue 47, item 6).

Why its own widths: rich, given a table wider than the console, shrinks the widest columns and
folds their cells anywhere, so a piped plan read "2027-04-2 / 9", "DP1 / 0" and "volcano-en /
gine". Here each column is at least as wide as its longest word (a cell wraps only at spaces);
when that does not fit, pairs of columns the table names are folded into one (the second value
under the first), then ids are broken only after a '-' or '_'; only when even that cannot fit
does rich lay the table out on its own (a console narrower than any sensible table).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text


@dataclass
class Col:
    """One column: its header as shown, how it is justified, and whether its cells are ids (names
    a user copies: broken after '-' or '_' when nothing else fits, never inside a piece)."""

    header: str
    justify: str = "left"
    ident: bool = False


@dataclass
class Grid:
    """A table before its widths are chosen: columns, rows of rich markup, and the pairs of columns
    (by header) that may share one column when the table is too wide, in the order to try them."""

    title: str
    cols: list[Col]
    rows: list[list[str]] = field(default_factory=list)
    folds: list[tuple[str, str]] = field(default_factory=list)
    caption: str | None = None
    options: dict = field(default_factory=dict)


def fitted(grid: Grid, width: int) -> Table:
    """The grid as a rich Table within `width` columns, numbers, dates and ids never cut."""
    return fit_or_none(grid, width) or _table(grid, None, False)


def fit_or_none(grid: Grid, width: int) -> Table | None:
    """The grid within `width` with its folds and broken ids as needed; None when even then its
    longest numbers and id pieces do not fit side by side (the caller may split the table)."""
    for broken in (False, True):
        folded = grid
        for pair in [None, *grid.folds]:
            if pair is not None:
                folded = _fold(folded, *pair)
            widths = _widths(folded, width, broken)
            if widths is not None:
                return _table(folded, widths, broken)
    return None


def _plain(cell: str) -> str:
    return Text.from_markup(cell).plain


def _pieces(word: str) -> list[str]:
    """An id cut after each '-' or '_' (the separator stays at the end of its piece)."""
    return [p for p in re.split(r"(?<=[-_])", word) if p]


def _words(grid: Grid, k: int, broken: bool) -> list[str]:
    """The unbreakable words of column k, header included (ids in pieces when `broken`)."""
    texts = [grid.cols[k].header] + [_plain(row[k]) for row in grid.rows]
    words = [w for t in texts for w in t.split()]
    if broken and grid.cols[k].ident:
        words = [p for w in words for p in _pieces(w)]
    return words or [""]


def _overhead(grid: Grid) -> int:
    """Columns of borders and padding around the cells, as rich draws the table's defaults."""
    n = len(grid.cols)
    edges = 2 if grid.options.get("show_edge", True) else 0
    pads = 2 * n - (0 if grid.options.get("pad_edge", True) else 2)
    return edges + (n - 1) + pads


def _widths(grid: Grid, width: int, broken: bool) -> list[int] | None:
    """Each column its longest word, then widened towards its longest line as room allows (small
    gaps closed first); None when the longest words alone do not fit."""
    least = [max(map(cell_len, _words(grid, k, broken))) for k in range(len(grid.cols))]
    most = [max([least[k], *(cell_len(line) for t in [grid.cols[k].header] + [_plain(r[k]) for r in grid.rows]
                              for line in t.split("\n"))]) for k in range(len(grid.cols))]
    room = width - _overhead(grid) - sum(least)
    if room < 0:
        return None
    widths = list(least)
    gaps = sorted(range(len(least)), key=lambda k: most[k] - least[k])
    for n, k in enumerate(gaps):  # water-filling: no column widened past its fair share of what is left
        grow = min(most[k] - least[k], room // (len(gaps) - n))
        widths[k] += grow
        room -= grow
    return widths


def _fold(grid: Grid, first: str, second: str) -> Grid:
    """Column `second` folded under `first`: one column, both headers and values one above the other."""
    heads = [c.header for c in grid.cols]
    if first not in heads or second not in heads:
        return grid
    i, j = heads.index(first), heads.index(second)
    cols = [c for k, c in enumerate(grid.cols) if k != j]
    a, b = grid.cols[i], grid.cols[j]
    cols[i if i < j else i - 1] = Col(f"{a.header}\n{b.header}", a.justify, a.ident or b.ident)
    rows = [[f"{r[i]}\n{r[j]}" if k == i and r[j] else r[k] for k in range(len(r)) if k != j] for r in grid.rows]
    return Grid(grid.title, cols, rows, grid.folds, grid.caption, grid.options)


def _wrap_id(text: str, width: int) -> str:
    """Each line of an id cell filled with whole pieces up to `width` characters."""
    out = []
    for line in text.split("\n"):
        current = ""
        for word in line.split(" "):
            for n, piece in enumerate(_pieces(word) or [""]):
                glue = " " if n == 0 and current else ""
                if current and cell_len(current) + len(glue) + cell_len(piece) > width:
                    out.append(current)
                    current = piece
                else:
                    current += glue + piece
        out.append(current)
    return "\n".join(out)


def _table(grid: Grid, widths: list[int] | None, broken: bool) -> Table:
    """The rich Table itself: fixed widths when chosen (rich then wraps only at spaces); with
    `broken`, id cells and headers too long for their column pre-wrapped after '-' or '_'."""
    def cell(text: str, k: int) -> str | Text:
        if not (broken and widths and grid.cols[k].ident):
            return text
        plain = _plain(text)
        return Text(_wrap_id(plain, widths[k])) if max(map(cell_len, plain.split() or [""])) > widths[k] else text

    table = Table(title=grid.title, caption=grid.caption, **grid.options)
    for k, col in enumerate(grid.cols):
        table.add_column(cell(col.header, k), justify=col.justify, overflow="fold",
                         width=None if widths is None else widths[k])
    for row in grid.rows:
        table.add_row(*(cell(c, k) for k, c in enumerate(row)))
    return table


def keep_whole(table: Table, width: int) -> Table:
    """A table built with rich directly (the analyses' tables) given column widths within `width`
    that keep every word whole, when its longest words fit side by side; otherwise left to rich.
    Why: rich shrinks the widest columns first and folds their cells anywhere, ids included."""
    texts = []
    for column in table.columns:
        cells = [column.header, *column._cells]
        if not all(isinstance(c, (str, Text)) for c in cells):
            return table
        texts.append([c.plain if isinstance(c, Text) else _plain(c) for c in cells])
    least = [max(cell_len(w) for t in col for w in (t.split() or [""])) for col in texts]
    most = [max([least[k], *(cell_len(line) for t in col for line in t.split("\n"))]) for k, col in enumerate(texts)]
    padding = sum(table._get_padding_width(k) for k in range(len(table.columns)))
    room = width - table._extra_width - padding - sum(least)
    if room < 0 or any(c.no_wrap or c.width is not None for c in table.columns):
        return table
    widths = list(least)
    gaps = sorted(range(len(least)), key=lambda k: most[k] - least[k])
    for n, k in enumerate(gaps):
        grow = min(most[k] - least[k], room // (len(gaps) - n))
        widths[k] += grow
        room -= grow
    for column, w in zip(table.columns, widths):
        column.width = w
    return table
