"""Pydantic nouns: catalog, problem, plan. Validation only, no solving logic."""

from solver.model.catalog import Catalog, Datacenter, Gpu, Offer
from solver.model.problem import Job, ModelSpec, Problem, Restrict

__all__ = ["Catalog", "Datacenter", "Gpu", "Offer", "Job", "ModelSpec", "Problem", "Restrict"]
