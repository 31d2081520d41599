"""Running the rules: `analyze(model, config)` -> sorted, deduplicated findings.

Severity overrides are applied here, after each check ran with its default severity, so
checks never look at the configuration.
"""

from __future__ import annotations

from dataclasses import replace

from regrapht.cuda.model import SourceModel
from regrapht.cuda.parse import parse_source
from regrapht.rules.registry import ALL_RULES, RuleConfig
from regrapht.rules.types import Finding

DEFAULT_CONFIG = RuleConfig()


def analyze(model: SourceModel, config: RuleConfig = DEFAULT_CONFIG) -> list[Finding]:
    """All findings of the enabled rules on `model`, sorted by position, one per (rule, span)."""
    findings: dict[tuple[object, ...], Finding] = {}
    for code, rule in ALL_RULES.items():
        if not config.is_enabled(code):
            continue
        severity = config.severity_overrides.get(code)
        for finding in rule.check(model, rule.info):
            if severity is not None and severity != finding.severity:
                finding = replace(finding, severity=severity)
            findings.setdefault((finding.rule, finding.span), finding)
    return sorted(findings.values(), key=lambda f: (f.span.start, f.span.end, f.rule))


def analyze_text(text: str, config: RuleConfig | None = None) -> list[Finding]:
    """Parse and analyze in one call (tests, the CLI)."""
    return analyze(parse_source(text), config or DEFAULT_CONFIG)
