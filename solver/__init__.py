"""gpuplan: plan which GPUs to rent, where, how many, on which contract and for how long."""

import time as _time

__version__ = "0.1.0"

STARTED = _time.perf_counter()
"""When the package was first imported: for the console script (solver.cli.main), the
process's start, before OR-Tools, pandas and the problem files are loaded."""
