"""Analyses: questions answered by solving the problem again, changed, through solver.api.

baselines (the spreadsheet ways: one offer, one rental mode), whatif and sweep (edited
problems, by the edit language of edits), frontier and min_time (ε-constraint solves on
one re-bounded model, solver.session), negotiate (what each offer's price may rise or fall
to), why (each job's runners-up and the binding limits' worth) and explain (the smallest
relaxations that make an infeasible problem feasible). They reach the MILP only through
solver.api (and the api layer's solver.session and solver.limits), never the MILP package itself.
"""
