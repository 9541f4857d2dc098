"""The registry of constraint families (solver/milp/registry.py) is complete, and the models agree with it.

Why: a family added to build.py but forgotten in one consumer used to fail nothing; it was
just missing from an explanation. These tests fail when a family lacks a part, when a
built model has rows of a prefix that is neither registered nor declared structural, when
a family's rows are not kept under their keys, and when a consumer's table (explain's
strategies, why's codes, the plan's Binding kinds) does not know a family.
"""

from __future__ import annotations

import dataclasses
import glob
from pathlib import Path

import pytest
from ortools.linear_solver.python import model_builder as mb

from solver.analysis import explain, why
from solver.api import build
from solver.load import load_problem
from solver.milp import build as build_module, registry
from solver.milp.families import budget
from solver.milp.core import RowKey
from solver.milp.families.power import power_sites, power_slack
from solver.milp.exclusion import CODES as EXCLUSION_CODES, Exclusion
from solver.milp.families.vendors import add_vendor_count, vendor_nodes
from solver.model.plan import Binding
from tests.builders import ROOT, catalog, datacenter, gpu_day_flops, job, offer, problem

BUNDLED = sorted(glob.glob(str(ROOT / "problems" / "*.yaml")))


@pytest.mark.parametrize("fam", registry.FAMILIES, ids=lambda f: f.name)
def test_every_family_has_every_part(fam):
    assert registry.missing_parts(fam) == []


@pytest.mark.parametrize("fam", registry.FAMILIES, ids=lambda f: f.name)
def test_each_family_has_what_its_consumers_ask(fam):
    """The ARCHITECTURE §6 checklist, per part: what explain's strategy words and asks, what why's
    lever model and negotiate hold back at (the written limit, Relax.limit), the words a report shows."""
    assert registry.inconsistent_parts(fam, explain.PHRASES, explain.PARTS) == []


def test_a_family_missing_what_its_strategy_asks_is_caught():
    says = {k: v for k, v in registry.POWER.relax.says.items() if k != "where"}
    relax = dataclasses.replace(registry.POWER.relax, says=says, where=registry.NotApplicable("forgot"))
    broken = dataclasses.replace(registry.POWER, relax=relax,
                                 labels=dataclasses.replace(registry.POWER.labels, deal=registry.NotApplicable("x")))
    assert registry.inconsistent_parts(broken, explain.PHRASES, explain.PARTS) == [
        "power.relax.says lacks 'where' (explain's \"each\" words it)",
        "power.relax.where (explain's \"each\" asks it)",
        "power.labels.deal (negotiate's lever is shown in words)"]
    no_relax = dataclasses.replace(registry.DEADLINE, relax=registry.NotApplicable("forgot"))
    assert "deadline.relax (why's lever model holds a lever back at its written limit)" in \
        registry.inconsistent_parts(no_relax, explain.PHRASES, explain.PARTS)


def test_no_analysis_or_report_names_a_family():
    """explain, why, negotiate's levers and their reports ask the registry; none names a family."""
    import ast

    named = {"POWER", "BUDGET", "AVAILABILITY", "DEADLINE", "SPOT", "VENDORS"}
    kinds = {f.name for f in registry.FAMILIES}
    for path in ["analysis/explain.py", "analysis/why.py", "analysis/negotiate_levers.py",
                 "report/negotiate.py", "report/explain.py", "report/why.py"]:
        tree = ast.parse((ROOT / "solver" / path).read_text(encoding="utf-8"))
        assert not [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in named], path
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "family"]
        assert not [c for c in calls if c.args and isinstance(c.args[0], ast.Constant)], path
        if path != "analysis/why.py":   # why's --json codes (Alternative.code) are its own vocabulary
            assert not [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in kinds], path


@pytest.mark.parametrize("part", [f.name for f in dataclasses.fields(registry.Family)])
def test_a_family_lacking_a_part_is_caught(part):
    """Every part, the bound, labels and name (the Binding kind) included: a family built without it fails."""
    broken = dataclasses.replace(registry.POWER, **{part: None})
    assert registry.missing_parts(broken) == [f"{'?' if part == 'name' else 'power'}.{part}"]


def test_a_family_whose_bound_or_labels_lack_a_part_is_caught():
    no_setter = dataclasses.replace(registry.SPOT, bounds=dataclasses.replace(registry.SPOT.bounds, set=None))
    assert registry.missing_parts(no_setter) == ["spot.bounds.set"]
    not_callable = dataclasses.replace(registry.BUDGET, bounds=registry.Bound("Budget", budget.set_budget_bound, None))
    assert registry.missing_parts(not_callable) == ["budget.bounds.get (not callable)", "budget.bounds.written"]
    unnamed = dataclasses.replace(registry.POWER, labels=registry.Labels("", registry.NotApplicable(""), "kW", None))
    assert registry.missing_parts(unnamed) == ["power.labels.name",
                                               "power.labels.binding (NotApplicable without a reason)",
                                               "power.labels.more (not callable)", "power.labels.deal"]


def test_a_part_of_a_part_and_a_reasonless_not_applicable_are_caught():
    relax = dataclasses.replace(registry.POWER.relax, words=None, over=registry.NotApplicable(" "))
    assert registry.missing_parts(dataclasses.replace(registry.POWER, relax=relax)) == [
        "power.relax.words", "power.relax.over (NotApplicable without a reason)"]
    prefix_less = registry.Rows(budget.add_budget, (), registry.COSTS)
    assert registry.missing_parts(dataclasses.replace(registry.BUDGET, rows=prefix_less)) \
        == ["budget.rows.prefixes"]


def test_families_are_listed_once_with_distinct_names_and_prefixes():
    names = [f.name for f in registry.FAMILIES]
    prefixes = [p for f in registry.FAMILIES for p in f.rows.prefixes]
    assert len(set(names)) == len(names)
    assert len(set(prefixes)) == len(prefixes)
    assert not set(p.split("-")[0] for p in prefixes) & set(registry.STRUCTURAL)
    assert registry.family("power") is registry.POWER
    with pytest.raises(KeyError):
        registry.family("lead_time")


def test_consumers_know_every_family():
    """explain has the strategy each family names; why's codes and the Binding kinds are the families'."""
    for fam in registry.FAMILIES:
        if not isinstance(fam.relax, registry.NotApplicable):
            assert fam.relax.how in explain.STRATEGIES, fam.name
    lost = [f.lost.code for f in registry.FAMILIES if not isinstance(f.lost, registry.NotApplicable)]
    assert why.CODES == (*lost, *why.OWN_CODES)
    assert not set(lost) & set(why.OWN_CODES)
    assert [k for k in registry.BINDING_KINDS if k in _BOUND] == list(_BOUND)   # a new family may come between
    assert set(why._EXCLUDED_CODE) == set(EXCLUSION_CODES) - {"restrict"}
    assert set(why._EXCLUDED_CODE.values()) <= set(why.CODES)


def test_a_binding_of_a_kind_no_family_reads_is_refused():
    """Binding.kind is a str (solver.model sits below the family list); binding_limits checks it."""
    budget = Binding(kind="budget", name="budget", start_day=0, end_day=3, used=1, limit=1, unit="CNY", text="t")
    registry.check_kinds([budget], "budget")
    with pytest.raises(ValueError, match="'budget' read by the 'power' family"):
        registry.check_kinds([budget], "power")
    with pytest.raises(ValueError, match="vendors"):
        registry.check_kinds([budget.model_copy(update={"kind": "vendors"})], "vendors")  # no binding reader


def test_reports_word_every_kind_from_its_family():
    """The report's words for a kind are the family's labels, translated; a kind no family has stays as is."""
    from solver.i18n import language
    from solver.report.words import binding_text, limit_name

    plan_binding = Binding(kind="power", name="A", start_day=0, end_day=2, used=9.5, limit=10, unit="kW",
                           text="power at A, days 0–2: 9.5 of 10.0 kW")
    assert [limit_name(f.name) for f in registry.FAMILIES] == [f.labels.name for f in registry.FAMILIES]
    assert binding_text(plan_binding) == plan_binding.text
    with language("zh-CN"):
        for fam in registry.FAMILIES:
            assert limit_name(fam.name) not in ("", fam.name), fam.name  # every label has its translation
        assert binding_text(plan_binding) != plan_binding.text and "9.5" in binding_text(plan_binding)
        assert limit_name("combination") == "combination"
        from solver.report.explain import part_words
        part = {"amount": 2, "kind": "availability", "target": "o", "unit": "nodes"}
        assert part_words(part) == registry.AVAILABILITY.labels.more(2, "o", "nodes") and "o" in part_words(part)
    assert part_words(part) == "2 more nodes of o"
    assert part_words({**part, "kind": "deadline", "amount": 1, "horizon_days": 50}) == \
        "1 more day on every deadline (and the horizon to 50 days)"


@pytest.mark.parametrize("fam", registry.FAMILIES, ids=lambda f: f.name)
def test_every_part_is_the_familys_own(fam):
    """Every part is defined in the family's module (the module its rows come from)."""
    assert registry.foreign_parts(fam) == []


def test_a_family_pointing_at_another_familys_rule_is_caught():
    """A family built with another family's check, slack reader or relaxation fails; so does one
    whose rows are another's (then every other part is foreign to them)."""
    stolen = dataclasses.replace(registry.BUDGET, verify=registry.POWER.verify)
    assert registry.foreign_parts(stolen) == ["budget.verify (solver.milp.families.power)"]
    relax = dataclasses.replace(registry.BUDGET.relax, over=registry.POWER.relax.over)
    assert registry.foreign_parts(dataclasses.replace(registry.BUDGET, relax=relax)) == [
        "budget.relax.over (solver.milp.families.power)"]
    shared = dataclasses.replace(registry.DEADLINE, rows=registry.Rows(build_module.build_milp, ("Work",), registry.WORK))
    assert "deadline.verify (solver.milp.families.deadline)" in registry.foreign_parts(shared)


@pytest.mark.parametrize("fam", [f for f in registry.FAMILIES if not isinstance(f.verify, registry.NotApplicable)],
                         ids=lambda f: f.name)
def test_a_familys_check_reads_the_plan_not_the_model(fam):
    """The verifier stays independent: a family's check uses only the verifier's readings and the
    models, no MILP code and no OR-Tools (the names it reaches in its module's globals)."""
    check = fam.verify
    used = [check.__globals__[n] for n in check.__code__.co_names if n in check.__globals__]
    foreign = [getattr(o, "__module__", getattr(o, "__name__", "")) for o in used]
    assert not [m for m in foreign if m.startswith(("solver.milp", "ortools"))], (fam.name, foreign)


def test_the_verifier_asks_every_family_through_the_registry(monkeypatch):
    """solver.verify names no family: a family in the registry has its check run, one not there has not."""
    import solver.verify.rules as rules

    def refuse(v):
        v.fail("refused by the test family")

    plan_problem, plan_catalog, plan = _small_plan()
    from solver.verify import verify_plan
    assert verify_plan(plan_problem, plan_catalog, plan) == []
    testing = dataclasses.replace(registry.SPOT, name="refusing", verify=refuse)
    monkeypatch.setattr(registry, "FAMILIES", (*registry.FAMILIES, testing))
    assert verify_plan(plan_problem, plan_catalog, plan) == ["refused by the test family"]
    source = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "solver" / "verify").glob("*.py"))
    imports = [line for line in source.splitlines() if line.lstrip().startswith(("from ", "import "))]
    assert [line for line in imports if "solver.milp" in line or "ortools" in line] == ["from solver.milp import registry"]
    assert rules.registry is registry


def _small_plan():
    from solver.api import solve_problem
    cat = catalog(offer("a", datacenter="A", max_nodes=2, gpus_per_node=2))
    prob = problem(job("j", flops=2 * gpu_day_flops(), deadline_days=3), horizon_days=3)
    return prob, cat, solve_problem(prob, cat)


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: Path(p).stem)
def test_bundled_models_have_only_registered_or_structural_rows_all_keyed(path):
    problem_, catalog_ = load_problem(path)
    _, milp = build(problem_, catalog_)
    assert registry.unregistered_rows(milp) == []
    assert registry.unkeyed_rows(milp) == []
    assert milp.targets("deadline") == sorted(j.name for j in problem_.jobs)


def _small(**kw):
    cat = catalog(offer("a", datacenter="A", max_nodes=2, gpus_per_node=2, counts_power=True, node_kw=5),
                   offer("b", datacenter="A-1", max_nodes=2, gpus_per_node=2, counts_power=True, node_kw=5,
                         interconnect=("ib_hdr", "roce")),
                  datacenters=[datacenter("A", power_quota_kw=100), datacenter("A-1", power_quota_kw=100)])
    prob = problem(job("j", flops=2 * gpu_day_flops(), deadline_days=3), horizon_days=3, **kw)
    return build(prob, cat)


def test_a_row_of_an_unregistered_family_is_caught():
    """A new family's rows (say "at most 2 GPU types per job") added without registering it fail."""
    _, milp = _small(budget=1e9)
    assert registry.unregistered_rows(milp) == [] and registry.unkeyed_rows(milp) == []
    var = next(iter(milp.nodes.values()))
    milp.add_row("GpuTypesPerJob-j", var <= 1)
    assert registry.unregistered_rows(milp) == ["GpuTypesPerJob-j"]
    milp.add_row("Power-A-99", var <= 1)            # a registered family's name, no key
    assert registry.unkeyed_rows(milp) == ["Power-A-99"]


def test_rows_are_found_by_key_where_names_mislead():
    """Sites "A" and "A-1": `Power-A-1-0` is site A-1's row, though its name starts "Power-A-"."""
    _, milp = _small(budget=1e9)
    assert power_sites(milp) == ["A", "A-1"]
    assert set(milp.family_rows("power", "A")) == {RowKey("power", "A", t) for t in range(3)}
    s = power_slack(milp, "A")
    proto = milp.model.export_to_proto()
    stretched = sorted(c.name for c in proto.constraint if s.index in c.var_index)
    assert stretched == sorted(f"Power-A-{t}" for t in range(3))
    assert RowKey("budget") in milp.keyed


def test_vendor_count_rows_are_the_registered_family():
    _, milp = _small()
    row = add_vendor_count(milp, vendor_nodes(milp))
    assert milp.keyed[RowKey("vendors", part="count")] is row
    assert registry.family_of_row("Frontier-Vendors") is registry.VENDORS
    assert registry.unregistered_rows(milp) == [] and registry.unkeyed_rows(milp) == []
    assert isinstance(row, mb.LinearConstraint)


_BOUND = ("budget", "power", "availability", "deadline")


def test_binding_limits_ask_every_family_in_order():
    order = [f.name for f in registry.FAMILIES if not isinstance(f.binding, registry.NotApplicable)]
    assert [k for k in order if k in _BOUND] == list(_BOUND)
    assert order == sorted(order, key=lambda k: registry.family(k).order)


def test_exclusion_renders_as_the_old_strings():
    assert str(Exclusion("memory", "o:ib_hdr", "the model does not fit on 8 × G80")) == \
        "o:ib_hdr: memory: the model does not fit on 8 × G80"
    spot = Exclusion("spot", "s:roce", "spot capacity can be reclaimed; the job is not interruptible")
    assert spot.text == spot.detail and spot.kind == spot.detail
    assert Exclusion("capacity", "x:ib_hdr", "all of d does at most 1").kind == "capacity"
    with pytest.raises(ValueError):
        Exclusion("memroy", "o:ib", "typo")


def test_rows_added_by_a_bound_are_registered_and_keyed():
    """The ε rows the frontiers add (spot work, vendor count, a budget the problem lacks) are families' rows."""
    _, milp = _small()
    for fam in (registry.SPOT, registry.VENDORS, registry.BUDGET):
        fam.set_bound(milp, "", 1.0)
    assert {"Frontier-Spot", "Frontier-Vendors", "Budget"} <= set(milp.rows)
    assert registry.unregistered_rows(milp) == [] and registry.unkeyed_rows(milp) == []
    assert registry.family_of_row("Frontier-Spot") is registry.SPOT


NEW_FAMILY = '''
"""At most k vendors per job: the ARCHITECTURE checklist's example, as a module of its own."""
import math

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import RowKey
from solver.milp.family import WORK, Bound, Family, Labels, NotApplicable, Rows

MOST = 2


def add_vendors_per_job(milp):
    inst = milp.inst
    for job in inst.problem.jobs:
        flags = {}
        for (i, t), var in milp.replicas.items():
            opt = inst.options[i]
            if opt.job == job.name:
                vendor = inst.configs[opt.config].offer.vendor
                if vendor not in flags:
                    flags[vendor] = milp.model.new_bool_var(f"uses[{job.name},{vendor}]")
                milp.add_row(f"VendorsPerJob-{job.name}-{i}-{t}", var <= var.upper_bound * flags[vendor],
                             RowKey("vendors_per_job", job.name, t, part=str(i)))
        milp.add_row(f"VendorsPerJob-{job.name}", mb.LinearExpr.sum(list(flags.values())) <= MOST,
                     RowKey("vendors_per_job", job.name, part="count"))


def bound(milp, job):
    row = milp.keyed[RowKey("vendors_per_job", job, part="count")]
    return None if math.isinf(row.upper_bound) else row.upper_bound


def set_bound(milp, job, count):
    milp.keyed[RowKey("vendors_per_job", job, part="count")].upper_bound = math.inf if count is None else count


def check(v):
    used = {}
    for job, a in v.placed:
        used.setdefault(job.name, set()).add(v.cat.offers[a.offer].vendor)
    for name, vendors in sorted(used.items()):
        if len(vendors) > MOST:
            v.fail(f"vendors per job: {name} runs on {len(vendors)} vendors, at most {MOST}")


FAMILY = Family(
    name="vendors_per_job", order=45, unit="vendors", targets="job",
    rows=Rows(add_vendors_per_job, ("VendorsPerJob",), WORK),
    bounds=Bound(bound, set_bound, NotApplicable("only a count: the written rule is the verifier's")),
    labels=Labels("vendors per job", NotApplicable("a test family: no report words"),
                  NotApplicable("a test family: no report words"), NotApplicable("a test family: no report words")),
    slack=NotApplicable("a test family"), binding=NotApplicable("a test family"),
    relax=NotApplicable("a test family"), lever=NotApplicable("a test family"),
    lost=NotApplicable("a test family"), deal=NotApplicable("a test family"),
    verify=check,
)
'''


def test_a_new_family_is_its_module_alone(tmp_path, monkeypatch):
    """"At most 2 vendors per job" as one module in a families package: found, complete, built at its
    stage, its rows registered and keyed, its bound read and set — no other file names it."""
    package = tmp_path / "more_families"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "vendors_per_job.py").write_text(NEW_FAMILY)
    monkeypatch.syspath_prepend(str(tmp_path))
    (new,) = registry.discover([str(package)], "more_families")
    assert new.name == "vendors_per_job" and registry.missing_parts(new) == [] and registry.foreign_parts(new) == []
    with_new = tuple(sorted((*registry.FAMILIES, new), key=lambda f: f.order))
    monkeypatch.setattr(registry, "FAMILIES", with_new)   # what discover() returns once the module is in
    monkeypatch.setattr(build_module, "FAMILIES", with_new)  # solver/milp/families/
    _, milp = _small()
    assert "VendorsPerJob-j" in milp.rows
    assert registry.unregistered_rows(milp) == [] and registry.unkeyed_rows(milp) == []
    assert registry.family("vendors_per_job").bound(milp, "j") == 2
    new.set_bound(milp, "j", 1)
    assert new.bound(milp, "j") == 1


def test_a_module_in_the_families_package_without_a_family_is_refused(tmp_path, monkeypatch):
    package = tmp_path / "broken_families"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "half.py").write_text("def add_half(milp):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match="has no FAMILY"):
        registry.discover([str(package)], "broken_families")


def test_the_architecture_checklist_names_what_exists():
    """docs/ARCHITECTURE.md §6 ("Add a constraint family") names the checks and parts that hold it."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text[text.index("### Add a constraint family"):text.index("### Add a rental mode")]
    for name in ("missing_parts", "foreign_parts", "inconsistent_parts"):
        assert f"`{name}`" in section or f"registry.{name}" in section, name
        assert callable(getattr(registry, name))
    for part in [f.name for f in dataclasses.fields(registry.Family)]:
        if part not in ("name", "order", "unit", "targets", "rows", "bounds", "labels", "slack", "binding"):
            assert part in section.lower(), part
    assert "explain.PHRASES" in section and "explain.PARTS" in section
    assert set(explain.PHRASES) == set(explain.PARTS) == set(explain.STRATEGIES)
