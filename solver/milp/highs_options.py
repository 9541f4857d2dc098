"""Settings every HiGHS solve shares: the MILP (solver.milp.solve) and the LP child (solver.milp.relaxation)."""

HIGHS_PRESOLVE_RULES_OFF = 512
"""HiGHS presolve's doubleton-equation rule (bit 9) is off in every HiGHS solve.

Why: with it, the HiGHS 1.12 inside OR-Tools 9.15 called a feasible problem proven
infeasible (two jobs on one monthly offer of 4-GPU nodes; SCIP and CP-SAT: 19,200 CNY)
and a 60,384 CNY plan optimal where 60,000 exists: 2 of 7,000 random tiny instances in a
helper's differential test (2026-12-03), neither a tolerance corner (wrong from exactly
the GPU-days needed to 15 % under). Standalone HiGHS 1.13-1.15 are wrong too, 1.16 is
right; with this rule off (or the aggregator, 4096) 1.12 is right on both. Cost measured
with solve_problem on the bundled problems, two runs each, rule on → off: seed-13b-100b
3.0 → 2.9-3.1 s, hybrid-burst 1.6-1.8 → 2.1-2.6 s, debug-then-train 17.2-18.5 →
17.6-21.9 s (a loaded machine; aggregator off: 3.8-3.9, 3.0, 17.0-18.8 s).
Tests: tests/test_backend_agreement.py."""
