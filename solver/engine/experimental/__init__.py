"""The solve engine's experimental methods: kept for measuring again, off the default path.

Nothing on the default solve path imports this package: each method is loaded only where
`GPUPLAN_EXPERIMENTAL` (solver.engine.switches) or its keyword turns it on, inside the
function that runs it (solver.engine.run, solver.engine.big). Its modules may import the
rest of solver.engine and solver.milp; no other module of solver/ imports them at load time.
"""
