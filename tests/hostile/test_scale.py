"""A file of thousands of kernels: an edit, a hover, a code action or a diagnostics update costs
work for the kernel concerned, not for every kernel of the file. Counted in operations (the
parser, the extractor, span comparisons), not timed; bench/lsp_latency.py times it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lsprotocol import types

from regrapht.cuda.extract import FunctionExtractor
from regrapht.lsp.features import diagnostics as diagnostics_feature
from regrapht.lsp.features.code_actions import actions_for
from regrapht.lsp.features.diagnostics import ConvertedDiagnostics, diagnostics_for
from regrapht.lsp.features.hover import hover_for
from regrapht.lsp.state import DocumentState, ServerState
from regrapht.text import Position, Span

# One worker builds the module's expensive fixture once (scripts/test.sh: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_scale")

KERNELS = 4200  # more than the 4,096 functions the extraction cache used to give up at
URI = "file:///many/kernels.cu"


def many_kernels(count: int = KERNELS) -> str:
    lines = [f"__global__ void k{i}(float *x) {{ x[0] = x[0] * 0.5; }}" for i in range(count)]
    lines += ["void launch_all(float *x) {"] + [f"  k{i}<<<1, 128>>>(x);" for i in range(count)] + ["}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def opened() -> tuple[ServerState, DocumentState]:
    state = ServerState()
    document = state.open(URI, many_kernels(), 1)
    analysis = state.ensure_analysis(document)
    assert len(analysis.findings) == KERNELS and analysis.model is not None
    assert len(analysis.model.kernels) == KERNELS and not analysis.model.warnings
    return state, document


class Counter:
    def __init__(self) -> None:
        self.calls = 0


@pytest.fixture
def span_checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter]:
    """Counts `Span.contains` and `Position` comparisons: what a scan over every kernel,
    launch or finding of the file does once per item."""
    counter = Counter()

    def counted(name: str) -> Any:
        original = getattr(Position if name != "contains" else Span, name)

        def wrapper(*args: Any) -> Any:
            counter.calls += 1
            return original(*args)
        return wrapper

    monkeypatch.setattr(Span, "contains", counted("contains"))
    for name in ("__lt__", "__le__", "__gt__", "__ge__"):
        monkeypatch.setattr(Position, name, counted(name))
    yield counter


def edit(state: ServerState, document: DocumentState, line: int, text: str) -> None:
    document.apply(Span.of(line, 0, line, 0), text, document.version + 1)


def test_an_edit_extracts_only_the_edited_kernel(opened: tuple[ServerState, DocumentState],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    state, document = opened
    extracted = Counter()
    original = FunctionExtractor.extract

    def counting(self: FunctionExtractor, *args: Any, **kwargs: Any) -> Any:
        extracted.calls += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(FunctionExtractor, "extract", counting)
    edit(state, document, 2000, " ")
    state.ensure_analysis(document)
    assert extracted.calls == 1
    edit(state, document, 0, "\n")  # moves every kernel down a line: moved, not re-extracted
    analysis = state.ensure_analysis(document)
    assert extracted.calls == 1 and len(analysis.findings) == KERNELS


def test_a_burst_of_edits_is_one_parse(opened: tuple[ServerState, DocumentState]) -> None:
    state, document = opened
    state.ensure_analysis(document)
    engine_document = document._engine_document
    parser = engine_document._parser
    parses = Counter()

    class CountingParser:
        def parse(self, *args: Any) -> Any:
            parses.calls += 1
            return parser.parse(*args)

    engine_document._parser = CountingParser()
    try:
        for index in range(100):
            edit(state, document, 3000 + index % 7, " ")
        analysis = state.ensure_analysis(document)
    finally:
        engine_document._parser = parser
    assert parses.calls == 1 and len(analysis.findings) == KERNELS
    assert analysis.version == document.version


def test_hover_does_not_scan_every_kernel(opened: tuple[ServerState, DocumentState], span_checks: Counter) -> None:
    state, document = opened
    edit(state, document, 1234, " ")
    state.ensure_analysis(document).build_indexes()
    span_checks.calls = 0
    for kernel in (5, 2100, KERNELS - 1):
        line = next(n for n, text in enumerate(document.lines) if text.lstrip().startswith(f"__global__ void k{kernel}("))
        hover = hover_for(state, document, types.Position(line=line, character=18), False)
        assert hover is not None and f"k{kernel}" in str(hover.contents)
    launch = next(n for n, text in enumerate(document.lines) if text.strip().startswith("k4000<<<"))
    hover = hover_for(state, document, types.Position(line=launch, character=4), False)
    assert hover is not None and "k4000" in str(hover.contents)
    assert span_checks.calls < 100, f"{span_checks.calls} span checks for 4 hovers: a scan of the file"


def test_code_action_does_not_scan_every_finding(opened: tuple[ServerState, DocumentState],
                                                 span_checks: Counter) -> None:
    state, document = opened
    state.ensure_analysis(document).build_indexes()
    line = next(n for n, text in enumerate(document.lines) if text.lstrip().startswith("__global__ void k3333("))
    column = document.lines[line].index("0.5")
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI),
        range=types.Range(start=types.Position(line=line, character=column),
                          end=types.Position(line=line, character=column)),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix]),
    )
    span_checks.calls = 0
    actions = actions_for(state, document, params, False)
    assert actions and all(a.kind == types.CodeActionKind.QuickFix for a in actions)
    assert span_checks.calls < 100, f"{span_checks.calls} span checks for one code action: a scan of the file"


def test_diagnostics_convert_only_the_edited_kernel(opened: tuple[ServerState, DocumentState],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    state, document = opened
    previous = ConvertedDiagnostics()
    first = diagnostics_for(state, URI, state.ensure_analysis(document), previous)
    converted = Counter()
    original = diagnostics_feature.finding_to_diagnostic

    def counting(*args: Any) -> Any:
        converted.calls += 1
        return original(*args)

    monkeypatch.setattr(diagnostics_feature, "finding_to_diagnostic", counting)
    line = next(n for n, text in enumerate(document.lines) if text.lstrip().startswith("__global__ void k777("))
    edit(state, document, line, " ")
    second = diagnostics_for(state, URI, state.ensure_analysis(document), previous)
    assert len(second) == len(first) == KERNELS
    assert converted.calls == 1, "only the edited kernel's finding is converted again"
    others = [(d.data["kernel"], d.range) for d in second if d.data["kernel"] != "k777"]
    assert others == [(d.data["kernel"], d.range) for d in first if d.data["kernel"] != "k777"]
    edited = next(d for d in second if d.data["kernel"] == "k777")
    assert edited.range.start.character == document.lines[line].index("0.5")
