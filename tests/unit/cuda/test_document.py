"""`SourceDocument` edits: after any sequence of range edits, the incremental tree and model
equal a fresh parse of the resulting text."""

from __future__ import annotations

import random
from pathlib import Path

from random_edits import random_span

from regrapht.cuda import SourceDocument, parse_source
from regrapht.text import Position, Span, TextEdit, apply_edits

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_incremental_edits_match_fresh_parse() -> None:
    rng = random.Random(3)
    text = (EXAMPLES / "transpose.cu").read_text() + "\n// é€😀 non-ASCII\n" + (EXAMPLES / "matmul.cu").read_text()
    document = SourceDocument(text)
    assert document.model == parse_source(text)
    insertions = ["", "x", "\n", "  ", "é😀", "a[threadIdx.x * 2] = 1.0;\n", "}", "/*", "__syncthreads();"]
    for _ in range(60):
        span = random_span(text, rng, 2)
        new_text = rng.choice(insertions)
        text = apply_edits(text, [TextEdit(span, new_text)])
        document.apply_change(span, new_text)
        assert document.text == text
        assert str(document.tree.root_node) == str(parse_source_tree(text))  # type: ignore[attr-defined]
        assert document.model == parse_source(text)


def parse_source_tree(text: str) -> object:
    from regrapht.cuda.parse import encode_source, make_parser

    return make_parser().parse(encode_source(text)).root_node


def test_full_replacement_and_lookups() -> None:
    document = SourceDocument("")
    document.apply_change(None, (EXAMPLES / "saxpy.cu").read_text())
    kernel = document.kernel_at(Position(7, 8))
    assert kernel is not None and kernel.name == "saxpy"
    assert [s.block_dims for s in document.launch_sites("saxpy")] == [(100,)]


def test_moved_functions_are_shifted() -> None:
    document = SourceDocument((EXAMPLES / "matmul.cu").read_text())
    before = document.model.kernels[0]
    document.apply_change(Span.of(0, 0, 0, 0), "\n\n")
    after = document.model.kernels[0]
    assert after.span.start.line == before.span.start.line + 2
    assert after.accesses[0].span.start.line == before.accesses[0].span.start.line + 2
    assert after == parse_source(document.text).kernels[0]


def test_relative_extraction_moved_equals_direct_extraction() -> None:
    """Facts extracted relative to a function's first line and moved there equal facts
    extracted in file coordinates (what the builder did before it cached relative facts)."""
    from regrapht.cuda.extract import FunctionExtractor, Positions
    from regrapht.cuda.parse import _top_level_items, encode_source, make_parser

    text = "\n// é€😀\n".join(p.read_text() for p in sorted(EXAMPLES.glob("*.cu")))
    source = encode_source(text)
    items, constants, _, _ = _top_level_items(make_parser().parse(source).root_node)
    model = parse_source(text)
    direct = [FunctionExtractor(Positions(source), constants, {}).extract(node, templates, extern_c)
              for node, templates, extern_c in items]
    assert len(model.functions) == len(direct) > 3
    assert list(model.functions) == direct
