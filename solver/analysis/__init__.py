"""Analyses built on the solve API: baselines now; what-if, sweeps, frontiers, negotiation later."""
