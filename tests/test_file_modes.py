"""Files written through a temporary file get the mode open() would give (0666 less the umask).

A user's report: under umask 022 `catalog import`'s offers.csv, `catalog template`'s
quotes.xlsx and `solve --xlsx`'s plan were 0600 (tempfile.mkstemp's mode, kept by the
rename), so nobody else could read a catalog shared on a team's server; CSV and HTML
outputs were 0644.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pandas as pd
import pytest

from solver.load import load_catalog
from solver.ingest.quote_template import write_template
from solver.ingest.quotes import import_quotes
from solver.report.tables import write_xlsx
from tests.builders import ROOT

SAMPLE = ROOT / "catalogs" / "beijing-sample"


@pytest.fixture(params=[0o022, 0o077], ids=["umask-022", "umask-077"])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_written_file_follows_the_umask(umask, tmp_path):
    want = 0o666 & ~umask
    assert mode(write_xlsx({"t": pd.DataFrame({"a": [1]})}, tmp_path / "plan.xlsx", currency="CNY")) == want
    sheet = write_template(tmp_path / "quotes.xlsx", load_catalog(SAMPLE))
    assert mode(sheet) == want
    assert mode(write_template(tmp_path / "quotes.csv")) == want
    folder = tmp_path / "mine"
    folder.mkdir()
    for name in ("gpus.csv", "datacenters.csv"):
        shutil.copy(SAMPLE / name, folder / name)
    import_quotes(sheet, folder)                 # the template's example row is a valid offer
    assert mode(folder / "offers.csv") == want
