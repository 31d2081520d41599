"""Incremental analysis: findings of an edited `SourceDocument` (memoised per function, moved
functions translated) equal the findings of a fresh parse, and only edited functions are
re-checked."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

from random_edits import random_span

from regrapht.cuda import SourceDocument, parse_source
from regrapht.rules import Finding, RuleConfig, analyze
from regrapht.text import Span, TextEdit, apply_edits

DATA = Path(__file__).resolve().parents[2] / "data" / "rules"
CONFIGS = [
    RuleConfig(),
    RuleConfig(enabled=frozenset({"R001", "R006", "R007", "R009", "R011", "R013"})),
    RuleConfig(severity_overrides={"R007": "error", "R006": "hint"}),
]
FILE_SHARED = """__shared__ float tile[32][32];
__global__ void column(float *out) {
    out[threadIdx.x] = tile[threadIdx.x][0];
}
"""


def _corpus() -> str:
    parts = [FILE_SHARED]
    for index, path in enumerate(sorted((DATA / "bad").glob("*.cu"))):
        parts.append(f"namespace p{index} {{\n{path.read_text()}\n}}\n")
    return "\n".join(parts)


def _reference(text: str, config: RuleConfig = CONFIGS[0]) -> list[Finding]:
    """Findings of a fresh parse, checked directly on file coordinates (no memo, no translation)."""
    return analyze(dataclasses.replace(parse_source(text), placements=()), config)


def test_incremental_findings_match_fresh_analysis() -> None:
    rng = random.Random(11)
    text = _corpus()
    document = SourceDocument(text)
    insertions = ["", "x", "\n", "\n\n", "  ", "é😀", "a[threadIdx.x * 2] = 1.0;\n", "}", "{", "/*", "*/",
                  "__syncthreads();\n", "sqrt(2.0)", "kernel<<<1, 48>>>(p);\n"]
    for step in range(60):
        span = random_span(text, rng, 1)
        new_text = rng.choice(insertions)
        text = apply_edits(text, [TextEdit(span, new_text)])
        document.apply_change(span, new_text)
        config = CONFIGS[step % len(CONFIGS)]
        expected = _reference(text, config)
        assert analyze(document.model, config) == expected, (step, span, new_text)
        assert analyze(parse_source(text), config) == expected


def test_line_inserted_above_moves_findings_without_rechecking() -> None:
    text = _corpus()
    document = SourceDocument(text)
    before = analyze(document.model)
    last = document.model.placements[-1]
    memo_before = dict(last.memo["rules.relative"])
    document.apply_change(Span.of(0, 0, 0, 0), "\n")
    after = analyze(document.model)
    assert [(f.rule, f.span.start.line + 1, f.message) for f in before] == \
        [(f.rule, f.span.start.line, f.message) for f in after]
    moved = document.model.placements[-1]
    assert moved.relative is last.relative and moved.row == last.row + 1
    # The relative findings were reused, not recomputed.
    assert all(moved.memo["rules.relative"][codes] is found for codes, found in memo_before.items())
    assert after == _reference(document.text)


def test_file_scope_shared_fix_moves_with_the_declaration() -> None:
    document = SourceDocument(FILE_SHARED)
    (finding,) = [f for f in analyze(document.model) if f.rule == "R011"]
    assert finding.fixes[0].edits[0].span.start.line == 0
    document.apply_change(Span.of(1, 0, 1, 0), "\n\n")  # between the declaration and the kernel
    (moved,) = [f for f in analyze(document.model) if f.rule == "R011"]
    assert moved.fixes[0].edits[0].span.start.line == 0
    assert moved.span.start.line == finding.span.start.line + 2


def test_models_without_placements_are_analysed_directly() -> None:
    model = parse_source((DATA / "bad" / "R006.cu").read_text())
    bare = dataclasses.replace(model, functions=tuple(model.functions), placements=())
    swapped = dataclasses.replace(model, functions=model.functions[:0])
    assert analyze(bare) == analyze(model) != []
    assert analyze(swapped) == []


def test_moved_functions_equal_fresh_ones_and_shift_lazily() -> None:
    text = (DATA / "bad" / "R011.cu").read_text()
    document = SourceDocument(text)
    original = document.model.functions[0]
    document.apply_change(Span.of(0, 0, 0, 0), "\n\n\n")
    moved = document.model.functions[0]
    assert "accesses" not in moved.__dict__  # not shifted until read
    assert moved.accesses[0].span.start.line == original.accesses[0].span.start.line + 3
    assert moved == parse_source(document.text).functions[0]
    assert hash(moved) == hash(parse_source(document.text).functions[0])
