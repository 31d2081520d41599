"""A small C tokenizer for the appliers' text surgery on expressions and headers.

Owns: splitting a (comment-blanked) C text into identifiers, numbers and punctuators with their
offsets, and the few questions the appliers ask of such token lists (is this a name, an integer
literal, where does a bracket close). Whole kernels are read through the tree-sitter model
(`cuda/parse.py`); this is for launch expressions, declarations and includes, where a parse tree
would be heavier than the question.
"""

from __future__ import annotations

from dataclasses import dataclass

_PUNCTUATORS = ("<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=",
                "*=", "/=", "%=", "&=", "|=", "^=", "::")
_OPENING = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class Token:
    text: str
    start: int  # offset in the tokenized text
    end: int

    @property
    def is_name(self) -> bool:
        return is_name(self.text)

    @property
    def is_digits(self) -> bool:
        return is_digits(self.text)


def is_word_char(char: str) -> bool:
    """Part of a C identifier or number: a letter, digit or underscore."""
    return char.isalnum() or char == "_"


def is_name(text: str) -> bool:
    """A C identifier: an ASCII letter or underscore, then letters, digits, underscores."""
    return bool(text) and text.isidentifier() and text[0].isascii() and not text[0].isdigit()


def is_digits(text: str) -> bool:
    """A decimal literal without suffix: ASCII digits only."""
    return bool(text) and text.isascii() and text.isdigit()


def tokens(text: str) -> list[Token]:
    """The tokens of `text` (whitespace dropped; comments must be blanked beforehand). A number
    is one token with its suffix and exponent (`1.5e-3f`, `0x1Fu`); a character the tokenizer
    does not know is a token of its own."""
    found: list[Token] = []
    at, size = 0, len(text)
    while at < size:
        char = text[at]
        if char.isspace():
            at += 1
            continue
        start = at
        if char.isdigit() or (char == "." and at + 1 < size and text[at + 1].isdigit()):
            at += 1
            while at < size and (is_word_char(text[at]) or text[at] == "." or
                                 (text[at] in "+-" and text[at - 1] in "eEpP" and not text[start:at].startswith(("0x", "0X")))):
                at += 1
        elif is_word_char(char):
            while at < size and is_word_char(text[at]):
                at += 1
        else:
            at += next((len(p) for p in _PUNCTUATORS if text.startswith(p, at)), 1)
        found.append(Token(text[start:at], start, at))
    return found


def closing(found: list[Token], opening: int) -> int:
    """The index of the token closing the bracket at `found[opening]`; -1 when it does not close."""
    pair = _OPENING.get(found[opening].text)
    if pair is None:
        return -1
    depth = 0
    for index in range(opening, len(found)):
        if found[index].text == found[opening].text:
            depth += 1
        elif found[index].text == pair:
            depth -= 1
            if depth == 0:
                return index
    return -1


def top_level_commas(found: list[Token], start: int, end: int) -> list[int]:
    """Indices of the commas in `found[start:end]` outside any bracket."""
    depth, commas = 0, []
    for index in range(start, end):
        text = found[index].text
        if text in _OPENING:
            depth += 1
        elif text in (")", "]", "}"):
            depth -= 1
        elif text == "," and depth == 0:
            commas.append(index)
    return commas


def find_word(text: str, word: str, start: int = 0, end: int | None = None) -> int:
    """The offset of `word` as a whole word in `text[start:end]`; -1 when absent."""
    stop = len(text) if end is None else end
    at = text.find(word, start, stop)
    while at >= 0:
        after = at + len(word)
        if (at == 0 or not is_word_char(text[at - 1])) and (after >= len(text) or not is_word_char(text[after])):
            return at
        at = text.find(word, at + 1, stop)
    return -1


def word_id(text: str) -> str:
    """`text` with every run of non-word characters as one `_`: a type as part of a name."""
    out: list[str] = []
    in_gap = False
    for char in text:
        if is_word_char(char):
            out.append(char)
            in_gap = False
        elif not in_gap:
            out.append("_")
            in_gap = True
    return "".join(out)


def includes(text: str, header: str) -> bool:
    """Whether a line of `text` is `#include <header>` (any spacing around `#` and `include`)."""
    for line in text.splitlines():
        rest = line.lstrip()
        if not rest.startswith("#"):
            continue
        rest = rest[1:].lstrip()
        if rest.startswith("include") and rest[len("include"):].lstrip().startswith(f"<{header}>"):
            return True
    return False
