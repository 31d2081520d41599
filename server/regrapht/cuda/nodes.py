"""Reading tree-sitter nodes of CUDA source: the parser, positions, spellings, declarators.

The small node-level helpers every reader of the syntax tree shares (the source model's
extractor, the integer evaluator, the idioms): `make_parser`, `encode_source`, `Positions`
(tree-sitter points to code-point `Position`s), `node_text`, `walk`, `unparen`, the
`ambiguous_cast` test, declarator names, subscript chains and casts.
"""

from __future__ import annotations

from collections.abc import Iterator

import tree_sitter_cuda
from tree_sitter import Language, Node, Parser

from regrapht.text import Position, Span

CAST_NAMES = frozenset({"reinterpret_cast", "static_cast", "const_cast"})


def make_parser() -> Parser:
    """A parser for CUDA (tree-sitter-cuda)."""
    return Parser(Language(tree_sitter_cuda.language()))


def encode_source(text: str) -> bytes:
    # A lone surrogate cannot be UTF-8: "?" keeps one byte for one code point, so columns hold.
    return text.encode("utf-8", errors="replace")


class Positions:
    """Converts tree-sitter points (row, byte column) to `Position` (code-point character)."""

    def __init__(self, source: bytes, base_row: int = 0, ascii_only: bool | None = None) -> None:
        self.source = source
        self.ascii = source.isascii() if ascii_only is None else ascii_only
        self.base_row = base_row

    def relative_to(self, base_row: int) -> Positions:
        """The same converter producing rows relative to `base_row`."""
        return Positions(self.source, base_row, self.ascii)

    def at(self, row: int, column: int, byte: int) -> Position:
        if self.ascii or column == 0:
            return Position(row - self.base_row, column)
        line_start = byte - column
        prefix = self.source[line_start:byte]
        if prefix.isascii():
            return Position(row - self.base_row, column)
        return Position(row - self.base_row, len(prefix.decode("utf-8", errors="replace")))

    def span(self, node: Node) -> Span:
        start = node.start_point
        end = node.end_point
        return Span(self.at(start.row, start.column, node.start_byte), self.at(end.row, end.column, node.end_byte))

    def start(self, node: Node) -> Position:
        return self.at(node.start_point.row, node.start_point.column, node.start_byte)

    def end(self, node: Node) -> Position:
        return self.at(node.end_point.row, node.end_point.column, node.end_byte)


def node_text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")



def walk(node: Node) -> Iterator[Node]:
    """`node` and every node under it, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def unparen(node: Node | None) -> Node | None:
    """`node` without the parentheses around it."""
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


# Type names that are never variables in kernels: `(size_t) -x` stays a cast.
_KNOWN_TYPE_NAMES = frozenset({"size_t", "ssize_t", "ptrdiff_t", "intptr_t", "uintptr_t", "int8_t", "int16_t",
                               "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uint", "ulong"})


def ambiguous_cast(node: Node | None) -> bool:
    """`(name) + x`, `(name) - x`, `(name) * x`, `(name) & x`: C++ reads a cast only when `name`
    is a type, an addition (product, ...) when it is a variable, as macro expansions write it
    (`((row) + (col) * (ld))`); tree-sitter cannot tell and always builds the cast, which loses
    `name`. Readers of values treat such a node as unknown (`idioms/spelling/macros.py` writes it
    plainly when `name` is one of the kernel's variables)."""
    if node is None or node.type != "cast_expression":
        return False
    type_node = node.child_by_field_name("type")
    value = node.child_by_field_name("value")
    if type_node is None or value is None or len(type_node.named_children) != 1:
        return False
    name = type_node.named_children[0]
    if name.type != "type_identifier" or node_text(name) in _KNOWN_TYPE_NAMES:
        return False
    operator = node_text(value.child_by_field_name("operator")) if value.type in ("unary_expression",
                                                                                  "pointer_expression") else ""
    return operator in ("+", "-", "*", "&")


def find_function_declarator(declarator: Node | None) -> Node | None:
    """The `function_declarator` under pointer/reference declarators (`float *f(...)`)."""
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def declarator_name(declarator: Node | None) -> Node | None:
    """The identifier a (possibly pointer/array/init) declarator declares."""
    while declarator is not None and declarator.type not in ("identifier", "field_identifier", "qualified_identifier",
                                                            "operator_name", "destructor_name", "template_function"):
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in declarator.named_children if c.type in ("identifier", "pointer_declarator",
                                                                                "array_declarator", "reference_declarator")),
                         None)
        declarator = inner
    return declarator


def statement_count(statement: Node | None) -> int:
    """Statements in a branch arm: a block's own statements (a nested block or loop counts 2)."""
    if statement is None:
        return 0
    if statement.type == "else_clause":
        return sum(statement_count(c) for c in statement.named_children)
    if statement.type != "compound_statement":
        return 2 if statement.type in ("for_statement", "while_statement", "do_statement", "if_statement") else 1
    return sum(statement_count(c) for c in statement.named_children if c.type != "comment")


def always_returns(statement: Node) -> bool:
    """`return;` or a block with a `return` among its own statements."""
    if statement.type == "return_statement":
        return True
    return statement.type == "compound_statement" and any(c.type == "return_statement" for c in statement.named_children)


def cast_operand(call: Node) -> Node | None:
    """The operand of `reinterpret_cast<T>(x)` (static_cast, const_cast), else None."""
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or function.type != "template_function" or arguments is None or \
            node_text(function.child_by_field_name("name")) not in CAST_NAMES or not arguments.named_children:
        return None
    return arguments.named_children[0]


def subscript_chain(node: Node) -> tuple[Node | None, list[Node]]:
    """`t[a][b]` -> (t, [a, b])."""
    indices: list[Node] = []
    current: Node | None = node
    while current is not None and current.type == "subscript_expression":
        index_list = current.child_by_field_name("indices")
        if index_list is None:
            index_node = current.child_by_field_name("index")
            if index_node is None:
                return None, []
            indices.append(index_node)
        else:
            named = index_list.named_children
            if not named:
                return None, []
            indices.append(named[0])
        current = current.child_by_field_name("argument")
    indices.reverse()
    return current, indices


def unit_step(update: str, variable: str) -> bool:
    update = update.replace(" ", "")
    return update in (f"{variable}++", f"++{variable}", f"{variable}--", f"--{variable}", f"{variable}+=1",
                      f"{variable}-=1")


def reinterpreted_load(node: Node) -> str:
    """`*(float2 *) &a[i]` / `*reinterpret_cast<const float4 *>(&a[i])`: the wider type read or
    written through the address of `a[i]`, else ""."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None or parent.type != "pointer_expression" or node_text(parent.child_by_field_name("operator")) != "&":
        return ""
    cast = parent.parent
    while cast is not None and cast.type in ("parenthesized_expression", "argument_list"):
        cast = cast.parent
    if cast is None:
        return ""
    if cast.type == "cast_expression":
        type_text = node_text(cast.child_by_field_name("type"))
    elif cast.type == "call_expression" and cast_operand(cast) is not None:
        function = cast.child_by_field_name("function")
        type_text = node_text(function.child_by_field_name("arguments") if function is not None else None).strip("<>")
    else:
        return ""
    outer = cast.parent
    while outer is not None and outer.type == "parenthesized_expression":
        outer = outer.parent
    if "*" not in type_text or outer is None:
        return ""
    dereferenced = (outer.type == "pointer_expression" and node_text(outer.child_by_field_name("operator")) == "*") \
        or outer.type == "subscript_expression"
    return type_text.replace("const", "").replace("*", "").strip() if dereferenced else ""

