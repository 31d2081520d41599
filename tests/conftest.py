"""Paths every suite shares, and the `slow` tiers.

pytest runs with --import-mode=importlib, which does not put test folders on sys.path; helpers
shared across suites live in tests/support/ and are imported by name, so that folder is added here.

The tiers listed in SLOW_TIERS take seconds a test (a language server or a CLI started per test,
tools run to their time limit, real nvcc compiles, the real model; `pytest --durations` on the
2-core VM): they are marked `slow`, so `pytest -m "not slow"` is the quick pass. CI
(scripts/test.sh) runs every tier.
"""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "support"))

SLOW_TIERS = (
    "e2e/",
    "gpu/",
    "hostile/test_cli_faults.py",
    "hostile/test_jsonrpc_errors.py",
    "hostile/test_model_worker.py",
    "hostile/test_scale.py",
    "hostile/test_spec_in_editor.py",
    "hostile/test_subprocesses.py",
    "unit/server/test_startup_imports.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        relative = item.path.resolve().relative_to(TESTS).as_posix()
        if relative.startswith(SLOW_TIERS):
            item.add_marker(pytest.mark.slow)
