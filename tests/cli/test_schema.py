"""`gpuplan schema problem|catalog`: the generated JSON Schemas accept every bundled problem and catalog.

Problems are read as an editor's YAML language server reads them (YAML 1.2: `7e9` is a
number; PyYAML's YAML 1.1 would give the string "7e9", which pydantic coerces but a JSON
Schema validator would not).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from solver.commands.schema import catalog_schema, problem_schema
from solver.load import load_catalog
from tests.builders import HANG_SECONDS, ROOT

PROBLEMS = sorted(p for p in [*(ROOT / "problems").rglob("*.yaml"), *(ROOT / "tests" / "data").glob("*.yaml")]
                  if "jobs" in (yaml.safe_load(p.read_text()) or {}))
CATALOGS = sorted(p.parent for p in (ROOT / "catalogs").rglob("gpus.csv"))
REJECTED = ["horizon-zero.yaml", "tokens-negative.yaml", "tokens-not-a-number.yaml", "unknown-job-key.yaml",
            "unknown-top-key.yaml"]   # bad fixtures whose defect a schema can see (not cross-file checks)


class Yaml12Loader(yaml.SafeLoader):
    """SafeLoader that also reads YAML 1.2 floats without a dot (7e9, 100e9), as editors do."""


Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def load12(path: Path):
    return yaml.load(path.read_text(encoding="utf-8"), Loader=Yaml12Loader)


def catalog_document(folder: Path) -> dict:
    cat = load_catalog(folder)
    return {name: [row.model_dump(mode="json", by_alias=True) for row in getattr(cat, name).values()]
            for name in ("gpus", "datacenters", "offers")}


def test_bundled_files_are_found():
    names = {p.name for p in PROBLEMS}
    assert {"seed-7b-200b-30d.yaml", "debug-then-train.yaml", "shunyi-racks-short.yaml"} <= names
    assert "hybrid-burst-grid.yaml" not in names          # a sweep grid, not a problem
    assert CATALOGS


@pytest.mark.parametrize("path", PROBLEMS, ids=lambda p: p.name)
def test_problem_schema_validates_bundled_problem(path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = problem_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(load12(path))


@pytest.mark.parametrize("folder", CATALOGS, ids=lambda p: p.name)
def test_catalog_schema_validates_bundled_catalog(folder):
    jsonschema = pytest.importorskip("jsonschema")
    schema = catalog_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(catalog_document(folder))


@pytest.mark.parametrize("name", REJECTED)
def test_problem_schema_rejects_bad_fixture(name):
    jsonschema = pytest.importorskip("jsonschema")
    errors = list(jsonschema.Draft202012Validator(problem_schema()).iter_errors(load12(ROOT / "tests/data/bad" / name)))
    assert errors, name


def _keys_known(data, schema: dict, defs: dict, where: str) -> list[str]:
    """Keys of `data` that the schema does not declare (a structural check needing no validator)."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    for option in schema.get("anyOf", []):
        resolved = defs[option["$ref"].rsplit("/", 1)[1]] if "$ref" in option else option
        if isinstance(data, dict) and resolved.get("type") == "object" or \
                isinstance(data, list) and resolved.get("type") == "array":
            schema = resolved
    unknown = []
    if isinstance(data, dict):
        props = schema.get("properties", {})
        for key, value in data.items():
            if key not in props and isinstance(schema.get("additionalProperties"), dict):  # a mapping, e.g. rates
                unknown += _keys_known(value, schema["additionalProperties"], defs, f"{where}.{key}")
            elif key not in props:
                unknown.append(f"{where}.{key}")
            else:
                unknown += _keys_known(value, props[key], defs, f"{where}.{key}")
    elif isinstance(data, list) and "items" in schema:
        for i, item in enumerate(data):
            unknown += _keys_known(item, schema["items"], defs, f"{where}[{i}]")
    return unknown


def test_every_key_of_every_bundled_file_is_declared():
    """Runs without jsonschema: completion offers every key the bundled files use, and required keys are listed."""
    schema = problem_schema()
    assert set(schema["required"]) == {"name", "catalog", "horizon_days", "jobs"}
    assert schema["additionalProperties"] is False
    for path in PROBLEMS:
        assert _keys_known(load12(path), schema, schema["$defs"], path.name) == []
    cat = catalog_schema()
    assert cat["$defs"]["Gpu"]["required"] and "class" in cat["$defs"]["Gpu"]["properties"]
    for folder in CATALOGS:
        assert _keys_known(catalog_document(folder), cat, cat["$defs"], folder.name) == []


def test_cli_prints_the_schemas():
    env = {**os.environ, "COLUMNS": "200"}
    for which, expected in (("problem", problem_schema()), ("catalog", catalog_schema())):
        run = subprocess.run([sys.executable, "-m", "solver.cli", "schema", which], capture_output=True, text=True,
                             timeout=HANG_SECONDS, cwd=ROOT, env=env)
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout) == expected
