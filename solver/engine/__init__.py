"""The solve engine: a built model (solver.milp) solved into a `Solution`.

Why apart from the formulation: solver.milp says what the model is (its rows, variables and
objective, and how a solved model reads as a plan); this package says how it is solved
(backends, the big-model steps, the LP child, repair, tie-break, progress). The engine
imports the formulation, never the reverse (pyproject.toml's import-linter layers), so a
constraint family never depends on a solve strategy. The methods off by default sit in
solver.engine.experimental, behind solver.engine.switches.
"""
