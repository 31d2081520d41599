from lsprotocol import types

from regrapht.cards import plain_text
from regrapht.lsp.converters import (
    UTF16,
    UTF32,
    code_points_to_utf16,
    from_lsp_position,
    negotiate_encoding,
    to_lsp_position,
    to_lsp_range,
    utf16_to_code_points,
)
from regrapht.text import Position, Span

LINES = ["int a; // naïve", "float 😀x = 1;", "", "a\r"]


def test_negotiation_prefers_utf32_else_utf16():
    assert negotiate_encoding(["utf-8", "utf-32", "utf-16"]) == UTF32
    assert negotiate_encoding(["utf-8", "utf-16"]) == UTF16
    assert negotiate_encoding(["utf-8"]) == UTF16
    assert negotiate_encoding(None) == UTF16


def test_astral_characters_count_two_utf16_units():
    line = LINES[1]
    x = line.index("x")  # after the emoji: code point 7
    assert x == 7
    assert code_points_to_utf16(line, x) == 8
    assert utf16_to_code_points(line, 8) == 7
    # in the middle of the surrogate pair: rounds up to after the emoji
    assert utf16_to_code_points(line, 7) == 7
    assert to_lsp_position(Position(1, x), LINES, UTF16) == types.Position(1, 8)
    assert to_lsp_position(Position(1, x), LINES, UTF32) == types.Position(1, 7)


def test_bmp_non_ascii_is_one_unit():
    line = LINES[0]
    end = len(line)
    assert code_points_to_utf16(line, end) == end


def test_round_trip_and_clamping():
    for line_no, line in enumerate(LINES):
        for char in range(len(line.rstrip("\r")) + 1):
            lsp = to_lsp_position(Position(line_no, char), LINES, UTF16)
            assert from_lsp_position(lsp, LINES, UTF16) == Position(line_no, char)
    assert from_lsp_position(types.Position(1, 999), LINES, UTF16) == Position(1, len(LINES[1]))
    assert from_lsp_position(types.Position(99, 5), LINES, UTF16) == Position(3, 1)  # "\r" excluded
    assert from_lsp_position(types.Position(0, 3), [], UTF16) == Position(0, 0)


def test_range():
    span = Span.of(1, 6, 1, 8)
    assert to_lsp_range(span, LINES, UTF16) == types.Range(types.Position(1, 6), types.Position(1, 9))


def test_lone_surrogate_does_not_crash():
    line = "a\ud800b"
    assert code_points_to_utf16(line, 3) == 3
    assert utf16_to_code_points(line, 2) == 2


def test_related_locations_become_related_information_or_lines_in_the_message():
    from regrapht.lsp.converters import finding_to_diagnostic
    from regrapht.rules import analyze_text

    text = """__global__ void k(float *y) { int i = threadIdx.x; float v = y[i + 1];
    y[i] = 0.3 * y[i] + 0.7 * v + 0.9 * v;
}"""
    (finding,) = [f for f in analyze_text(text) if f.rule == "R007"]
    lines = text.splitlines()
    uri = "file:///k.cu"
    with_info = finding_to_diagnostic(finding, lines, UTF16, lambda doc: doc, uri)
    assert [(r.location.uri, r.location.range.start.line) for r in with_info.related_information] == [(uri, 1), (uri, 1)]
    assert "'0.7'" in with_info.related_information[0].message  # plain text: quoted, no backticks
    assert with_info.message == plain_text(finding.message) and "`" not in with_info.message
    plain = finding_to_diagnostic(finding, lines, UTF16, lambda doc: doc, uri, related_information=False)
    assert plain.related_information is None and plain.message == f"{plain_text(finding.message)} Also at line 2."


def test_plain_text_quotes_code_spans():
    assert plain_text("Write `1.0f` instead of ``a`b``") == "Write '1.0f' instead of 'a`b'"
    assert plain_text("no code here") == "no code here"


def test_messages_and_quick_fix_titles_are_plain_text():
    from regrapht.lsp.converters import finding_to_diagnostic, fix_to_code_action
    from regrapht.rules import analyze_text

    text = "__global__ void k(float *y) { int i = threadIdx.x; y[i] = 0.5 * y[i]; }\n"
    findings = analyze_text(text)
    lines = text.splitlines()
    for finding in findings:
        diagnostic = finding_to_diagnostic(finding, lines, UTF16, lambda doc: doc, "file:///k.cu")
        assert "`" not in diagnostic.message
        for fix in finding.fixes:
            action = fix_to_code_action("file:///k.cu", 1, fix, diagnostic, lines, UTF16, True, True)
            assert "`" not in action.title, action.title
    assert any(f.fixes and "`" in f.fixes[0].title for f in findings)  # the rules' titles do use code spans
