"""Spelling passes over what the preprocessor and the grammar hide: comparisons misread as
template arguments, object-like and function-like macros expanded, a parenthesised variable
misread as a cast, functional casts to a template parameter (`T(0)`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node

from regrapht.cuda.nodes import ambiguous_cast, declarator_name
from regrapht.cuda.parse import make_parser
from regrapht.idioms.access import is_pure
from regrapht.idioms.spelling.common import Edits, declares, outermost, type_of
from regrapht.idioms.syntax import (
    KernelSyntax,
    call_args,
    call_name,
    named_statements,
    text,
    walk,
)

Helper = tuple[list[str], list[str], str, Node]  # parameter names and types, return type, returned expression


def definitions(syntax: KernelSyntax) -> tuple[dict[str, tuple[list[str], str]], dict[str, Helper]]:
    """The file's function-like macros (params, body text) and one-line `__device__` helpers."""
    root = syntax.root
    macros: dict[str, tuple[list[str], str]] = {}
    helpers: dict[str, Helper] = {}
    for node in walk(root):
        if node.type == "preproc_function_def":
            name, params, value = (node.child_by_field_name(f) for f in ("name", "parameters", "value"))
            if name is not None and params is not None and value is not None:
                macros[text(name)] = ([text(p) for p in params.named_children], text(value).strip())
        elif node.type == "function_definition" and any(text(c) == "__device__" for c in node.children) and \
                not any(text(c) == "__global__" for c in node.children):
            node = _read_as_comparisons(node)
            declarator = node.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            body = named_statements(node.child_by_field_name("body"))
            if declarator is None or len(body) != 1 or body[0].type != "return_statement" or \
                    not body[0].named_children:
                continue
            name_node = declarator.child_by_field_name("declarator")
            params = declarator.child_by_field_name("parameters")
            names, types = [], []
            for param in params.named_children if params is not None else []:
                target = param.child_by_field_name("declarator")
                pointer = target is not None and target.type == "pointer_declarator"
                if pointer and target is not None:
                    target = target.child_by_field_name("declarator")
                if param.type != "parameter_declaration" or target is None or target.type != "identifier":
                    break
                names.append(text(target))
                types.append(type_of(param) + (" *" if pointer else ""))
            else:
                if name_node is not None and is_pure(body[0].named_children[0]):
                    helpers[text(name_node)] = (names, types, type_of(node), body[0].named_children[0])
    return macros, helpers


def _object_macros(syntax: KernelSyntax) -> dict[str, str]:
    """The object-like macros defined once before the kernel and never undefined, with their values
    expanded (other such macros inside a value are replaced, as the preprocessor rescans)."""
    root = syntax.root
    values: dict[str, str] = {}
    dropped: set[str] = set()
    for node in walk(root):
        if node.type == "preproc_def":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is None:
                continue
            if node.start_byte > syntax.function.start_byte:
                dropped.add(text(name))  # defined after the kernel: not in effect there
                continue
            if text(name) in values or value is None or "#" in text(value) or not text(value).strip():
                dropped.add(text(name))
            values[text(name)] = text(value).strip()
        elif node.type == "preproc_call" and text(node.child_by_field_name("directive")) == "#undef":
            dropped.add(text(node.child_by_field_name("argument")).strip())
    macros = {name: value for name, value in values.items() if name not in dropped}
    for _ in range(8):  # rescans of values that name other macros (a macro is not expanded inside itself)
        expanded = {name: re.sub(r"\b[A-Za-z_]\w*\b", _replacer({k: v for k, v in macros.items() if k != name}), value)
                    for name, value in macros.items()}
        if expanded == macros:
            break
        macros = expanded
    return macros


def expand_object_macros(syntax: KernelSyntax) -> Edits:
    macros = {name: value for name, value in _object_macros(syntax).items() if name not in syntax.constants}
    return [(node.start_byte, node.end_byte, macros[text(node)]) for node in walk(syntax.body)
            if node.type == "identifier" and text(node) in macros]


def _misread_comparisons(function: Node) -> Edits:
    """`x < 0 || y < 0 || x >= nx` is ambiguous to the C++ grammar, which may read `y < 0 || x >`
    as the template arguments of a `y<...>`. A variable is no template: each variable that names
    such a "template" is parenthesised, `(y) < 0 || ...`, the same expression read as the
    comparisons it is."""
    variables = {text(n) for n in walk(function) if n.type == "identifier" and declares(n)}
    edits: Edits = []
    for node in walk(function):
        name = node.child_by_field_name("name") if node.type == "template_function" else None
        if name is not None and name.type == "identifier" and text(name) in variables:
            edits.append((name.start_byte, name.end_byte, f"({text(name)})"))
    return edits


def comparisons(syntax: KernelSyntax) -> Edits:
    repaired = _read_as_comparisons(syntax.function)
    if repaired is syntax.function:
        return []
    return [(syntax.function.start_byte, syntax.function.end_byte, text(repaired))]


def _read_as_comparisons(function: Node) -> Node:
    """`function` re-read with its misread comparisons parenthesised (a tree of its own text),
    one at a time (each repair may uncover the next: `x < 0 || (y) < 0 || x >` is `x<...>`), or
    `function` itself when it has none or the repair does not parse."""
    current = function
    for _ in range(16):
        edits = _misread_comparisons(current)
        if not edits:
            return current
        data = current.text or b""
        for start, end, replacement in sorted(edits, reverse=True):
            data = data[:start - current.start_byte] + replacement.encode() + data[end - current.start_byte:]
        tree = make_parser().parse(data)
        again = next((n for n in walk(tree.root_node) if n.type == "function_definition"), None)
        if again is None or tree.root_node.has_error:
            return function
        current = again
    return function


def expand_macros(syntax: KernelSyntax) -> Edits:
    macros, _ = definitions(syntax)
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type == "call_expression" and call_name(node) in macros:
            params, body = macros[call_name(node)]
            args = call_args(node)
            if len(args) != len(params) or "#" in body:
                continue
            values = {p: text(a) for p, a in zip(params, args, strict=True)}
            expanded = re.sub(r"\b[A-Za-z_]\w*\b", _replacer(values), body)
            edits.append((node.start_byte, node.end_byte, expanded))
    return outermost(edits)


def _replacer(values: dict[str, str]) -> Callable[[re.Match[str]], str]:
    return lambda match: values.get(match.group(0), match.group(0))


def variable_parentheses(syntax: KernelSyntax) -> Edits:
    """`(row) + x` where `row` is a parameter or local of the kernel: `row + x` (not a cast)."""
    variables = {p.name for p in syntax.params}
    for node in walk(syntax.body):
        if node.type == "declaration":
            for declarator in node.children_by_field_name("declarator"):
                name = declarator_name(declarator)
                if name is not None:
                    variables.add(text(name))
    edits: Edits = []
    for node in walk(syntax.body):
        value = node.child_by_field_name("value") if node.type == "cast_expression" else None
        if value is not None and ambiguous_cast(node):
            variable = text(node.child_by_field_name("type"))
            if variable in variables and variable not in syntax.template_parameters:
                edits.append((node.start_byte, value.start_byte, variable + " "))
    return edits


def functional_casts(syntax: KernelSyntax) -> Edits:
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type == "call_expression" and call_name(node) in syntax.template_parameters and \
                len(call_args(node)) == 1:
            edits.append((node.start_byte, node.end_byte, f"static_cast<{call_name(node)}>({text(call_args(node)[0])})"))
    return outermost(edits)
