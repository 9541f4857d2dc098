"""The constraint families a user can relax, one module each: its rows, their bound on a
built model and its `FAMILY` (solver.milp.family.Family) with every part.

solver.milp.registry finds every module here and collects their FAMILY into FAMILIES, and
solver.milp.build adds their rows at the stage each names (Rows.built): a new family is its
module here, its test and the verifier's check of the same rule (docs/ARCHITECTURE.md,
"Add a constraint family"). A module here imports the MILP's core and readers (core,
capacity, work, elastic, binding), the models and solver.verify, never the registry or build.
"""
