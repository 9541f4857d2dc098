"""Reading catalogs (CSV folders) and problems (YAML) into validated models, and checking a problem's
names against its catalog.

Every failure becomes one ProblemError naming the file, the key (row and column for
CSV) and what is allowed, so the CLI can print it without a traceback. The readers themselves (text,
YAML, a CSV table, a pydantic error in words) are solver.ingest.readers, which the importers share.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from solver.errors import ProblemError
from solver.files import finish_interrupted
from solver.ingest.readers import TABLES, from_validation, read_table, read_yaml
from solver.model.catalog import Catalog, inconsistencies, priced_in
from solver.model.keys import one_of
from solver.model.problem import Problem


def load_catalog(folder: str | Path) -> Catalog:
    """Load and cross-check the three tables of a catalog folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ProblemError("catalog folder not found", file=str(folder),
                           fix="point `catalog:` at a folder holding gpus.csv, datacenters.csv, offers.csv")
    finish_interrupted(folder)   # an import a kill cut short between its tables is completed first
    tables = {name: read_table(folder / name, model, key) for name, (model, key) in TABLES.items()}
    found = inconsistencies(Catalog.model_construct(gpus=tables["gpus.csv"], datacenters=tables["datacenters.csv"],
                                                    offers=tables["offers.csv"]))
    if found:
        offer, column, message, fix = found[0]
        raise ProblemError(message, file=str(folder / "offers.csv"), key=f"offer {offer}.{column}", fix=fix)
    return Catalog(gpus=tables["gpus.csv"], datacenters=tables["datacenters.csv"],
                   offers=tables["offers.csv"], path=str(folder))



def load_problem(path: str | Path) -> tuple[Problem, Catalog]:
    """Load a problem YAML and the catalog it points at (relative to the problem file)."""
    path = Path(path)
    data = read_yaml(path, "problem file")
    if not isinstance(data, dict):
        raise ProblemError("expected a mapping of keys (name, catalog, horizon_days, jobs, ...)",
                           file=str(path), fix="see problems/*.yaml for examples")
    try:
        problem = Problem.model_validate(data)
    except ValidationError as exc:
        raise from_validation(exc, str(path)) from None
    try:  # a name the file system refuses (too long, a NUL) is a bad value, not a crash
        catalog_dir = (path.parent / problem.catalog).resolve()
        found = catalog_dir.is_dir()
    except (OSError, ValueError) as exc:
        name = problem.catalog if len(problem.catalog) <= 60 else problem.catalog[:60] + "…"
        raise ProblemError(f"catalog folder {name!r} cannot be opened: "
                           f"{getattr(exc, 'strerror', None) or exc}",
                           file=str(path), key="catalog", fix="give the folder relative to the problem file") from None
    if not found:
        raise ProblemError(f"catalog folder {problem.catalog!r} not found (looked in {catalog_dir})",
                           file=str(path), key="catalog", fix="give the folder relative to the problem file")
    catalog = load_catalog(catalog_dir)
    check_problem_against_catalog(problem, catalog, str(path))
    return problem, catalog



def _check_preference(pref, catalog: Catalog, file: str, where: str) -> None:
    """A preference's site, vendor and GPU must exist in the catalog, or it could never be honoured."""
    known = {"site": set(catalog.datacenters), "vendor": {o.vendor for o in catalog.offers.values()},
             "gpu": set(catalog.gpus)}
    for field, names in known.items():
        name = getattr(pref, field)
        if name is not None and name not in names:
            what = "datacenter" if field == "site" else field
            raise ProblemError(f"unknown {what} {name!r}", file=file, key=f"{where}.{field}",
                               fix=one_of(names, name))


def check_problem_against_catalog(problem: Problem, catalog: Catalog, file: str) -> None:
    """Names in allow-lists, residency tags and data/prefer sites must exist in the catalog, or
    nothing could match; a dataset's egress price must be given or follow from its site's offers."""
    restricts = [("restrict", problem.restrict)] + [
        (f"jobs[{i}].restrict", job.restrict) for i, job in enumerate(problem.jobs)]
    known = {"gpus": set(catalog.gpus), "datacenters": set(catalog.datacenters),
             "vendors": {o.vendor for o in catalog.offers.values()}, "offers": set(catalog.offers)}
    for where, restrict in restricts:
        if restrict is None:
            continue
        for field, names in known.items():
            for k, name in enumerate(getattr(restrict, field)):
                if name not in names:
                    raise ProblemError(f"unknown {field[:-1]} {name!r}", file=file, key=f"{where}.{field}[{k}]",
                                       fix=one_of(names, name))
    for i, job in enumerate(problem.jobs):
        if job.data is not None and job.data.site not in catalog.datacenters:
            raise ProblemError(f"unknown datacenter {job.data.site!r}", file=file, key=f"jobs[{i}].data.site",
                               fix=one_of(catalog.datacenters, job.data.site))
        for k, pref in enumerate(job.preferences):
            _check_preference(pref, catalog, file, f"jobs[{i}].prefer" + (f"[{k}]" if isinstance(job.prefer, list)
                                                                          else ""))
    for k, pref in enumerate(problem.prefer):
        _check_preference(pref, catalog, file, f"prefer[{k}]")
    for i, job in enumerate(problem.jobs):
        if job.data is not None and job.data.egress_per_tb is None:
            prices = {(o.egress_per_tb, o.currency) for o in catalog.offers.values() if o.datacenter == job.data.site}
            if len(prices) != 1:
                why = "no offer there prices egress" if not prices else "its vendors price egress differently"
                raise ProblemError(f"the egress price of the dataset at {job.data.site} is unclear: {why}",
                                   file=file, key=f"jobs[{i}].data.egress_per_tb",
                                   fix=f"give data.egress_per_tb ({problem.currency} per TB moved out)")
    priced_in(catalog, problem.currency, problem.rates(), file=file)  # a currency without a rate: exit 2 here
    tags = {t for dc in catalog.datacenters.values() for t in dc.residency}
    for i, job in enumerate(problem.jobs):
        if job.residency and job.residency not in tags:
            raise ProblemError(f"no datacenter carries residency tag {job.residency!r}", file=file,
                               key=f"jobs[{i}].residency", fix=one_of(tags, job.residency))
