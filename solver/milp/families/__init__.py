"""The constraint families a user can relax, one module each: its rows, their bound on a
built model and its `FAMILY` (solver.milp.family.Family) with every part — slack, binding
reader, relaxation and its words, why's lever, negotiate's deal, report words, verifier check.

solver.milp.registry finds every module here and collects their FAMILY into FAMILIES, and
solver.milp.build adds their rows at the stage each names (Rows.built): a new family is its
module here, its test and its words' Chinese in the .po (docs/ARCHITECTURE.md, "Add a
constraint family"). A module here imports the MILP's core and readers (core, capacity,
work, elastic, binding, solution) and the models, never the registry, build or the verifier
(which calls the family's check: `Family.verify`, a function of the verifier's readings).
"""
