"""The Chinese catalog is complete and compiled, and the language is chosen as documented.

Why extraction here: Babel reads every `_()`, `ngettext()` and `N_()` of the package the way
`pybabel extract` does, so a new English text without a Chinese translation fails this test
rather than shipping half-translated. A call Babel cannot see (`_()` inside an f-string, or
an f-string given to `_()`) would ship untranslated silently, so the sources are checked for
those too.
"""

from __future__ import annotations

import ast
import gettext
import re

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from solver.errors import ProblemError
from solver.i18n import LOCALE_DIR, amount, choose, headline, language, money_unit, number
from tests.builders import ROOT

PO = LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / "gpuplan.po"
MO = PO.with_suffix(".mo")
KEYWORDS = ("_", "N_", "ngettext")
FIX = ("pybabel extract -F babel.cfg -o /tmp/gpuplan.pot . && pybabel update -i /tmp/gpuplan.pot "
       "-d solver/locale -D gpuplan --no-fuzzy-matching, translate the new msgstr, then "
       "pybabel compile -d solver/locale -D gpuplan")


def _catalog():
    with PO.open("rb") as fh:
        return read_po(fh)


def _extracted(folder=ROOT / "solver") -> set[str]:
    """Every msgid (and plural) Babel finds in `folder`, as `pybabel extract -F babel.cfg` would."""
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
            str(folder), method_map=[("**.py", "python")]):
        found.update(m for m in (message if isinstance(message, tuple) else (message,)) if m)
    return found


def _untranslated(folder=ROOT / "solver") -> list[str]:
    """The texts of `folder`'s sources that the Chinese catalog has no (non-fuzzy) translation for."""
    translated = set()
    for m in _catalog():
        if not m.id or m.fuzzy:
            continue
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        if all(strings):
            translated.update(m.id if isinstance(m.id, tuple) else (m.id,))
    return sorted(_extracted(folder) - translated)


def test_every_message_of_the_sources_has_a_chinese_translation():
    assert len(_extracted()) > 150  # the extraction ran over the report modules
    missing = _untranslated()
    assert not missing, f"no Chinese translation for {missing[:10]} ({len(missing)} in all): {FIX}"


def test_the_check_fails_on_a_missing_translation(tmp_path):
    """The same check over a source with one new text and one translated one reports just the new."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text('from solver.i18n import _\nprint(_("a text nobody translated"), _("none"))\n')
    assert _untranslated(pkg) == ["a text nobody translated"]


def test_the_compiled_catalog_matches_the_po():
    """The .mo shipped in the wheel says what the .po says (recompile after editing the .po)."""
    with MO.open("rb") as fh:
        compiled = gettext.GNUTranslations(fh)._catalog  # noqa: SLF001 (the parsed messages)
    expected = {}
    for m in _catalog():
        if not m.id or m.fuzzy:
            continue
        if isinstance(m.id, tuple):
            for i, text in enumerate(m.string):
                expected[(m.id[0], i)] = text
        else:
            expected[m.id] = m.string
    got = {k: v for k, v in compiled.items() if k != ""}
    assert got == expected, f"solver/locale/zh_CN/LC_MESSAGES/gpuplan.mo is out of date: {FIX}"


def test_translations_keep_every_placeholder():
    """`{cost}` in the English must be `{cost}` in the Chinese: str.format would fail or drop a figure."""
    wrong = []
    for m in _catalog():
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        want = set(re.findall(r"\{[a-z_]*\}", ids[-1]))
        wrong += [(ids[0], s) for s in strings if set(re.findall(r"\{[a-z_]*\}", s)) != want]
    assert not wrong, wrong


def test_pybabel_compile_accepts_the_catalog():
    """Babel's own checks (what `pybabel compile` refuses): "50% of" in a msgid reads as a printf
    placeholder the Chinese lacks, so percentages go in as `{share}`."""
    problems = [(m.id, [str(e) for e in errors]) for m, errors in _catalog().check()]
    assert not problems, problems


def test_babel_sees_every_translated_call():
    """No `_()` inside an f-string and no f-string given to `_()`: Babel extracts neither."""
    hidden = []
    for path in sorted((ROOT / "solver").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.func.id not in KEYWORDS:
                continue
            if any(isinstance(a, ast.JoinedStr) for a in node.args):
                hidden.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                hidden += [f"{path.relative_to(ROOT)}:{c.lineno} (inside an f-string)" for c in ast.walk(node)
                           if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id in KEYWORDS
                           and c.args and isinstance(c.args[0], ast.Constant)]
    assert not hidden, hidden


def test_language_is_the_flag_then_the_problem_then_the_environment():
    assert choose(None, None, {}) == "en"
    assert choose(None, None, {"GPUPLAN_LANG": "zh_CN"}) == "zh-CN"
    assert choose(None, "zh-CN", {"GPUPLAN_LANG": "en"}) == "zh-CN"
    assert choose("en", "zh-CN", {"GPUPLAN_LANG": "zh-CN"}) == "en"
    with pytest.raises(ProblemError) as err:
        choose(None, None, {"GPUPLAN_LANG": "fr"})
    assert "GPUPLAN_LANG" in err.value.render() and "zh-CN" in err.value.render()


def test_money_for_chinese_readers():
    assert amount(23_612_431.4, "CNY") == "23,612,431 CNY" and headline(23_612_431.4, "CNY") == "23,612,431 CNY"
    with language("zh-CN"):
        assert amount(23_612_431.4, "CNY") == "23,612,431 元"
        assert headline(23_612_431.4, "CNY") == "2,361.24 万元"
        assert headline(1_500_000, "USD") == "150.00 万 USD"
        assert money_unit("USD") == "USD" and number(1234.5, 1) == "1,234.5"
