"""Settings every HiGHS solve shares: the MILP (solver.engine.backends) and the LP child (solver.engine.relaxation)."""

HIGHS_PRESOLVE_RULES_OFF = 512 | 4096
"""HiGHS presolve's doubleton-equation rule (bit 9, 512) and its aggregator (bit 12, 4096)
are off in every HiGHS solve.

Why: the HiGHS 1.12 inside OR-Tools 9.15 gave three wrong answers in helpers' differential
tests of random tiny instances against SCIP, CP-SAT and brute force (2026-12-03, 11,290
and 12,843 instances), none a tolerance corner (each stays wrong well away from an exact
multiple of the work):
- a feasible problem called proven infeasible (two jobs on one monthly offer of 4-GPU
  nodes; SCIP and CP-SAT: 19,200 CNY), and a 60,384 CNY plan called optimal where 60,000
  exists: right with either rule off (standalone HiGHS 1.16 is right, 1.13-1.15 are not);
- a 17,544 CNY plan called optimal where 16,512 exists (one synchronous 8B job, four
  offers): right with the aggregator off or presolve off, still wrong with only the
  doubleton rule off. The covering cuts (solver.milp.cover) happen to hide it. Standalone
  HiGHS 1.16.0 (highspy) is right on it with its default presolve (its model written by
  --export-mps, checked 2026-12-03), so an OR-Tools that ships HiGHS 1.16 could turn both
  rules back on once the three cases pass without them.
Cost, HiGHS median of three random seeds (debug-then-train, hybrid-burst, seed-13b-100b):
doubleton rule off 6.1, 1.1, 1.4 s; both off 8.3, 1.2, 2.8 s. The target synthetic
instance did better with both off (60 s, seed 1: 2,564,450 CNY at 11.99% against
2,755,072 at 18.08%; medium reached 1% in 10.2 s against 9.0).
Tests: tests/milp/test_backend_agreement.py."""

HIGHS_PSCOST_MIN_RELIABLE = 2
"""HiGHS' `mip_pscost_minreliable` (default 8) in every MIP solve: a variable's pseudocost
counts as reliable after 2 branchings, so fewer candidates are strong-branched.

Why: once the volume discount is written with the nodes at full price
(solver.milp.capacity), debug-then-train's time goes into branching on the domain
choices and the hourly discounts, and strong branching took 57% of its LP iterations.
Measured 2026-12-04, HiGHS random seeds 0-7, seconds to the proven optimum, median
(mean), default against 2: debug-then-train 2.38 (2.47) → 2.18 (2.08); seed-13b-100b 1.05
(0.95) → 1.03 (0.93); hybrid-burst 1.02 (1.01) → 1.00 (0.99); medium synthetic seeds
1-3 to 1%: 11.4, 6.7, 6.4 s either way. Tried before the reformulation and not kept,
when the discount's LP gap swamped it (tests/bench/HISTORY.md)."""
