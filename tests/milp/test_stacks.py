"""A plan whose jobs need two software stacks (CUDA and CANN), or a job split across two, says so
(issue 24, item 9; solver/milp/stacks.py): porting is a cost the prices do not show."""

from __future__ import annotations

from tests.builders import catalog, datacenter, gpu, job, monthly, problem, solve

from solver.milp.stacks import stack_warnings
from solver.model.problem import Restrict


def _two_stacks():
    """Two jobs, one kept on CUDA cards, one on CANN cards: the plan needs both stacks."""
    cards = (gpu("G80", 80), gpu("N80", 80, stack="cann"))
    cat = catalog(monthly("cuda-node", 20_000), monthly("cann-node", 15_000, gpu="N80"), gpus=cards,
                  datacenters=(datacenter("D1"),))
    prob = problem(job("a", days=8, deadline_days=30, restrict=Restrict(gpus=["G80"])),
                   job("b", days=8, deadline_days=30, restrict=Restrict(gpus=["N80"])), horizon_days=30)
    return prob, cat


def test_a_plan_on_two_stacks_says_so():
    prob, cat = _two_stacks()
    plan = solve(prob, cat)
    mixed = [w for w in plan.warnings if "software stacks" in w]
    assert len(mixed) == 1 and "G80 (CUDA)" in mixed[0] and "N80 (CANN)" in mixed[0], plan.warnings


def test_a_job_on_two_stacks_is_named_and_one_stack_says_nothing():
    prob, cat = _two_stacks()
    plan = solve(prob, cat)
    split = plan.model_copy(update={"jobs": [j.model_copy(update={"gpu_types": ["G80", "N80"]}) if j.name == "a"
                                             else j for j in plan.jobs]})
    words = stack_warnings(split, cat)
    assert len(words) == 1 and words[0].startswith("job a runs on N80 (CANN) and G80 (CUDA)")
    one = plan.model_copy(update={"jobs": [j for j in plan.jobs if j.name == "a"]})
    assert stack_warnings(one, cat) == []


def _cheaper_cann(**kw):
    """One job; a CANN node a month costs 15 000, a CUDA node 20 000 (issue 36, item 2)."""
    cards = (gpu("G80", 80), gpu("N80", 80, stack="cann"), gpu("G24", 24))
    cat = catalog(monthly("cuda-node", 20_000), monthly("cann-node", 15_000, gpu="N80"), gpus=cards,
                  datacenters=(datacenter("D1"),))
    return problem(job("a", days=8, deadline_days=30, **kw.pop("job", {})), horizon_days=30, **kw), cat


def test_stacks_cuda_never_gets_an_ascend_plan():
    for prob, cat in (_cheaper_cann(stacks=["cuda"]), _cheaper_cann(job={"stacks": ["cuda"]})):
        plan = solve(prob, cat)
        assert {g for j in plan.jobs for g in j.gpu_types} == {"G80"}
        assert plan.total_cost == 20_000 and plan.stack_switch is None


def test_a_job_stating_cann_may_use_it_silently():
    plan = solve(*_cheaper_cann(job={"stacks": ["cann", "cuda"]}))
    assert plan.total_cost == 15_000 and plan.stack_switch is None


def test_a_silent_problem_on_another_stack_names_the_switch_and_its_saving():
    plan = solve(*_cheaper_cann())
    assert {g for j in plan.jobs for g in j.gpu_types} == {"N80"}
    switch = plan.stack_switch
    assert switch is not None and switch.stacks == ["cann"] and switch.usual == "cuda"
    assert switch.same_stack_cost == 20_000 and switch.saving == 5_000
    assert "CANN (N80)" in switch.text and "saves 5,000 CNY (25.0%)" in switch.text


def test_a_tie_keeps_the_usual_stack():
    cards = (gpu("G80", 80), gpu("N80", 80, stack="cann"))
    cat = catalog(monthly("cuda-node", 15_000), monthly("cann-node", 15_000, gpu="N80"), gpus=cards,
                  datacenters=(datacenter("D1"),))
    plan = solve(problem(job("a", days=8, deadline_days=30), horizon_days=30), cat)
    assert {g for j in plan.jobs for g in j.gpu_types} == {"G80"} and plan.stack_switch is None


def test_an_excluded_stack_is_a_reason():
    from solver.milp.instance import build_instance

    prob, cat = _cheaper_cann(stacks=["cuda"])
    reasons = build_instance(prob, cat).excluded["a"]
    assert any(r.code == "stack" and "N80 needs CANN" in r.text for r in reasons)


# ----- issue 47, item 3: a saving is said only from a proven comparison, else an interval or not at all ----

def _usual_stack_unproven(monkeypatch, bound: float) -> None:
    """The usual stack's own solve (solver.api's pricing of the switch, and the probe engine's)
    stops before a proof: its plan as found, its bound at `bound` (an injected stop, no clock)."""
    from solver import api
    from solver.probes import Probes

    def stopped(plan):
        return plan.model_copy(update={"status": "feasible", "lower_bound": bound,
                                       "gap": (plan.total_cost - bound) / plan.total_cost})
    real_solve = api.solve_problem

    def solve_problem(problem, *args, **kwargs):
        plan = real_solve(problem, *args, **kwargs)
        return stopped(plan) if problem.stacks == ["cuda"] else plan
    monkeypatch.setattr(api, "solve_problem", solve_problem)
    real_probe = Probes.probe

    def probe(self, *changes, **kwargs):
        answer = real_probe(self, *changes, **kwargs)
        held = kwargs.get("problem")
        if held is not None and held.stacks == ["cuda"] and answer.plan is not None:
            answer.plan, answer.status, answer.low = stopped(answer.plan), "feasible", bound
        return answer
    monkeypatch.setattr(Probes, "probe", probe)


def _switches(prob, cat):
    """The switch as solve_problem prices it and as the probe engine (the commands') does."""
    from solver.api import solve_problem
    from solver.probes import Probes
    return solve_problem(prob, cat).stack_switch, Probes(prob, cat).plan().stack_switch


def test_an_unproven_usual_stack_plan_gives_the_saving_as_an_interval(monkeypatch):
    prob, cat = _cheaper_cann()
    _usual_stack_unproven(monkeypatch, bound=18_000)      # CUDA: a plan at 20,000, none below 18,000
    for switch in _switches(prob, cat):
        assert switch is not None and switch.saving is None and switch.saving_interval == [3_000, 5_000]
        assert switch.same_stack_cost == 20_000 and switch.same_stack_bound == 18_000
        assert "saves between 3,000 and 5,000 CNY over the best CUDA plan" in switch.text
        assert "saves 5,000" not in switch.text


def test_a_usual_stack_bound_below_the_plan_proves_no_saving(monkeypatch):
    prob, cat = _cheaper_cann()
    _usual_stack_unproven(monkeypatch, bound=14_000)      # a CUDA plan below the CANN plan's 15,000 may exist
    for switch in _switches(prob, cat):
        assert switch is not None and switch.saving is None and switch.saving_interval == [-1_000, 5_000]
        assert "no saving over the best CUDA plan is proven" in switch.text
        assert " saves " not in switch.text
