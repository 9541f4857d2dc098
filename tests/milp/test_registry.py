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
import typing
from pathlib import Path

import pytest
from ortools.linear_solver.python import model_builder as mb

from solver.analysis import explain, why
from solver.api import build
from solver.load import load_problem
from solver.milp import registry
from solver.milp.core import RowKey
from solver.milp.elastic import power_sites, power_slack
from solver.milp.exclusion import CODES as EXCLUSION_CODES, Exclusion
from solver.milp.vendors import add_vendor_count, vendor_nodes
from solver.model.plan import Binding
from tests.builders import ROOT, catalog, datacenter, gpu_day_flops, job, offer, problem

BUNDLED = sorted(glob.glob(str(ROOT / "problems" / "*.yaml")))


@pytest.mark.parametrize("fam", registry.FAMILIES, ids=lambda f: f.name)
def test_every_family_has_every_part(fam):
    assert registry.missing_parts(fam) == []


@pytest.mark.parametrize("part", ["slack", "binding", "lever", "lost", "verify", "relax", "rows"])
def test_a_family_lacking_a_part_is_caught(part):
    broken = dataclasses.replace(registry.POWER, **{part: None})
    assert registry.missing_parts(broken) == [f"power.{part}"]


def test_a_part_of_a_part_and_a_reasonless_not_applicable_are_caught():
    relax = dataclasses.replace(registry.POWER.relax, words=None, over=registry.NotApplicable(" "))
    assert registry.missing_parts(dataclasses.replace(registry.POWER, relax=relax)) == [
        "power.relax.words", "power.relax.over (NotApplicable without a reason)"]
    assert registry.missing_parts(dataclasses.replace(registry.BUDGET, rows=registry.Rows(registry.add_budget, ()))) \
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
    """explain has the strategy each family names, why the code, Binding the kind."""
    kinds = set(typing.get_args(Binding.model_fields["kind"].annotation))
    for fam in registry.FAMILIES:
        if not isinstance(fam.relax, registry.NotApplicable):
            assert fam.relax.how in explain.STRATEGIES, fam.name
        if not isinstance(fam.lost, registry.NotApplicable):
            assert fam.lost.code in why.CODES, fam.name
        if not isinstance(fam.binding, registry.NotApplicable):
            assert fam.name in kinds, fam.name
    assert set(why._EXCLUDED_CODE) == set(EXCLUSION_CODES) - {"restrict"}
    assert set(why._EXCLUDED_CODE.values()) <= set(why.CODES)


def test_verifier_checks_live_in_the_verifier():
    """The registry points at solver.verify; the verifier imports no MILP code."""
    for fam in registry.FAMILIES:
        assert fam.verify.__module__ == "solver.verify", fam.name
    source = (ROOT / "solver" / "verify.py").read_text(encoding="utf-8")
    imports = [line for line in source.splitlines() if line.lstrip().startswith(("from ", "import "))]
    assert not [line for line in imports if "solver.milp" in line or "solver.analysis" in line]


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
    """A new family's rows (say "at most 2 vendors per job") added without registering it fail."""
    _, milp = _small(budget=1e9)
    assert registry.unregistered_rows(milp) == [] and registry.unkeyed_rows(milp) == []
    var = next(iter(milp.nodes.values()))
    milp.add_row("VendorsPerJob-j", var <= 1)
    assert registry.unregistered_rows(milp) == ["VendorsPerJob-j"]
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


def test_binding_limits_ask_every_family_in_order():
    order = [f.name for f in registry.FAMILIES if not isinstance(f.binding, registry.NotApplicable)]
    assert order == ["budget", "power", "availability", "deadline"]


def test_exclusion_renders_as_the_old_strings():
    assert str(Exclusion("memory", "o:ib_hdr", "the model does not fit on 8 × G80")) == \
        "o:ib_hdr: memory: the model does not fit on 8 × G80"
    spot = Exclusion("spot", "s:roce", "spot capacity can be reclaimed; the job is not interruptible")
    assert spot.text == spot.detail and spot.kind == spot.detail
    assert Exclusion("capacity", "x:ib_hdr", "all of d does at most 1").kind == "capacity"
    with pytest.raises(ValueError):
        Exclusion("memroy", "o:ib", "typo")
