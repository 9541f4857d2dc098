"""Pydantic nouns: catalog, problem, plan. Validation only, no solving logic.

The package imports none of its modules, so that a light one (solver.model.text, which every
console uses) does not load pydantic's models at start-up: import from the module itself
(`from solver.model.catalog import Catalog`)."""
