"""Spelling passes that inline `__device__` helpers: one-line helpers (`{ return a + b; }`)
whose arguments are pure, and helpers whose body ends in its one `return`, inlined as a block
when the call is the whole value of a store or a declaration."""

from __future__ import annotations

from tree_sitter import Node

from regrapht.idioms.access import is_pure
from regrapht.idioms.spelling.common import Edits, local_names, outermost, type_of
from regrapht.idioms.spelling.macros import definitions
from regrapht.idioms.syntax import (
    KernelSyntax,
    call_args,
    call_name,
    identifiers_in,
    named_statements,
    text,
    unparen,
    walk,
)

# Types whose arithmetic stays in the type (no promotion to int that a return would undo).
SAME_TYPE_ARITHMETIC = frozenset({"float", "double", "int", "unsigned int", "unsigned", "long", "long long",
                                  "unsigned long", "unsigned long long"})


INTEGER_TYPES = frozenset({"int", "unsigned int", "unsigned", "long", "long long", "unsigned long",
                           "unsigned long long"})


def inline_helpers(syntax: KernelSyntax) -> Edits:
    """Calls of one-line helpers whose arguments are already of the parameters' types: no
    conversion at the call is lost by inlining (an `int add(int, int)` applied to floats
    truncates, and is left as a call). When the arithmetic stays in the return type (all
    parameters of it) the expression is inlined as it is; otherwise (an accessor
    `float at(const float *g, int x, int y, ...)`) it is converted to the return type as the
    `return` did: `((float)(...))`."""
    _, helpers = definitions(syntax)
    declared, elements = _declared_types(syntax)
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type == "call_expression" and call_name(node) in helpers:
            params, types, result, returned = helpers[call_name(node)]
            args = call_args(node)
            if len(args) != len(params) or not all(is_pure(a) for a in args):
                continue
            if result not in SAME_TYPE_ARITHMETIC or \
                    any(_argument_type(a, declared, elements) != t for a, t in zip(args, types, strict=True)):
                continue
            # a pointer passed by name stays a name: `g[i]`, a subscript of the parameter
            values = {p: text(a) if a.type == "identifier" and t.endswith("*") else f"({text(a)})"
                      for p, a, t in zip(params, args, types, strict=True)}
            inlined = _substituted(returned, values)
            same = all(t == result for t in types)
            edits.append((node.start_byte, node.end_byte, f"({inlined})" if same else f"(({result})({inlined}))"))
    return outermost(edits)


def _declared_types(syntax: KernelSyntax) -> tuple[dict[str, str], dict[str, str]]:
    """The types of the kernel's scalar parameters and locals, and the element types of its
    pointer parameters and pointer locals (`const float *row = x + r * n;`; `const` dropped)."""
    declared: dict[str, str] = {p.name: " ".join(w for w in p.base_type.split() if w != "const")
                                for p in syntax.params if not p.is_pointer}
    elements = {p.name: " ".join(w for w in p.base_type.split() if w != "const") for p in syntax.params if p.is_pointer}
    pointer_locals: dict[str, str | None] = {}
    for node in walk(syntax.body):
        if node.type == "declaration":
            for declarator in node.children_by_field_name("declarator"):
                target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" \
                    else declarator
                if target is not None and target.type == "identifier":
                    declared[text(target)] = type_of(node)
                elif target is not None and target.type == "pointer_declarator" and \
                        (pointer := target.child_by_field_name("declarator")) is not None and \
                        pointer.type == "identifier":
                    # one level of pointer; a name declared twice with two types is not known
                    known = pointer_locals.setdefault(text(pointer), type_of(node))
                    if known != type_of(node):
                        pointer_locals[text(pointer)] = None
    for local, element in pointer_locals.items():
        if element is not None and local not in elements:
            elements[local] = element
    return declared, elements


def _binds_without_conversion(parameter: Node, argument: Node, declared: dict[str, str],
                              elements: dict[str, str]) -> bool:
    """Whether passing `argument` to `parameter` converts nothing: a pointer parameter takes a
    pointer parameter of the kernel plus an offset (same element type); a scalar one a scalar
    of its own type, or an integer literal when it is `int`."""
    written = type_of(parameter)
    declarator = parameter.child_by_field_name("declarator")
    if declarator is not None and declarator.type == "pointer_declarator":
        base = unparen(argument)
        while base is not None and base.type == "binary_expression" and \
                text(base.child_by_field_name("operator")) in ("+", "-"):
            base = unparen(base.child_by_field_name("left"))
        return base is not None and base.type == "identifier" and elements.get(text(base)) == written
    node = unparen(argument)
    if node is not None and node.type == "number_literal":
        return written == "int" and text(node).isdigit()
    return _argument_type(argument, declared, elements) == written


def _argument_type(argument: Node, declared: dict[str, str], elements: dict[str, str]) -> str | None:
    """The type of a local or scalar parameter, or of an element `p[i]` of a pointer parameter."""
    node = unparen(argument)
    if node is not None and node.type == "identifier" and text(node) in elements:
        return elements[text(node)] + " *"  # a pointer parameter passed on
    if node is not None and node.type == "identifier":
        return declared.get(text(node))
    if node is not None and node.type == "subscript_expression":
        base = unparen(node.child_by_field_name("argument"))
        return elements.get(text(base)) if base is not None and base.type == "identifier" else None
    if node is not None and node.type == "number_literal" and text(node).isdigit() and int(text(node)) < 2**31:
        return "int"
    if node is not None and node.type == "binary_expression" and \
            text(node.child_by_field_name("operator")) in ("+", "-", "*"):
        # `x - 1`: operands of one integer type of int's rank or above stay in it
        left = _argument_type(node.child_by_field_name("left"), declared, elements)  # type: ignore[arg-type]
        right = _argument_type(node.child_by_field_name("right"), declared, elements)  # type: ignore[arg-type]
        if left == right and left in INTEGER_TYPES:
            return left
    return None


def _substituted(expression: Node, values: dict[str, str]) -> str:
    """The expression's text with its identifiers (not fields, not called names) replaced."""
    data = expression.text or b""
    edits = []
    for node in walk(expression):
        if node.type == "identifier" and text(node) in values:
            parent = node.parent
            if parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == node:
                continue
            edits.append((node.start_byte - expression.start_byte, node.end_byte - expression.start_byte,
                          values[text(node)]))
    for start, end, replacement in sorted(edits, reverse=True):
        data = data[:start] + replacement.encode() + data[end:]
    return data.decode()


BodyHelper = tuple[list[Node], str, list[Node], Node]  # parameters, return type, statements, returned expression


def _body_helpers(syntax: KernelSyntax) -> dict[str, BodyHelper]:
    """The file's non-template `__device__` functions that end in their only `return` and hold
    nothing but declarations, loops and expression statements before it."""
    root = syntax.root
    helpers: dict[str, BodyHelper] = {}
    for node in root.named_children:
        if node.type != "function_definition" or not any(text(c) == "__device__" for c in node.children) or \
                any(text(c) == "__global__" for c in node.children):
            continue
        declarator = node.child_by_field_name("declarator")
        if declarator is None or declarator.type != "function_declarator":
            continue  # pointer or reference returns: left alone
        name_node, params = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("parameters")
        statements = named_statements(node.child_by_field_name("body"))
        if name_node is None or params is None or not statements or statements[-1].type != "return_statement" or \
                not statements[-1].named_children:
            continue
        body = statements[:-1]
        if not any(s.type in ("for_statement", "while_statement") for s in body):
            continue  # one-line helpers are `inline_helpers`' (which also minds conversions)
        if any(n.type in ("return_statement", "goto_statement", "labeled_statement") for s in body for n in walk(s)) or \
                any(s.type not in ("declaration", "for_statement", "while_statement", "expression_statement", "comment")
                    for s in body) or \
                any(n.type == "storage_class_specifier" for s in body for n in walk(s)):  # `static` locals
            continue
        parameters = [p for p in params.named_children if p.type != "comment"]
        if not all(p.type == "parameter_declaration" and _parameter_name(p) is not None for p in parameters):
            continue
        helpers[text(name_node)] = (parameters, type_of(node), body, statements[-1].named_children[0])
    return helpers


def _parameter_name(parameter: Node) -> Node | None:
    """The name of a by-value parameter (`int n`, `const float *a`), None for references and arrays."""
    current = parameter.child_by_field_name("declarator")
    while current is not None and current.type == "pointer_declarator":
        current = current.child_by_field_name("declarator")
    return current if current is not None and current.type == "identifier" else None


def inline_bodies(syntax: KernelSyntax) -> Edits:
    helpers = _body_helpers(syntax)
    if not helpers:
        return []
    spelled = identifiers_in(syntax.body)
    declared = local_names(named_statements(syntax.body)) | {p.name for p in syntax.params}
    declared_types, elements = _declared_types(syntax)
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type != "call_expression" or call_name(node) not in helpers:
            continue
        statement, holder = node.parent, node.parent
        # the call is the whole value: `X = f(..);`, `X += f(..);` or `T v = f(..);`
        if holder is None or statement is None:
            continue
        if holder.type == "assignment_expression" and holder.child_by_field_name("right") == node:
            statement = holder.parent
            if statement is None or statement.type != "expression_statement" or \
                    not is_pure(holder.child_by_field_name("left")):
                continue
        elif holder.type == "init_declarator" and holder.child_by_field_name("value") == node:
            statement = holder.parent
            if statement is None or statement.type != "declaration" or \
                    len(statement.children_by_field_name("declarator")) != 1:
                continue
        else:
            continue
        if statement.parent is None or statement.parent.type not in ("compound_statement", "if_statement",
                                                                      "for_statement", "while_statement"):
            continue
        parameters, result, body, returned = helpers[call_name(node)]
        args = call_args(node)
        if len(args) != len(parameters) or not all(is_pure(a) for a in args) or \
                not all(_binds_without_conversion(p, a, declared_types, elements) for p, a in zip(parameters, args,
                                                                                                   strict=True)):
            continue
        inlined = _inlined(call_name(node), parameters, result, body, returned, args, spelled, declared)
        if inlined is None:
            continue
        prefix, value = inlined
        before = syntax.source[statement.start_byte : node.start_byte].decode()
        after = syntax.source[node.end_byte : statement.end_byte].decode()
        # a declaration's name must stay visible after it: no block around it (its names are fresh)
        block = ("", "") if statement.type == "declaration" else ("{\n", "\n}")
        edits.append((statement.start_byte, statement.end_byte, f"{block[0]}{prefix}{before}{value}{after}{block[1]}"))
    return outermost(edits)


def _inlined(name: str, parameters: list[Node], result: str, body: list[Node], returned: Node, args: list[Node],
             spelled: set[str], declared: set[str]) -> tuple[str, str] | None:
    """(statements that bind the parameters and run the body, the value the call stands for),
    or None when a name would collide. The value is the returned local itself when it has the
    result type, else `result_<name>`, a local of the result type (the return's conversion)."""
    own = {text(target) for target in map(_parameter_name, parameters) if target is not None} | local_names(body)
    renamed = {n: f"{n}_{name}" for n in own}
    used = set().union(*(identifiers_in(s) for s in body)) | identifiers_in(returned)
    if set(renamed.values()) & spelled or f"result_{name}" in spelled or (used - own) & declared:
        return None  # a helper's name would capture a kernel's, or a kernel local shadow what the helper reads
    lines = []
    for parameter, argument in zip(parameters, args, strict=True):
        target = _parameter_name(parameter)
        assert target is not None
        written = (parameter.text or b"").decode()
        start = target.start_byte - parameter.start_byte
        written = written[:start] + renamed[text(target)] + written[target.end_byte - parameter.start_byte :]
        lines.append(f"    {written} = ({text(argument)});")
    for statement in body:
        if statement.type != "comment":
            lines.append("    " + _substituted(statement, renamed))
    value = _substituted(returned, renamed)
    returned_local = text(unparen(returned))
    same_type = any(s.type == "declaration" and type_of(s) == result and returned_local in local_names([s])
                    for s in body)
    if same_type and returned_local in renamed:
        return "\n".join(lines) + "\n", value
    lines.append(f"    const {result} result_{name} = {value};")
    return "\n".join(lines) + "\n", f"result_{name}"
