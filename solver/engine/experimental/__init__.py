"""The solve engine's experimental methods: kept for measuring again, off the default path.

Nothing on the default solve path imports this package: each method is loaded only where
`GPUPLAN_EXPERIMENTAL` (solver.engine.switches) or its keyword turns it on. Its modules may
import the rest of solver.engine and solver.milp; nothing outside it imports them at module
level.
"""
