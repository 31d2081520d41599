"""Performance rules over the CUDA source model.

Public API:
- `analyze(model, config=RuleConfig()) -> list[Finding]`, `analyze_text(text, config=None)`
  (engine.py): findings of the enabled rules, sorted by position, deduplicated.
- `RuleConfig(enabled: frozenset[str] | None, severity_overrides: dict[str, Severity])`
- `ALL_RULES: dict[str, Rule]` (registry.py); `Rule.check(model, info)` over a model,
  `Rule.check_function(function, model, info)` for one function; `Rule.info: RuleInfo(code, title, severity,
  technique, summary)`, `RuleInfo.doc` -> "rules/R001.md" (relative to docs/).
- `Finding`, `Fix`, `Severity` (types.py, the shared contract).

A finding's `kernel` is the enclosing `__global__` function; for launch-site findings (R009)
it is the launched kernel, and host-side findings (R013) have None.

Incremental: on models from a `SourceDocument`, findings are memoised per function text and
translated when the function moves, so an edit re-checks only the edited function.
"""

from regrapht.rules.engine import analyze, analyze_text
from regrapht.rules.registry import ALL_RULES, Rule, RuleConfig, RuleInfo
from regrapht.rules.types import Finding, Fix, Severity

__all__ = ["ALL_RULES", "Finding", "Fix", "Rule", "RuleConfig", "RuleInfo", "Severity", "analyze", "analyze_text"]
