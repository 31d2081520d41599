"""Paths every suite shares, and the `slow` tiers.

pytest runs with --import-mode=importlib, which does not put test folders on sys.path; helpers
shared across suites live in tests/support/ and are imported by name, so that folder is added here.

The tiers that take seconds a test are marked `slow` (`pytest --durations` on the 2-core VM): the
files in SLOW_TIERS (a language server or a CLI started per test, tools run to their time limit,
whole searches) and every test marked `nvcc` (real compiles) or `model` (the real GGUF). So
`pytest -m "not slow"` is the quick pass; CI (scripts/test.sh) runs every tier.

The slow tests run first (in collection order; the rest after them, in theirs): with
`--dist loadgroup` each worker takes the next test when it is nearly idle, so the quick tests
fill the end of the run on both workers instead of one worker finishing a minutes-long compile
while the other waits. Modules with module-scoped fixtures are slow as a whole and stay together.
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
    "unit/search/test_ablation_replay.py",
    "unit/search/test_ablation_run.py",
    "unit/server/test_startup_imports.py",
)
SLOW_MARKERS = ("nvcc", "model")


@pytest.hookimpl(tryfirst=True)  # before `-m` selects on the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        relative = item.path.resolve().relative_to(TESTS).as_posix()
        if relative.startswith(SLOW_TIERS) or any(item.get_closest_marker(name) for name in SLOW_MARKERS):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: slow first (`-m` keeps the order)
