"""Plan days as people read them: calendar dates when the problem has a `start_date`, else day numbers.

Why one module: every table, the HTML Gantt and the spreadsheets print the same days; a range
printed two ways (half-open day numbers in one table, inclusive dates in another) is a
misread contract. Day numbers stay as they always were (`3–33`: from day 3 up to day 33,
day 33 not included); dates name the first and the last day held (`2027-01-07 – 02-05`).
"""

from __future__ import annotations

from datetime import date, timedelta

from solver.i18n import _, is_zh


def on(start: date | None, day: int) -> date | None:
    """The calendar date of a plan day (None without a start date)."""
    return None if start is None else start + timedelta(days=day)


def day_text(start: date | None, day: int) -> str:
    """`2027-02-03`, or the day number."""
    when = on(start, day)
    return str(day) if when is None else when.isoformat()


def span_text(start: date | None, first: int, end: int) -> str:
    """Days first..end-1: `3–33` (end not included), or their first and last dates,
    `2027-01-07 – 02-05` (the year written once when both fall in it)."""
    if start is None:
        return f"{first}–{end}"
    a, b = on(start, first), on(start, max(end - 1, first))
    assert a is not None and b is not None
    if is_zh():  # both dates whole (ISO), as Chinese readers expect them
        return _("{first} to {last}").format(first=a.isoformat(), last=b.isoformat())
    return f"{a.isoformat()} – {b.strftime('%m-%d') if a.year == b.year else b.isoformat()}"


def span_note(start: date | None) -> str:
    """What a range means, for a table's title."""
    if start is None:
        return _("days from the plan's start")
    return _("first and last day held; day 0 is {date}").format(date=start.isoformat())
