"""Search for faster kernels: MCGS over the reasoning graph, baselines, deterministic appliers,
model rewriting and the optimize pipeline (`optimize`).

The names below load on first use (PEP 562), so importing a light submodule such as
`regrapht.search.options` does not import the engine, the reasoning graph and networkx.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "STRATEGIES": "regrapht.search.options",
    "SearchOptions": "regrapht.search.options",
    "BestVersion": "regrapht.search.pipeline",
    "KernelTarget": "regrapht.search.request",
    "OptimizeResult": "regrapht.search.pipeline",
    "SearchHooks": "regrapht.search.run",
    "SearchTools": "regrapht.search.run",
    "optimize": "regrapht.search.pipeline",
    "OptimizeRequest": "regrapht.search.request",
    "Progress": "regrapht.search.run",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'regrapht.search' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
