"""The optional extras' tests need: skipped where the extra is not installed, except under CI.

Ray is the `ray` extra, not `dev`: a test that needs it is skipped without it, except under CI
(.ci/run installs the project with '.[dev,ray]', and there every Ray test must run).
"""

from __future__ import annotations

import os

import pytest


def need_ray() -> None:
    """Skip the calling test when Ray is not installed; fail it instead when CI is set."""
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI is set but Ray is missing: .ci/run must install the project with '.[dev,ray]'")
        pytest.skip("Ray is not installed (pip install -e '.[dev,ray]')")
