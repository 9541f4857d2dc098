"""The sample catalog ships with the package: `gpuplan estimate` and `gpuplan catalog show` work from
a non-editable install (a wheel, `pip install --target`), not only from a checkout.

catalogs/ stays at the top of the repo (docs/ARCHITECTURE.md, module map); pyproject maps it to
solver/catalogs/ in the wheel, and solver.commands.common.sample_catalog() looks in the source tree,
then there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from tests.builders import HANG_SECONDS, ROOT



def packages_on_disk() -> set[str]:
    """Every folder of solver/ holding Python code, as a dotted package name."""
    found = set()
    for path in (ROOT / "solver").rglob("*.py"):
        if "__pycache__" not in path.parts:
            found.add(".".join(path.parent.relative_to(ROOT).parts))
    return found


def test_pyproject_lists_every_package_and_maps_the_catalog():
    """The package list is explicit (the catalog mapping needs it): a new subpackage must be added."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert set(config["packages"]) == packages_on_disk() | {"solver.catalogs"}
    assert config["package-dir"] == {"solver.catalogs": "catalogs"}
    data = config["package-data"]["solver.catalogs"]
    for name in ("gpus.csv", "datacenters.csv", "offers.csv"):
        assert any(Path(f"beijing-sample/{name}").match(pattern) for pattern in data), name


def test_the_checkout_uses_its_own_catalogs_folder():
    from solver.commands.common import SAMPLE_CATALOG
    assert SAMPLE_CATALOG == ROOT / "catalogs" / "beijing-sample"


def run_installed(site: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m solver.cli ARGS` with `site` first on the path, from a folder outside the checkout."""
    env = {**os.environ, "PYTHONPATH": str(site), "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "solver.cli", *args], capture_output=True, text=True,
                          timeout=HANG_SECONDS, cwd=site.parent, env=env)


def check_installed(site: Path) -> None:
    where = subprocess.run([sys.executable, "-c", "import solver.commands.common as c; print(c.SAMPLE_CATALOG)"],
                           capture_output=True, text=True, cwd=site.parent,
                           env={**os.environ, "PYTHONPATH": str(site)})
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()) == site / "solver" / "catalogs" / "beijing-sample"
    show = run_installed(site, "catalog", "show", "--table", "gpus")
    assert show.returncode == 0, show.stderr
    assert "A100-80G" in show.stdout and str(site / "solver" / "catalogs") in show.stdout
    estimate = run_installed(site, "estimate", "--params", "7e9", "--tokens", "2e11", "--json")
    assert estimate.returncode == 0, estimate.stderr
    assert json.loads(estimate.stdout)["gpu"] == "A100-80G"
    chinese = subprocess.run([sys.executable, "-c", "from solver.i18n import _, language, LOCALE_DIR\n"
                              "with language('zh-CN'): print(_('Cost breakdown'), LOCALE_DIR)"],
                             capture_output=True, text=True, cwd=site.parent, env={**os.environ, "PYTHONPATH": str(site)})
    assert chinese.returncode == 0, chinese.stderr                      # the compiled catalog ships in the wheel
    assert chinese.stdout.split() == ["费用构成", str(site / "solver" / "locale")]


def test_an_installed_layout_finds_the_catalog_inside_the_package(tmp_path):
    """What a wheel installs, laid out by hand (fast): solver/ with the catalog in solver/catalogs/."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "solver", site / "solver", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "catalogs" / "beijing-sample", site / "solver" / "catalogs" / "beijing-sample")
    check_installed(site)


def test_a_built_wheel_installed_with_target_finds_its_catalog(tmp_path):
    """The real thing: build the wheel from a copy of the source (the build leaves build/ and
    *.egg-info behind) and `pip install --target` it, as the review did."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in ("solver", "catalogs"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    built = subprocess.run([*pip, "wheel", "--no-deps", "-w", str(tmp_path / "dist"), str(src)],
                           capture_output=True, text=True, timeout=HANG_SECONDS)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("gpuplan-*.whl"))
    site = tmp_path / "target"
    installed = subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
                               capture_output=True, text=True, timeout=HANG_SECONDS)
    assert installed.returncode == 0, installed.stderr
    assert (site / "solver" / "catalogs" / "beijing-sample" / "offers.csv").is_file()
    assert not (site / "catalogs").exists()          # nothing outside the package
    check_installed(site)
