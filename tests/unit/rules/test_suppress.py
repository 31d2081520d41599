"""Suppression comments (rules/suppress.py): what each hides, and what it leaves."""

from regrapht.rules import analyze_text
from regrapht.rules.suppress import suppression_comment, suppressions, without_suppressed

TEXT = """__global__ void k(float *y, float *z) { int i = threadIdx.x;
    y[i] = 0.5 * y[i];
    z[i] = 0.25 * z[i];
}
"""


def rules_left(text: str) -> list[tuple[str, int]]:
    findings = tuple(analyze_text(text))
    return sorted((f.rule, f.span.start.line) for f in without_suppressed(text.splitlines(), findings))


def test_line_next_line_and_file_comments_hide_only_the_named_rules_there():
    before = rules_left(TEXT)
    assert ("R007", 1) in before and ("R007", 2) in before
    lines = TEXT.splitlines()
    next_line = "\n".join([lines[0], "    " + suppression_comment("R007", "next-line"), *lines[1:]]) + "\n"
    left = rules_left(next_line)
    assert ("R007", 2) not in left and ("R007", 3) in left  # only the line after the comment
    same_line = TEXT.replace("0.25 * z[i];", "0.25 * z[i];  // regrapht-disable-line R007")
    assert ("R007", 2) not in rules_left(same_line) and ("R007", 1) in rules_left(same_line)
    whole = suppression_comment("R007", "file") + "\n" + TEXT
    assert not [r for r in rules_left(whole) if r[0] == "R007"]
    assert [r for r in rules_left(whole) if r[0] != "R007"] == [(r, n + 1) for r, n in before if r != "R007"]


def test_a_comment_without_codes_or_with_others_hides_nothing():
    assert suppressions(["// regrapht-disable-file", "x // regrapht-disable-line"]).file == frozenset()
    assert rules_left("// regrapht-disable-file R001\n" + TEXT) == [(r, n + 1) for r, n in rules_left(TEXT)]
    assert suppressions(["// regrapht-disable-file R001, R015"]).file == {"R001", "R015"}
