"""Integer expressions of the kernel spec: a tokenizer, a recursive-descent parser, an evaluator.

Owns the spec's expression language (docs/kernel-spec.md): integer and float literals as C
writes them (`42`, `0x100`, `256u`, `1LL`, `1.5`, `2.0f`, `1e-5`, `.5`, octal `010`), scalar
names, `+ - * / % << >>`, unary `+ -`, parentheses, and the functions `min`, `max`, `ceil_div`.
Integer `/` and `%` truncate toward zero as in C; any float operand makes the operation a float
one. Never uses Python `eval`.

Hostile input is bounded before it costs anything: an expression longer than
`MAX_EXPRESSION_CHARS`, nested deeper than `MAX_DEPTH`, an integer outside 64-bit arithmetic or a
float that is not finite is an `InputError` naming the key, never a `RecursionError`, a
`ValueError` from a 5,000-digit literal or seconds spent on huge intermediate integers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import NoReturn

from regrapht.errors import InputError

Number = int | float

MAX_EXPRESSION_CHARS = 10_000
MAX_DEPTH = 100  # nested parentheses, unary signs and function calls
INT_MIN = -(2**63)  # C's widest signed type
INT_MAX = 2**64 - 1  # C's widest unsigned type

# A C integer suffix (u, l, ll, ul, ull, lu, llu in either case; `lL` is not C) or a float one.
_INT_SUFFIX = r"(?:[uU](?:ll|LL|[lL])?|(?:ll|LL|[lL])[uU]?)?"
_TOKEN = re.compile(
    r"\s*(?:(?P<float>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?P<fsuffix>[fFlL]?)"
    rf"|(?P<int>0[xX][0-9a-fA-F]+|\d+)(?P<suffix>{_INT_SUFFIX})"
    r"|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<op><<|>>|[-+*/%(),]))"
)
_LITERAL_TAIL = re.compile(r"[A-Za-z0-9_.]")
_SPACE = re.compile(r"\s*")

_FUNCTIONS = {"min": 2, "max": 2, "ceil_div": 2}


@dataclass(frozen=True)
class _Token:
    kind: str  # "num", "name", "op", "end"
    text: str
    value: Number = 0


@dataclass(frozen=True)
class _Where:
    file: str | None
    key: str | None

    def fail(self, message: str) -> NoReturn:
        raise InputError(message, file=self.file, key=self.key)


def shown(text: str) -> str:
    """`text` quoted for a one-line message, cut short when it is long."""
    return repr(text) if len(text) <= 80 else repr(text[:60]) + f"... ({len(text)} characters)"


def _checked(value: Number, where: _Where, what: str) -> Number:
    """`value` if 64-bit C arithmetic can hold it (a finite float, an int in int64/uint64)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            where.fail(f"{what} is not a finite number")
    elif not INT_MIN <= value <= INT_MAX:
        where.fail(f"{what} does not fit in 64-bit integer arithmetic")
    return value


def _int_literal(literal: str, where: _Where, text: str) -> int:
    if literal[:2].lower() == "0x":
        base, digits = 16, literal[2:]
    elif literal.startswith("0") and len(literal) > 1:  # C: a leading 0 means octal
        base, digits = 8, literal[1:]
        if not set(digits) <= set("01234567"):
            where.fail(f"malformed octal literal {shown(literal)} in expression {shown(text)}")
    else:
        base, digits = 10, literal
    # Checked by length first: int() of a 5,000-digit string is a ValueError, not a number.
    if len(digits.lstrip("0")) > {16: 16, 8: 22, 10: 20}[base]:
        where.fail(f"integer literal {shown(literal)} does not fit in 64 bits in expression {shown(text)}")
    return int(_checked(int(digits, base), where, f"integer literal {shown(literal)} in expression {shown(text)}"))


def _scan(text: str) -> Iterator[re.Match[str] | int]:
    """Token matches of `text`, or the position of a character no token starts with."""
    pos = 0
    end = len(text.rstrip())
    while pos < end:
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # \s* always matches
            yield pos
            pos += 1
            continue
        yield match
        pos = match.end()


def _tokenize(text: str, where: _Where) -> list[_Token]:
    tokens: list[_Token] = []
    for match in _scan(text):
        if isinstance(match, int):
            where.fail(f"unexpected character {text[match]!r} in expression {shown(text)}")
        number = match.group("float") or match.group("int")
        if number is not None and _LITERAL_TAIL.match(text, match.end()):
            bad = re.match(r"[A-Za-z0-9_.]+", text[match.start():].lstrip())
            where.fail(f"malformed number {shown(bad.group(0) if bad else number)} in expression {shown(text)}")
        if match.group("float") is not None:
            literal = match.group("float")
            value = _checked(float(literal), where, f"float literal {shown(literal)}")
            tokens.append(_Token("num", literal, value))
        elif match.group("int") is not None:
            tokens.append(_Token("num", match.group("int"), _int_literal(match.group("int"), where, text)))
        elif match.group("name") is not None:
            tokens.append(_Token("name", match.group("name")))
        else:
            tokens.append(_Token("op", match.group("op")))
    tokens.append(_Token("end", ""))
    return tokens


def _c_div(a: Number, b: Number, where: _Where, text: str) -> Number:
    if b == 0:
        where.fail(f"division by zero in expression {shown(text)}")
    if isinstance(a, int) and isinstance(b, int):
        quotient = abs(a) // abs(b)
        return quotient if (a >= 0) == (b >= 0) else -quotient
    return a / b


def _c_mod(a: Number, b: Number, where: _Where, text: str) -> Number:
    if not (isinstance(a, int) and isinstance(b, int)):
        where.fail(f"'%' needs integer operands in expression {shown(text)}")
    if b == 0:
        where.fail(f"modulo by zero in expression {shown(text)}")
    return a - b * int(_c_div(a, b, where, text))


class _Parser:
    def __init__(self, text: str, names: Mapping[str, Number], where: _Where) -> None:
        self.text = text
        self.names = names
        self.where = where
        self.tokens = _tokenize(text, where)
        self.index = 0
        self.depth = 0

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def take(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expect(self, op: str) -> None:
        token = self.take()
        if token.kind != "op" or token.text != op:
            found = token.text or "end of expression"
            self.where.fail(f"expected {op!r} but found {found!r} in expression {shown(self.text)}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.where.fail(f"expression {shown(self.text)} is nested more than {MAX_DEPTH} levels deep")

    def result(self, value: Number) -> Number:
        return _checked(value, self.where, f"an intermediate value of expression {shown(self.text)}")

    def parse(self) -> Number:
        if self.peek().kind == "end":
            self.where.fail("empty expression")
        value = self.shift()
        if self.peek().kind != "end":
            self.where.fail(f"unexpected {self.peek().text!r} in expression {shown(self.text)}")
        return value

    def shift(self) -> Number:
        value = self.additive()
        while self.peek().kind == "op" and self.peek().text in ("<<", ">>"):
            op = self.take().text
            right = self.additive()
            if not (isinstance(value, int) and isinstance(right, int)):
                self.where.fail(f"{op!r} needs integer operands in expression {shown(self.text)}")
            if right < 0 or right > 63:
                self.where.fail(f"shift count {right} out of range in expression {shown(self.text)}")
            value = self.result(value << right if op == "<<" else value >> right)
        return value

    def additive(self) -> Number:
        value = self.term()
        while self.peek().kind == "op" and self.peek().text in ("+", "-"):
            op = self.take().text
            right = self.term()
            value = self.result(value + right if op == "+" else value - right)
        return value

    def term(self) -> Number:
        value = self.unary()
        while self.peek().kind == "op" and self.peek().text in ("*", "/", "%"):
            op = self.take().text
            right = self.unary()
            if op == "*":
                value = self.result(value * right)
            elif op == "/":
                value = self.result(_c_div(value, right, self.where, self.text))
            else:
                value = self.result(_c_mod(value, right, self.where, self.text))
        return value

    def unary(self) -> Number:
        token = self.peek()
        if token.kind == "op" and token.text in ("+", "-"):
            self.take()
            self.enter()
            operand = self.unary()
            self.depth -= 1
            return self.result(-operand) if token.text == "-" else operand
        return self.primary()

    def primary(self) -> Number:
        token = self.take()
        if token.kind == "num":
            return token.value
        if token.kind == "op" and token.text == "(":
            self.enter()
            value = self.shift()
            self.expect(")")
            self.depth -= 1
            return value
        if token.kind == "name":
            if self.peek().kind == "op" and self.peek().text == "(":
                return self.call(token.text)
            if token.text not in self.names:
                known = ", ".join(self.names) or "none"
                self.where.fail(
                    f"unknown name {token.text!r} in expression {shown(self.text)} "
                    f"(scalars it may use: {known})"
                )
            return self.names[token.text]
        found = token.text or "end of expression"
        self.where.fail(f"unexpected {found!r} in expression {shown(self.text)}")

    def call(self, name: str) -> Number:
        if name not in _FUNCTIONS:
            self.where.fail(
                f"unknown function {name!r} in expression {shown(self.text)} (known: min, max, ceil_div)"
            )
        self.expect("(")
        self.enter()
        args = [self.shift()]
        while self.peek().kind == "op" and self.peek().text == ",":
            self.take()
            args.append(self.shift())
        self.expect(")")
        self.depth -= 1
        if len(args) != _FUNCTIONS[name]:
            self.where.fail(f"{name}() takes {_FUNCTIONS[name]} arguments, got {len(args)}")
        a, b = args
        if name == "min":
            return min(a, b)
        if name == "max":
            return max(a, b)
        if b == 0:
            self.where.fail(f"ceil_div by zero in expression {shown(self.text)}")
        if isinstance(a, int) and isinstance(b, int):
            return self.result(-(-a // b) if b > 0 else _c_div(a + b + 1, b, self.where, self.text))
        return self.result(_c_div(a + b - 1, b, self.where, self.text))


def _bounded_text(expression: str, where: _Where) -> str:
    if len(expression) > MAX_EXPRESSION_CHARS:
        where.fail(f"expression is {len(expression)} characters long; the limit is {MAX_EXPRESSION_CHARS}")
    return expression


def evaluate(
    expression: str | int | float,
    names: Mapping[str, Number],
    *,
    file: str | None = None,
    key: str | None = None,
) -> Number:
    """The value of a spec expression over `names`; an `InputError` naming `key` if malformed."""
    where = _Where(file, key)
    if isinstance(expression, bool):
        where.fail("expected an expression, got a boolean")
    if isinstance(expression, int | float):
        return _checked(expression, where, f"the number {shown(str(expression))}")
    if not isinstance(expression, str):
        where.fail(f"expected an expression (string or number), got {type(expression).__name__}")
    return _Parser(_bounded_text(expression, where), names, where).parse()


def evaluate_int(
    expression: str | int | float,
    names: Mapping[str, Number],
    *,
    file: str | None = None,
    key: str | None = None,
) -> int:
    """Like `evaluate`, but the result must be an integer (or a float with an integral value)."""
    value = evaluate(expression, names, file=file, key=key)
    if isinstance(value, float):
        if not value.is_integer():
            raise InputError(f"expression {shown(str(expression))} is {value}, not an integer",
                             file=file, key=key)
        return int(value)
    return value


def names_in(expression: str | int | float) -> set[str]:
    """The scalar names an expression mentions: name tokens not followed by `(` (so neither
    function names nor the letters of literals such as `1e-5`, `2.0f`, `0x1f`, `256u`)."""
    if not isinstance(expression, str):
        return set()
    found: set[str] = set()
    matches = [m for m in _scan(expression[:MAX_EXPRESSION_CHARS]) if not isinstance(m, int)]
    if not matches:  # an empty expression, or one of characters the language does not know
        return found
    for before, match, following in zip([None, *matches[:-1]], matches, [*matches[1:], None], strict=True):
        glued_to_number = (before is not None and before.group("op") is None and before.group("name") is None
                           and before.end() == match.start("name"))  # `1e`, `0x`: a malformed literal
        if (match.group("name") is not None and not glued_to_number
                and (following is None or following.group("op") != "(")):
            found.add(match.group("name"))
    return found
