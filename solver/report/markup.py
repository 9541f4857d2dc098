"""HTML's smallest parts for the report page: text escaped, a currency as a header says it, a table.

Everything from the problem, the catalog and the plan is user input (offer names, sources, job
names): it goes through `esc` before it is placed in the page.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from solver.i18n import money_unit


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def unit(currency: str) -> str:
    """The currency as a table header says it: `CNY`, or 元 in Chinese (escaped)."""
    return esc(money_unit(currency))


def table(headers: list[str], rows: list[list[str]], numeric: Iterable[int] = (), cls: str = "") -> str:
    """Cells are HTML already (escape before); `numeric` columns are right-aligned."""
    numeric = set(numeric)
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f'<table{f" class={chr(34)}{cls}{chr(34)}" if cls else ""}><thead><tr>{head}</tr></thead>' \
           f"<tbody>{body}</tbody></table>"

