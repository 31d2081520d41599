"""Running the rules: `analyze(model, config)` -> sorted, deduplicated findings.

Severity overrides are applied here, after each check ran with its default severity, so
checks never look at the configuration.

Incremental analysis: every check looks at one function (rules/checks.py). When the model
comes from a `ModelBuilder` (`SourceModel.placements`), each function's findings are computed
on its facts relative to its first line and memoised in the placement's memo, which the
builder keeps for as long as the function's text is unchanged; an edit therefore re-runs the
rules on the edited function only and translates the others' findings to their new rows.
Functions that read file-scope `__shared__` arrays are the exception: their R011 findings carry
a fix at the array's declaration, outside the function, so they are always checked in file
coordinates.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from regrapht.cuda.model import Function, PlacedFunction, SourceModel
from regrapht.cuda.parse import parse_source
from regrapht.rules.registry import ALL_RULES, Rule, RuleConfig
from regrapht.rules.types import Finding, Fix, Related, Severity
from regrapht.text import Position, Span, TextEdit

DEFAULT_CONFIG = RuleConfig()
# Memo keys in `PlacedFunction.memo` (the memo is shared with other consumers: namespaced).
_RELATIVE = "rules.relative"  # {codes: findings in rows relative to the function}
_PLACED = "rules.placed"  # {codes: (row, findings in file rows)}, the latest translation
_FILE_SHARED = "rules.file_shared"  # the function reads a file-scope __shared__ array


def analyze(model: SourceModel, config: RuleConfig = DEFAULT_CONFIG) -> list[Finding]:
    """All findings of the enabled rules on `model`, sorted by position, one per (rule, span)."""
    rules = tuple((code, rule) for code, rule in ALL_RULES.items() if config.is_enabled(code))
    placements = model.placed_functions()
    found: list[Finding] = []
    in_order = False
    if placements is None:
        found = _deduplicated(f for _, rule in rules for f in rule.check(model, rule.info))
    else:
        # One hashable name for the enabled rules, made once: it is part of every memo key.
        codes = ",".join(code for code, _ in rules)
        # Each function's findings come sorted and functions follow each other, so the whole
        # list is sorted unless functions overlap (syntax errors): then it is sorted here.
        in_order = True
        last: tuple[int, int, int, int, str] | None = None
        for placed in placements:
            findings = _placed_findings(model, placed, rules, codes)
            if findings:
                if last is not None and _position_key(findings[0]) < last:
                    in_order = False
                last = _position_key(findings[-1])
                found.extend(findings)
    overrides = config.severity_overrides
    if overrides:
        found = [_with_severity(f, overrides.get(f.rule)) for f in found]
    return found if in_order else sorted(found, key=_position_key)


def _position_key(finding: Finding) -> tuple[int, int, int, int, str]:
    # The same order as (span.start, span.end, rule), with plain ints: cheaper on every edit.
    start, end = finding.span.start, finding.span.end
    return start.line, start.character, end.line, end.character, finding.rule


def analyze_text(text: str, config: RuleConfig | None = None) -> list[Finding]:
    """Parse and analyze in one call (tests, the CLI)."""
    return analyze(parse_source(text), config or DEFAULT_CONFIG)


def _deduplicated(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (rule, span): the first one, in rule order; and one per cause: a finding
    standing where another rule of the same technique names a related location of its cause
    (an R001 access inside the row-per-thread pass R002 reports) is part of that finding."""
    unique: dict[tuple[str, Span], Finding] = {}
    for finding in findings:
        unique.setdefault((finding.rule, finding.span), finding)
    causes = {(f.technique, r.span): key for key, f in unique.items() for r in f.related}
    if not causes:
        return list(unique.values())
    for key, finding in list(unique.items()):
        cause = causes.get((finding.technique, finding.span))
        if cause is None or cause[0] == finding.rule or cause not in unique:
            continue
        # Part of another rule's cause: its own repetitions join that finding's related locations.
        del unique[key]
        owner = unique[cause]
        known = {r.span for r in owner.related} | {owner.span}
        extra = tuple(r for r in finding.related if r.span not in known)
        if extra:
            unique[cause] = replace(owner, related=owner.related + extra)
    return list(unique.values())


def _with_severity(finding: Finding, severity: Severity | None) -> Finding:
    return finding if severity is None or severity == finding.severity else replace(finding, severity=severity)


def _placed_findings(model: SourceModel, placed: PlacedFunction, rules: tuple[tuple[str, Rule], ...],
                     rule_codes: str) -> tuple[Finding, ...] | list[Finding]:
    """The findings of `rules` in one function, in file coordinates, from the memo when possible.

    Deduplicating per function is the same as over the file: findings of different functions
    never share a span (functions do not overlap)."""
    memo = placed.memo
    reads_file_shared = memo.get(_FILE_SHARED)
    if reads_file_shared is None:
        # Depends on the file's shared names, which are part of the builder's cache key.
        reads_file_shared = memo[_FILE_SHARED] = _reads_file_shared(placed.relative, model)
    if reads_file_shared:
        return sorted(_deduplicated(f for _, rule in rules for f in rule.check_function(placed.absolute, model, rule.info)),
                      key=_position_key)
    # Launch-site facts of other functions that checks may read (rules/checks.py) join the key
    # of the kernels that have launches in the file.
    codes: tuple[object, ...] = (rule_codes,)
    if placed.relative.kind == "global":
        shapes = model.block_shapes(placed.relative.name)
        if shapes:
            codes = (rule_codes, shapes)
    relative_by_codes: dict[tuple[object, ...], tuple[Finding, ...]] = memo.setdefault(_RELATIVE, {})
    relative = relative_by_codes.get(codes)
    if relative is None:
        relative = tuple(sorted(_deduplicated(
            f for _, rule in rules for f in rule.check_function(placed.relative, model, rule.info)), key=_position_key))
        relative_by_codes[codes] = relative
    if placed.row == 0 or not relative:
        return relative
    placed_by_codes: dict[tuple[object, ...], tuple[int, tuple[Finding, ...]]] = memo.setdefault(_PLACED, {})
    latest = placed_by_codes.get(codes)
    if latest is not None and latest[0] == placed.row:
        return latest[1]
    moved = tuple(_move_finding(f, placed.row) for f in relative)
    placed_by_codes[codes] = (placed.row, moved)
    return moved


def _reads_file_shared(function: Function, model: SourceModel) -> bool:
    if not model.file_shared_arrays:
        return False
    own = {s.name for s in function.shared_arrays}
    file_names = {s.name for s in model.file_shared_arrays}
    return any(a.space == "shared" and a.array not in own and a.array in file_names for a in function.accesses)


def _move_position(position: Position, rows: int) -> Position:
    return Position(position.line + rows, position.character)


def _move_span(span: Span, rows: int) -> Span:
    return Span(_move_position(span.start, rows), _move_position(span.end, rows))


def _move_finding(finding: Finding, rows: int) -> Finding:
    attributes = dict(finding.__dict__)
    attributes["span"] = _move_span(finding.span, rows)
    if finding.fixes:
        attributes["fixes"] = tuple(
            Fix(fix.title, tuple(TextEdit(_move_span(edit.span, rows), edit.new_text) for edit in fix.edits))
            for fix in finding.fixes
        )
    if finding.related:
        attributes["related"] = tuple(Related(_move_span(r.span, rows), r.message) for r in finding.related)
    if finding.scope is not None:
        attributes["scope"] = _move_span(finding.scope, rows)
    moved = object.__new__(Finding)
    # On the edit path for every finding below an inserted line: skip the frozen __init__.
    object.__setattr__(moved, "__dict__", attributes)
    return moved
