"""Integer expressions of the kernel spec: a tokenizer, a recursive-descent parser, an evaluator.

Owns the spec's expression language (shared/docs/kernel-spec.md): integer and float literals,
names of scalars declared earlier, `+ - * / % << >>`, unary `+ -`, parentheses, and the
functions `min`, `max`, `ceil_div`. Integer `/` and `%` truncate toward zero as in C; any float
operand makes the operation a float one. Never uses Python `eval`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NoReturn

from regrapht.errors import InputError

Number = int | float

_TOKEN = re.compile(
    r"\s*(?:(?P<float>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?|\d+[eE][+-]?\d+[fF]?)"
    r"|(?P<int>0[xX][0-9a-fA-F]+|\d+)(?P<suffix>[uUlL]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<op><<|>>|[-+*/%(),]))"
)

_FUNCTIONS = {"min": 2, "max": 2, "ceil_div": 2}


@dataclass(frozen=True)
class _Token:
    kind: str  # "num", "name", "op", "end"
    text: str
    value: Number = 0


def _tokenize(text: str, where: _Where) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    stripped_end = len(text.rstrip())
    while pos < stripped_end:
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            where.fail(f"unexpected character {text[pos:].strip()[:1]!r} in expression {text!r}")
        pos = match.end()
        if match.group("float") is not None:
            tokens.append(_Token("num", match.group("float"), float(match.group("float").rstrip("fF"))))
        elif match.group("int") is not None:
            literal = match.group("int")
            tokens.append(_Token("num", literal, int(literal, 16 if literal[:2].lower() == "0x" else 10)))
        elif match.group("name") is not None:
            tokens.append(_Token("name", match.group("name")))
        else:
            tokens.append(_Token("op", match.group("op")))
    tokens.append(_Token("end", ""))
    return tokens


@dataclass(frozen=True)
class _Where:
    file: str | None
    key: str | None

    def fail(self, message: str) -> NoReturn:
        raise InputError(message, file=self.file, key=self.key)


def _c_div(a: Number, b: Number, where: _Where, text: str) -> Number:
    if b == 0:
        where.fail(f"division by zero in expression {text!r}")
    if isinstance(a, int) and isinstance(b, int):
        quotient = abs(a) // abs(b)
        return quotient if (a >= 0) == (b >= 0) else -quotient
    return a / b


def _c_mod(a: Number, b: Number, where: _Where, text: str) -> Number:
    if not (isinstance(a, int) and isinstance(b, int)):
        where.fail(f"'%' needs integer operands in expression {text!r}")
    if b == 0:
        where.fail(f"modulo by zero in expression {text!r}")
    return a - b * int(_c_div(a, b, where, text))


class _Parser:
    def __init__(self, text: str, names: Mapping[str, Number], where: _Where) -> None:
        self.text = text
        self.names = names
        self.where = where
        self.tokens = _tokenize(text, where)
        self.index = 0

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
            self.where.fail(f"expected {op!r} but found {found!r} in expression {self.text!r}")

    def parse(self) -> Number:
        if self.peek().kind == "end":
            self.where.fail("empty expression")
        value = self.shift()
        if self.peek().kind != "end":
            self.where.fail(f"unexpected {self.peek().text!r} in expression {self.text!r}")
        return value

    def shift(self) -> Number:
        value = self.additive()
        while self.peek().kind == "op" and self.peek().text in ("<<", ">>"):
            op = self.take().text
            right = self.additive()
            if not (isinstance(value, int) and isinstance(right, int)):
                self.where.fail(f"{op!r} needs integer operands in expression {self.text!r}")
            if right < 0 or right > 63:
                self.where.fail(f"shift count {right} out of range in expression {self.text!r}")
            value = value << right if op == "<<" else value >> right
        return value

    def additive(self) -> Number:
        value = self.term()
        while self.peek().kind == "op" and self.peek().text in ("+", "-"):
            op = self.take().text
            right = self.term()
            value = value + right if op == "+" else value - right
        return value

    def term(self) -> Number:
        value = self.unary()
        while self.peek().kind == "op" and self.peek().text in ("*", "/", "%"):
            op = self.take().text
            right = self.unary()
            if op == "*":
                value = value * right
            elif op == "/":
                value = _c_div(value, right, self.where, self.text)
            else:
                value = _c_mod(value, right, self.where, self.text)
        return value

    def unary(self) -> Number:
        token = self.peek()
        if token.kind == "op" and token.text in ("+", "-"):
            self.take()
            operand = self.unary()
            return -operand if token.text == "-" else operand
        return self.primary()

    def primary(self) -> Number:
        token = self.take()
        if token.kind == "num":
            return token.value
        if token.kind == "op" and token.text == "(":
            value = self.shift()
            self.expect(")")
            return value
        if token.kind == "name":
            if self.peek().kind == "op" and self.peek().text == "(":
                return self.call(token.text)
            if token.text not in self.names:
                known = ", ".join(self.names) or "none"
                self.where.fail(
                    f"unknown name {token.text!r} in expression {self.text!r} "
                    f"(scalars declared before it: {known})"
                )
            return self.names[token.text]
        found = token.text or "end of expression"
        self.where.fail(f"unexpected {found!r} in expression {self.text!r}")

    def call(self, name: str) -> Number:
        if name not in _FUNCTIONS:
            self.where.fail(
                f"unknown function {name!r} in expression {self.text!r} (known: min, max, ceil_div)"
            )
        self.expect("(")
        args = [self.shift()]
        while self.peek().kind == "op" and self.peek().text == ",":
            self.take()
            args.append(self.shift())
        self.expect(")")
        if len(args) != _FUNCTIONS[name]:
            self.where.fail(f"{name}() takes {_FUNCTIONS[name]} arguments, got {len(args)}")
        a, b = args
        if name == "min":
            return min(a, b)
        if name == "max":
            return max(a, b)
        if b == 0:
            self.where.fail(f"ceil_div by zero in expression {self.text!r}")
        if isinstance(a, int) and isinstance(b, int):
            return -(-a // b) if b > 0 else _c_div(a + b + 1, b, self.where, self.text)
        return _c_div(a + b - 1, b, self.where, self.text)


def evaluate(
    expression: str | int | float,
    names: Mapping[str, Number],
    *,
    file: str | None = None,
    key: str | None = None,
) -> Number:
    """The value of a spec expression over `names`; an `InputError` naming `key` if malformed."""
    if isinstance(expression, bool):
        raise InputError("expected an expression, got a boolean", file=file, key=key)
    if isinstance(expression, int | float):
        return expression
    if not isinstance(expression, str):
        raise InputError(
            f"expected an expression (string or number), got {type(expression).__name__}",
            file=file, key=key,
        )
    return _Parser(expression, names, _Where(file, key)).parse()


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
            raise InputError(f"expression {expression!r} is {value}, not an integer", file=file, key=key)
        return int(value)
    return value


def names_in(expression: str | int | float) -> set[str]:
    """The scalar names an expression mentions (function names excluded); best effort."""
    if not isinstance(expression, str):
        return set()
    found = set()
    for match in re.finditer(r"[A-Za-z_][A-Za-z_0-9]*", expression):
        if not expression[match.end():].lstrip().startswith("("):
            found.add(match.group(0))
    return found
