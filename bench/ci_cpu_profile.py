"""CPU time of each test (the pytest process and the children it waited for: nvcc, g++, servers).

On the shared 2-core VM wall time says more about the neighbours than about a test; user + sys
time of the test and its children does not. A pytest plugin; with `-n 0`:

    PYTHONPATH=server:bench CI_CPU_PROFILE=out.tsv python -m pytest -p ci_cpu_profile -n 0 tests/...

appends one line per test to out.tsv: node id, own CPU s, children's CPU s, wall s. A child that
outlives its test (or is never waited for) is not counted.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Generator

import pytest


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    own, children = _cpu()
    started = time.monotonic()
    yield
    own_after, children_after = _cpu()
    out = os.environ.get("CI_CPU_PROFILE")
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write(f"{item.nodeid}\t{own_after - own:.2f}\t{children_after - children:.2f}\t"
                    f"{time.monotonic() - started:.2f}\n")
