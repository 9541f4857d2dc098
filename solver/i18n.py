"""The language of what people read: English (the default) or Simplified Chinese (`zh-CN`).

Why gettext catalogs (Babel): the words live in `solver/locale/zh_CN/LC_MESSAGES/gpuplan.po`,
where a translator reads and fixes them, and Babel extracts every `_()` of the sources, so
tests/test_i18n.py fails when a text has no translation. The compiled `.mo` beside the `.po`
ships in the wheel (pyproject's package-data) and is checked against the `.po`.

The language is chosen once per command (`choose`: `--lang`, else the problem's `lang:`,
else `GPUPLAN_LANG`, else English) and held in a context variable while the command renders
(`with language("zh-CN"):`), so the renderers call `_()` without passing it down. Only the
words change: `--json` keeps its keys and values in every language, the CSV/xlsx their values
and formulas (their headers and sheet names are words).

Money for Chinese readers: 元 (for CNY) after the amount with thousands separators, and a
headline rounded to 万元 (ten thousands); dates stay ISO (`2027-01-07`); units (GB, kW,
GPU-days) and GPU names are not translated.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

import gettext

from solver.errors import ProblemError

LANGUAGES = ("en", "zh-CN")
"""The languages a report can be written in; `en` is the default and the source text."""
DOMAIN = "gpuplan"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
ENV = "GPUPLAN_LANG"
_LOCALES = {"en": "en", "zh-CN": "zh_CN"}
_ALIASES = {"en": "en", "en-us": "en", "en-gb": "en", "en_us": "en", "en_gb": "en", "zh-cn": "zh-CN",
            "zh_cn": "zh-CN", "zh": "zh-CN", "zh-hans": "zh-CN", "zh_hans": "zh-CN"}
_ACTIVE: ContextVar[str] = ContextVar("gpuplan_language", default="en")


def check_language(value: str, *, key: str, file: str | None = None) -> str:
    """`value` as one of LANGUAGES (`zh_CN`, `zh`, `zh-Hans` mean zh-CN); else ProblemError naming `key`."""
    code = _ALIASES.get(str(value).strip().lower())
    if code is None:
        raise ProblemError(f"unknown language {value!r}", file=file, key=key,
                           fix=f"use one of {', '.join(LANGUAGES)}")
    return code


def choose(flag: str | None, problem_lang: str | None = None, env: Mapping[str, str] = os.environ) -> str:
    """The command's language: `--lang`, else the problem's `lang:`, else GPUPLAN_LANG, else English."""
    if flag:
        return check_language(flag, key="--lang")
    if problem_lang:
        return check_language(problem_lang, key="lang")
    if env.get(ENV, "").strip():
        return check_language(env[ENV], key=ENV)
    return "en"


@contextmanager
def language(code: str) -> Iterator[None]:
    """Render in `code` (one of LANGUAGES) inside the block."""
    token = _ACTIVE.set(check_language(code, key="language"))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def activate(code: str) -> None:
    """Render in `code` from now on, until the enclosing `language()` block ends (a command's run)."""
    _ACTIVE.set(check_language(code, key="language"))


def current() -> str:
    return _ACTIVE.get()


def is_zh() -> bool:
    return _ACTIVE.get() == "zh-CN"


@lru_cache(maxsize=None)
def translations(code: str) -> gettext.NullTranslations:
    """The compiled catalog of `code` (English: the source text itself). Babel is imported here, not at
    start-up: `gpuplan --help` and completion must stay light (tests/cli/test_startup.py)."""
    if code == "en":
        return gettext.NullTranslations()
    from babel.support import Translations

    found = Translations.load(str(LOCALE_DIR), [_LOCALES[code]], DOMAIN)
    if not isinstance(found, Translations):  # Babel falls back to NullTranslations silently
        raise FileNotFoundError(f"no compiled catalog {DOMAIN}.mo for {code} under {LOCALE_DIR}")
    return found


def _(message: str) -> str:
    """`message` in the active language (the catalog's msgstr; the English msgid in English)."""
    return translations(_ACTIVE.get()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """Singular or plural by `n` in the active language (Chinese has one form)."""
    return translations(_ACTIVE.get()).ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Mark a constant's text for extraction; translate it with `_()` where it is shown."""
    return message


def text_width(text: str) -> int:
    """Columns `text` takes in a table or chart label: a CJK character (or a full-width sign) two."""
    return sum(2 if ord(c) >= 0x2E80 else 1 for c in text)


# ----- numbers and money ---------------------------------------------------------------------------------
def number(value: float, decimals: int = 0) -> str:
    """`1,234,567` (thousands separators, as both languages write them)."""
    from babel.numbers import format_decimal

    return format_decimal(round(value, decimals), format=f"#,##0{'.' + '0' * decimals if decimals else ''}",
                          locale=_LOCALES[_ACTIVE.get()])


def money_unit(currency: str) -> str:
    """What an amount in `currency` is written with: `元` for CNY in Chinese, else the ISO code."""
    return "元" if is_zh() and currency == "CNY" else currency


def amount(value: float, currency: str) -> str:
    """`23,612,431 CNY`, or in Chinese `23,612,431 元`."""
    return f"{number(value)} {money_unit(currency)}"


def headline(value: float, currency: str) -> str:
    """An amount for a summary line: in Chinese rounded to 万元 (`2,361.24 万元`), else `23,612,431 CNY`."""
    if not is_zh():
        return amount(value, currency)
    unit = "万元" if currency == "CNY" else f"万 {currency}"
    return f"{number(value / 1e4, 2)} {unit}"
