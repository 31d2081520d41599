"""Performance rules over the CUDA source model.

Public API:
- `analyze(model, config=RuleConfig()) -> list[Finding]`, `analyze_text(text, config=None)`
  (engine.py): findings of the enabled rules, sorted by position, deduplicated.
- `RuleConfig(enabled: frozenset[str] | None, severity_overrides: dict[str, Severity])`
- `ALL_RULES: dict[str, Rule]` (registry.py); `Rule.check(model, info)` over a model,
  `Rule.check_function(function, model, info)` for one function; `Rule.info: RuleInfo(code, title, severity,
  technique, summary)` (`technique`: the record, regrapht/techniques.py), `RuleInfo.doc` -> "rules/R001.md" (relative to docs/).
- `Finding`, `Fix`, `Related`, `Severity` (types.py, the shared contract): a finding's `related`
  locations are the other places of its one cause; `rules/confirm.py` applies nvcc's verdicts.

A finding's `kernel` is the enclosing `__global__` function; for launch-site findings (R009)
it is the launched kernel, and host-side findings (R013) have None.

Incremental: on models from a `SourceDocument`, findings are memoised per function text and
translated when the function moves, so an edit re-checks only the edited function.

Importing `regrapht.rules.types` runs this `__init__`, and the language server does that at
start: the engine and registry (and through them the tree-sitter source model) are therefore
loaded on first use of their names here, not with the package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from regrapht.rules.types import Finding, Fix, Related, Severity

if TYPE_CHECKING:
    from regrapht.rules.engine import analyze, analyze_text
    from regrapht.rules.registry import ALL_RULES, Rule, RuleConfig, RuleInfo

__all__ = ["ALL_RULES", "Finding", "Fix", "Related", "Rule", "RuleConfig", "RuleInfo", "Severity", "analyze", "analyze_text"]

_LOADED_ON_USE = {
    "analyze": "regrapht.rules.engine", "analyze_text": "regrapht.rules.engine",
    "ALL_RULES": "regrapht.rules.registry", "Rule": "regrapht.rules.registry",
    "RuleConfig": "regrapht.rules.registry", "RuleInfo": "regrapht.rules.registry",
}


def __getattr__(name: str) -> object:
    module = _LOADED_ON_USE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
