"""Spellings that hide a plain loop from the recognisers, written the plain way.

`plain_spelling(source, kernel)` returns the source with, inside the kernel,

- comparisons the C++ grammar misreads as template arguments (`y < 0 || x >= n` as `y<...>`,
  `y` a variable) with the variable parenthesised: `(y) < 0 || x >= n`;
- object-like macros that stand for an expression (`#define GID (blockIdx.x * blockDim.x +
  threadIdx.x)`) expanded where the kernel uses them as a name (integer ones are constants
  already);
- function-like macros expanded (`#define AT(p, i) ((p)[(i)])`: `AT(in, i)` -> `((in)[(i)])`),
  as the preprocessor would (each parameter token replaced by its argument);
- a parenthesised variable before `+ - * &` (`((row) + (col) * (ld))`, as macros expand) written
  without its parentheses: C++ reads an addition there, tree-sitter a cast (`cuda/extract.py:
  ambiguous_cast`);
- calls of one-line `__device__` helpers (`{ return a + b; }`) inlined, when every argument is
  pure (evaluating it twice or not at all changes nothing);
- functional casts to a template parameter (`T(0)`) written as `static_cast<T>(0)`;
- `do { BODY } while (i < n);` written `while (i < n) { BODY }`: the same for every range that
  is not empty (an empty one runs the original's body once, out of its bounds);
- `int i = n; do { --i; BODY } while (i > 0);` (a signed counter stepped down first, unused
  after the loop) written `for (int i = (n) - 1; i >= 0; --i) { BODY }`: the same for every
  start of 1 or more (any other runs the original's body once, below the range);
- one counter reused by several loops of a block (`int j = 1; while (j < d) { ..; ++j; } j = 0;
  while (j < d) { ..; ++j; } for (j = 0; j < d; ++j) ..`) given one counter per loop: when every
  use of it lies in those loops, each starting it afresh (`j = e;` just before a while, or the
  for's `j = e`), nothing reads the value a loop leaves and nothing takes its address, each loop
  declares its own (`for (int j = e; ...)`, a while stepped last becoming a for) and the
  block's declaration goes;
- a counted `int k = 0; ... while (k < K) { BODY; k++; }` written `for (int k = 0; k < K; k++)
  { BODY }` when that is the same loop: the counter is declared in the same block, changed only
  by the body's last statement and not used after the loop, nothing between the declaration and
  the loop touches it or what its start reads, the condition and the start read no memory, and
  the body has no `continue` (which would skip the original's increment);
- a local pointer into a parameter (`const float *plane = in + (size_t)c * H * W;`, or
  `&in[...]`) that is never re-pointed and only subscripted, each `plane[i]` written
  `in[(long long)(c * H * W) + (i)]`: the same element (the offset's names are never assigned, so
  it has one value), the offset added in 64 bits as the pointer arithmetic did;
- a counter that counts down to its bound (`for (int left = n; left > 0; --left)`) counting up
  instead (`for (int walk_up = 0; walk_up < (n) - (0); ++walk_up) { const int left = (n) -
  walk_up; ...`): the same values in the same order;
- a call of a `__device__` function whose body is declarations, loops and expression
  statements ending in its one `return` (`dot(a_row, b_col, K, ldb)`), when the call is the whole
  value of a store or of a declaration, inlined as a block: each parameter a local initialised
  with its argument (C passes by value), every name of the helper suffixed so that nothing
  collides, the store taking the returned value (the same program, evaluated in the same order);
- a read-only-cache load `__ldg(&X)` written `X` (the same value: `__ldg` is only defined for
  memory the kernel does not write);
- a dereference of a pointer plus an offset `*(p + e)` written `p[e]` (the same by definition),
  for a pointer named by an identifier (what `pointer_walks` leaves behind);
- a global thread index the kernel never names (`int t = threadIdx.x; if (blockIdx.x *
  blockDim.x + t < n) y[(long long)(blockIdx.x * blockDim.x) + (t)] = ..`, as block-local
  pointers `yb = y + blockIdx.x * blockDim.x` indexed by `t` are written above) named once,
  `const unsigned int global_x = blockIdx.x * blockDim.x + threadIdx.x;`, and used for each
  expression of that value: when nothing else reads the axis's block or thread index (or the
  local), and each such expression is a whole subscript (any integer type holds the same
  index; one at least) or a guard's `E < bound` with E of the coordinate's own type
  (`blockIdx.x * blockDim.x + t`, t `int` or `unsigned`: unsigned arithmetic, as the
  coordinate's).

Unchanged when none applies; each step only rewrites what it fully understands.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.extract import ambiguous_cast, declarator_name
from regrapht.cuda.parse import make_parser
from regrapht.idioms.access import is_pure
from regrapht.idioms.syntax import (
    KernelSyntax,
    Symbols,
    call_args,
    call_name,
    condition_of,
    identifiers_in,
    kernel_syntax,
    loop_counter,
    named_statements,
    text,
    unparen,
    updated_target,
    walk,
)

UP = "walk_up"  # the counting-up counter (renamed when the kernel uses the name)


def plain_spelling(source: str, kernel: str) -> str:
    syntax = None  # parsed again only after a step changed the text (a parse is the costly part)
    for step in (_comparisons, _expand_object_macros, _expand_macros, _variable_parentheses, _inline_helpers,
                 _inline_bodies, _functional_casts, _do_while, _do_count_down, _reused_counters, _counted_while,
                 _count_up, _plain_loads,
                 _deref_subscripts, _pointer_offsets, _named_global_index):
        if syntax is None:
            syntax = kernel_syntax(source, kernel)
            if syntax is None:
                return source
        edits = step(syntax)
        if edits:
            data = syntax.source
            for start, end, replacement in sorted(edits, reverse=True):
                data = data[:start] + replacement.encode() + data[end:]
            source = data.decode()
            syntax = None
    return source


Edits = list[tuple[int, int, str]]


def _outermost(edits: Edits) -> Edits:
    """The edits not nested in another (inner ones are redone on the next pass, if any)."""
    kept: Edits = []
    for edit in sorted(edits, key=lambda e: (e[0], -e[1])):
        if kept and edit[0] < kept[-1][1]:
            continue
        kept.append(edit)
    return kept


Helper = tuple[list[str], list[str], str, Node]  # parameter names and types, return type, returned expression
# Types whose arithmetic stays in the type (no promotion to int that a return would undo).
SAME_TYPE_ARITHMETIC = frozenset({"float", "double", "int", "unsigned int", "unsigned", "long", "long long",
                                  "unsigned long", "unsigned long long"})


INTEGER_TYPES = frozenset({"int", "unsigned int", "unsigned", "long", "long long", "unsigned long",
                           "unsigned long long"})


def _type_of(node: Node) -> str:
    return " ".join(w for w in text(node.child_by_field_name("type")).split() if w not in ("const", "volatile"))


def _definitions(syntax: KernelSyntax) -> tuple[dict[str, tuple[list[str], str]], dict[str, Helper]]:
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
                types.append(_type_of(param) + (" *" if pointer else ""))
            else:
                if name_node is not None and is_pure(body[0].named_children[0]):
                    helpers[text(name_node)] = (names, types, _type_of(node), body[0].named_children[0])
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


def _expand_object_macros(syntax: KernelSyntax) -> Edits:
    macros = {name: value for name, value in _object_macros(syntax).items() if name not in syntax.constants}
    return [(node.start_byte, node.end_byte, macros[text(node)]) for node in walk(syntax.body)
            if node.type == "identifier" and text(node) in macros]


def _misread_comparisons(function: Node) -> Edits:
    """`x < 0 || y < 0 || x >= nx` is ambiguous to the C++ grammar, which may read `y < 0 || x >`
    as the template arguments of a `y<...>`. A variable is no template: each variable that names
    such a "template" is parenthesised, `(y) < 0 || ...`, the same expression read as the
    comparisons it is."""
    variables = {text(n) for n in walk(function) if n.type == "identifier" and _declares(n)}
    edits: Edits = []
    for node in walk(function):
        name = node.child_by_field_name("name") if node.type == "template_function" else None
        if name is not None and name.type == "identifier" and text(name) in variables:
            edits.append((name.start_byte, name.end_byte, f"({text(name)})"))
    return edits


def _comparisons(syntax: KernelSyntax) -> Edits:
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


def _expand_macros(syntax: KernelSyntax) -> Edits:
    macros, _ = _definitions(syntax)
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
    return _outermost(edits)


def _replacer(values: dict[str, str]) -> Callable[[re.Match[str]], str]:
    return lambda match: values.get(match.group(0), match.group(0))


def _variable_parentheses(syntax: KernelSyntax) -> Edits:
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


def _inline_helpers(syntax: KernelSyntax) -> Edits:
    """Calls of one-line helpers whose arguments are already of the parameters' types: no
    conversion at the call is lost by inlining (an `int add(int, int)` applied to floats
    truncates, and is left as a call). When the arithmetic stays in the return type (all
    parameters of it) the expression is inlined as it is; otherwise (an accessor
    `float at(const float *g, int x, int y, ...)`) it is converted to the return type as the
    `return` did: `((float)(...))`."""
    _, helpers = _definitions(syntax)
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
    return _outermost(edits)


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
                    declared[text(target)] = _type_of(node)
                elif target is not None and target.type == "pointer_declarator" and \
                        (pointer := target.child_by_field_name("declarator")) is not None and \
                        pointer.type == "identifier":
                    # one level of pointer; a name declared twice with two types is not known
                    known = pointer_locals.setdefault(text(pointer), _type_of(node))
                    if known != _type_of(node):
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
    written = _type_of(parameter)
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


def _pointer_offsets(syntax: KernelSyntax) -> Edits:
    """Local pointers `T *p = P + offset` / `&P[offset]` into a pointer parameter P, subscripted
    as `p[i]` only and never re-pointed, with every name of the offset never assigned in the
    kernel: each `p[i]` as `P[(long long)(offset) + (i)]`, the declaration dropped."""
    pointers = syntax.pointers
    assigned = set()
    declared: dict[str, int] = {}
    for node in walk(syntax.function):
        if node.type in ("assignment_expression", "update_expression"):
            target = updated_target(node)
            if target is not None and target.type == "identifier":
                assigned.add(text(target))
        elif node.type == "identifier" and _declares(node):
            declared[text(node)] = declared.get(text(node), 0) + 1
    edits: Edits = []
    for statement in walk(syntax.body):
        if statement.type != "declaration":
            continue
        declarators = statement.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            continue
        pointer = declarators[0].child_by_field_name("declarator")
        value = unparen(declarators[0].child_by_field_name("value"))
        name_node = pointer.child_by_field_name("declarator") if pointer is not None and \
            pointer.type == "pointer_declarator" else None
        if name_node is None or name_node.type != "identifier" or value is None:
            continue
        name = text(name_node)
        split = _parameter_offset(value, pointers)
        if split is None or declared.get(name, 0) > 1 or name in assigned:
            continue  # a name declared twice (shadowed) or re-pointed is left as it is
        base, offset = split
        if identifiers_in(offset) & assigned or not is_pure(offset):
            continue
        replaced: Edits = []
        for use in walk(syntax.body):
            if use.type != "identifier" or text(use) != name or use == name_node:
                continue
            subscript = use.parent
            index = _only_index(subscript) if subscript is not None and subscript.type == "subscript_expression" \
                and subscript.child_by_field_name("argument") == use else None
            if subscript is None or index is None:
                replaced = []
                break  # used otherwise (`p + 1`, `*p`, passed on): left as it is
            replaced.append((subscript.start_byte, subscript.end_byte,
                             f"{base}[(long long)({text(offset)}) + ({text(index)})]"))
        if replaced:
            edits.extend(replaced)
            edits.append((statement.start_byte, statement.end_byte, ""))
    return _outermost(edits)


def _declares(identifier: Node) -> bool:
    """Whether `identifier` is the name a declaration or a parameter declares."""
    child, parent = identifier, identifier.parent
    while parent is not None and parent.type in ("pointer_declarator", "array_declarator", "reference_declarator",
                                                 "init_declarator") and parent.child_by_field_name("declarator") == child:
        child, parent = parent, parent.parent
    return parent is not None and parent.type in ("declaration", "parameter_declaration") and \
        child in parent.children_by_field_name("declarator")


def _only_index(subscript: Node) -> Node | None:
    index = subscript.child_by_field_name("indices") or subscript.child_by_field_name("index")
    if index is not None and index.type == "subscript_argument_list":
        named = [c for c in index.named_children if c.type != "comment"]
        return named[0] if len(named) == 1 else None
    return index


def _parameter_offset(value: Node, pointers: Mapping[str, object]) -> tuple[str, Node] | None:
    """(P, offset) for `P + offset`, `offset + P` or `&P[offset]` with P a pointer parameter."""
    if value.type == "binary_expression" and text(value.child_by_field_name("operator")) == "+":
        left, right = value.child_by_field_name("left"), value.child_by_field_name("right")
        for base, offset in ((left, right), (right, left)):
            base = unparen(base)
            if base is not None and base.type == "identifier" and text(base) in pointers and offset is not None:
                return text(base), offset
        return None
    if value.type == "pointer_expression" and text(value.child_by_field_name("operator")) == "&":
        inner = unparen(value.child_by_field_name("argument"))
        if inner is not None and inner.type == "subscript_expression":
            base = unparen(inner.child_by_field_name("argument"))
            index = _only_index(inner)
            if base is not None and base.type == "identifier" and text(base) in pointers and index is not None:
                return text(base), index
    return None


def _functional_casts(syntax: KernelSyntax) -> Edits:
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type == "call_expression" and call_name(node) in syntax.template_parameters and \
                len(call_args(node)) == 1:
            edits.append((node.start_byte, node.end_byte, f"static_cast<{call_name(node)}>({text(call_args(node)[0])})"))
    return _outermost(edits)


def _do_while(syntax: KernelSyntax) -> Edits:
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type != "do_statement":
            continue
        condition = unparen(condition_of(node) or node.child_by_field_name("condition"))
        body = node.child_by_field_name("body")
        if condition is None or body is None or body.type != "compound_statement" or \
                condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != "<":
            continue
        if any(n.type in ("continue_statement", "break_statement") for n in walk(body)):
            continue
        edits.append((node.start_byte, node.end_byte, f"while ({text(condition)}) {text(body)}"))
    return _outermost(edits)


_INTEGER_WORDS = frozenset({"int", "unsigned", "signed", "long", "short", "size_t", "const"})


def _unit_step(statement: Node, counter: str, sign: str) -> bool:
    """Whether `statement` steps the counter `k` by one in the direction `sign` ("+" or "-"):
    `k++;`/`++k;`, `k += 1;` or `k = k + 1;` (either order), and for "-" `k--;`/`--k;`,
    `k -= 1;` or `k = k - 1;`."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return False
    step = unparen(statement.named_children[0])
    if step is None:
        return False
    if step.type == "update_expression":
        return text(step.child_by_field_name("operator")) == sign * 2 and \
            text(unparen(step.child_by_field_name("argument"))) == counter
    if step.type != "assignment_expression" or text(unparen(step.child_by_field_name("left"))) != counter:
        return False
    operator, right = text(step.child_by_field_name("operator")), unparen(step.child_by_field_name("right"))
    if operator == sign + "=":
        return text(right) == "1"
    if operator != "=" or right is None or right.type != "binary_expression" or \
            text(right.child_by_field_name("operator")) != sign:
        return False
    operands = text(unparen(right.child_by_field_name("left"))), text(unparen(right.child_by_field_name("right")))
    # `1 + k` is a step up; `1 - k` is not a step down
    return set(operands) == {counter, "1"} if sign == "+" else operands == (counter, "1")


def _changes(node: Node, names: set[str]) -> bool:
    """Whether `node` assigns, increments or takes the address of one of `names`."""
    for current in walk(node):
        address = current.type == "pointer_expression" and text(current.child_by_field_name("operator")) == "&"
        field = "left" if current.type == "assignment_expression" else "argument"
        if current.type not in ("assignment_expression", "update_expression") and not address:
            continue
        target = unparen(current.child_by_field_name(field))
        # `y[k] = ..` stores through k, it does not change it; `&k` lets anything change it
        if target is not None and text(target) in names:
            return True
    return False


def _reads_memory(node: Node) -> bool:
    return any(n.type in ("subscript_expression", "pointer_expression", "field_expression", "call_expression")
               for n in walk(node)) or not is_pure(node)


_SIGNED_WORDS = frozenset({"int", "signed", "long", "short"})


def _do_count_down(syntax: KernelSyntax) -> Edits:
    """`T i = S; ... do { --i; BODY } while (i > 0);` -> `for (T i = (S) - 1; i >= 0; --i) { BODY }`."""
    edits: Edits = []
    for block in walk(syntax.body):
        if block.type != "compound_statement":
            continue
        statements = named_statements(block)
        for position, loop in enumerate(statements):
            if loop.type != "do_statement":
                continue
            condition = unparen(condition_of(loop) or loop.child_by_field_name("condition"))
            body = loop.child_by_field_name("body")
            if condition is None or body is None or body.type != "compound_statement" or \
                    condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != ">" or \
                    text(unparen(condition.child_by_field_name("right"))) != "0":
                continue
            counter_node = unparen(condition.child_by_field_name("left"))
            inner = named_statements(body)
            if counter_node is None or counter_node.type != "identifier" or not inner:
                continue
            counter = text(counter_node)
            # stepped down first and nowhere else; no `continue`/`break` (kept simple: both
            # would leave the counter at another value); unused after the loop
            if not _unit_step(inner[0], counter, "-") or any(_changes(s, {counter}) for s in inner[1:]) or \
                    counter in _local_names(inner) or \
                    any(n.type in ("continue_statement", "break_statement") for n in walk(body)) or \
                    any(counter in identifiers_in(s) for s in statements[position + 1 :]):
                continue
            found = _counter_declaration(statements[:position], counter)
            if found is None:
                continue
            declaration, type_text, start = found
            if not set(type_text.split()) <= _SIGNED_WORDS:
                continue  # an unsigned counter is never below zero: `i >= 0` would not end the loop
            between = statements[statements.index(declaration) + 1 : position]
            if _reads_memory(start) or any(_changes(s, identifiers_in(start) | {counter}) or
                                           counter in identifiers_in(s) or not is_pure_statement(s)
                                           for s in between):
                continue
            kept = "".join(text(s) + "\n" for s in inner[1:])
            edits.append((declaration.start_byte, declaration.end_byte, ""))
            edits.append((loop.start_byte, loop.end_byte,
                          f"for ({type_text} {counter} = ({text(start)}) - 1; {counter} >= 0; --{counter}) {{\n{kept}}}"))
    return _outermost(edits)


def _reused_counters(syntax: KernelSyntax) -> Edits:
    """One declared counter per loop for a counter the loops of one block share (see the module
    docstring); every edit is a small range of its own, so the edits of two counters never nest."""
    function = syntax.function
    if any(n.type in ("goto_statement", "labeled_statement", "reference_declarator", "lambda_expression")
           for n in walk(function)):
        return []
    declared: dict[str, int] = {}
    for node in walk(function):
        if node.type == "identifier" and _declares(node):
            declared[text(node)] = declared.get(text(node), 0) + 1
    edits: Edits = []
    for block in walk(syntax.body):
        if block.type != "compound_statement":
            continue
        statements = named_statements(block)
        for position, declaration in enumerate(statements):
            found = _plain_counter(declaration)
            if found is None or declared.get(found[0]) != 1:
                continue
            counter, type_text, start = found
            later = statements[position + 1 :]
            uses = [n for n in walk(function) if n.type == "identifier" and text(n) == counter and not _declares(n)]
            if not later or any(not later[0].start_byte <= n.start_byte < later[-1].end_byte for n in uses) or \
                    any(_address_taken(n) for n in uses):
                continue
            own = _own_counters(later, counter, type_text, start)
            if own is None or any(s < e2 and s2 < e for s, e, _ in own for s2, e2, _ in edits):
                continue
            edits.extend(own)
            edits.append((declaration.start_byte, declaration.end_byte, ""))
    return edits


def _plain_counter(statement: Node) -> tuple[str, str, Node | None] | None:
    """(name, integer type, start or None) of `T i;` / `T i = start;` (one declarator, no qualifier
    or storage class)."""
    if statement.type != "declaration" or \
            any(c.type in ("type_qualifier", "storage_class_specifier", "attribute_specifier") for c in statement.children):
        return None
    declarators = statement.children_by_field_name("declarator")
    type_text = " ".join(text(statement.child_by_field_name("type")).split())
    if len(declarators) != 1 or not set(type_text.split()) <= _INTEGER_WORDS - {"const"}:
        return None
    declarator = declarators[0]
    if declarator.type == "identifier":
        return text(declarator), type_text, None
    target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else None
    if target is None or target.type != "identifier":
        return None
    return text(target), type_text, declarator.child_by_field_name("value")


def _address_taken(use: Node) -> bool:
    parent = use.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent is not None and parent.type == "pointer_expression" and \
        text(parent.child_by_field_name("operator")) == "&"


def _own_counters(later: list[Node], counter: str, type_text: str, start: Node | None) -> Edits | None:
    """The edits giving each loop among `later` (the statements after the counter's declaration)
    its own counter, or None unless every statement that mentions the counter is such a loop or
    the `counter = e;` that starts the while loop after it."""
    edits: Edits = []
    # the counter's value where it is known and unread: (its expression, the statement setting it)
    pending: tuple[Node, Node | None] | None = (start, None) if start is not None and not _reads_memory(start) \
        else None
    if start is not None and not is_pure(start):
        return None  # dropping the declaration would drop its effect
    loops = 0
    for statement in later:
        if counter not in identifiers_in(statement):
            if pending is not None and (not is_pure_statement(statement) or
                                        _changes(statement, identifiers_in(pending[0])) or
                                        _local_names([statement]) & identifiers_in(pending[0])):
                pending = None  # the start would not read the same values after this statement
            continue
        if pending is not None and pending[1] is not None and statement.type != "while_statement":
            return None  # an assigned start no while loop takes (its statement would be left)
        assigned = _assigned_start(statement, counter)
        if assigned is not None:
            if _reads_memory(assigned):
                return None
            pending = (assigned, statement)
            continue
        if statement.type == "for_statement":
            init = unparen(statement.child_by_field_name("initializer"))
            value = init.child_by_field_name("right") if init is not None and \
                init.type == "assignment_expression" and text(init.child_by_field_name("operator")) == "=" and \
                text(unparen(init.child_by_field_name("left"))) == counter else None
            if init is None or value is None or counter in identifiers_in(value):
                return None  # the loop reads the value left before it
            edits.append((init.start_byte, init.end_byte, f"{type_text} {counter} = {text(value)}"))
            pending = None
            loops += 1
            continue
        if statement.type != "while_statement" or pending is None:
            return None
        condition, body = condition_of(statement), statement.child_by_field_name("body")
        inner = named_statements(body) if body is not None and body.type == "compound_statement" else []
        if condition is None or body is None or not inner or not _unit_step(inner[-1], counter, "+") or \
                not is_pure(condition) or any(n.type == "continue_statement" for n in walk(body)):
            return None
        value, setter = pending
        if setter is not None:
            edits.append((setter.start_byte, setter.end_byte, ""))
        edits.append((statement.start_byte, body.start_byte,
                      f"for ({type_text} {counter} = {text(value)}; {text(condition)}; "
                      f"{text(inner[-1].named_children[0])}) "))
        edits.append((inner[-1].start_byte, inner[-1].end_byte, ""))
        pending = None
        loops += 1
    if pending is not None and pending[1] is not None:
        return None  # a start assigned and never looped over
    return edits if loops else None


def _assigned_start(statement: Node, counter: str) -> Node | None:
    """e of the statement `counter = e;` where e does not read the counter."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    assignment = unparen(statement.named_children[0])
    if assignment is None or assignment.type != "assignment_expression" or \
            text(assignment.child_by_field_name("operator")) != "=" or \
            text(unparen(assignment.child_by_field_name("left"))) != counter:
        return None
    value = assignment.child_by_field_name("right")
    return value if value is not None and counter not in identifiers_in(value) and is_pure(value) else None


def _counted_while(syntax: KernelSyntax) -> Edits:
    edits: Edits = []
    for block in walk(syntax.body):
        if block.type != "compound_statement":
            continue
        statements = named_statements(block)
        for position, loop in enumerate(statements):
            if loop.type != "while_statement":
                continue
            condition, body = condition_of(loop), loop.child_by_field_name("body")
            if condition is None or body is None or body.type != "compound_statement" or \
                    condition.type != "binary_expression" or \
                    text(condition.child_by_field_name("operator")) not in ("<", "<="):
                continue
            counter_node = unparen(condition.child_by_field_name("left"))
            bound = condition.child_by_field_name("right")
            if counter_node is None or counter_node.type != "identifier" or bound is None:
                continue
            counter = text(counter_node)
            inner = named_statements(body)
            if not inner or not _unit_step(inner[-1], counter, "+") or _reads_memory(bound) or \
                    counter in identifiers_in(bound) or any(_changes(s, {counter}) for s in inner[:-1]) or \
                    any(n.type == "continue_statement" for n in walk(body)):
                continue
            if any(counter in identifiers_in(s) for s in statements[position + 1 :]):
                continue  # used after the loop: a for would end its scope
            found = _counter_declaration(statements[:position], counter)
            if found is None:
                continue
            declaration, type_text, start = found
            between = statements[statements.index(declaration) + 1 : position]
            if _reads_memory(start) or any(_changes(s, identifiers_in(start) | {counter}) or
                                           counter in identifiers_in(s) or not is_pure_statement(s)
                                           for s in between):
                continue
            step = text(inner[-1].named_children[0])
            kept = "".join(text(s) + "\n" for s in inner[:-1])
            edits.append((declaration.start_byte, declaration.end_byte, ""))
            edits.append((loop.start_byte, loop.end_byte,
                          f"for ({type_text} {counter} = {text(start)}; {text(condition)}; {step}) {{\n{kept}}}"))
    return _outermost(edits)


def _counter_declaration(before: list[Node], counter: str) -> tuple[Node, str, Node] | None:
    """The last statement of `before` declaring `counter` alone (`int k = 0;`): the statement,
    its integer type and the start value."""
    for statement in reversed(before):
        if counter not in identifiers_in(statement):
            continue
        declarators = statement.children_by_field_name("declarator") if statement.type == "declaration" else []
        type_text = " ".join(text(statement.child_by_field_name("type")).split()) if declarators else ""
        qualifiers = [text(c) for c in statement.children if c.type == "type_qualifier"]
        if len(declarators) != 1 or declarators[0].type != "init_declarator" or qualifiers or \
                not set(type_text.split()) <= _INTEGER_WORDS or \
                text(declarators[0].child_by_field_name("declarator")) != counter:
            return None
        start = declarators[0].child_by_field_name("value")
        return (statement, type_text, start) if start is not None else None
    return None


def is_pure_statement(statement: Node) -> bool:
    """A declaration whose initialisers only compute values (no call, store or update)."""
    return statement.type == "declaration" and is_pure(statement)


def _count_up(syntax: KernelSyntax) -> Edits:
    edits: Edits = []
    names = identifiers_in(syntax.body)
    up = UP
    while up in names:
        up += "_"
    for node in walk(syntax.body):
        if node.type != "for_statement":
            continue
        condition = unparen(node.child_by_field_name("condition"))
        update = unparen(node.child_by_field_name("update"))
        body = node.child_by_field_name("body")
        declared = loop_counter(node)
        if declared is None or condition is None or update is None or body is None or \
                body.type != "compound_statement":
            continue
        var, start, init = declared
        operator = text(condition.child_by_field_name("operator")) if condition.type == "binary_expression" else ""
        if operator not in (">", ">=") or text(unparen(condition.child_by_field_name("left"))) != var:
            continue
        decrement = (update.type == "update_expression" and text(update.child_by_field_name("operator")) == "--"
                     and text(update.child_by_field_name("argument")) == var)
        if not decrement or any(n.type in ("assignment_expression", "update_expression") and text(
                unparen(n.child_by_field_name("left") or n.child_by_field_name("argument"))) == var
                for n in walk(body)):
            continue
        type_text = " ".join(text(init.child_by_field_name("type")).split()) if init is not None else "int"
        low = text(condition.child_by_field_name("right"))
        # var takes start, start - 1, ..., down to low + 1 (`>`) or low (`>=`).
        count = f"({text(start)}) - ({low})" + (" + 1" if operator == ">=" else "")
        header = f"for ({type_text} {up} = 0; {up} < {count}; ++{up})"
        inner = text(body)[1:]
        edits.append((node.start_byte, node.end_byte,
                      f"{header} {{\n const {type_text} {var} = ({text(start)}) - {up};{inner}"))
    return _outermost(edits)


def _deref_subscripts(syntax: KernelSyntax) -> Edits:
    pointers = {p.name for p in syntax.params if p.is_pointer}
    for node in walk(syntax.body):
        if node.type == "declaration":
            for declarator in node.children_by_field_name("declarator"):
                target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" \
                    else declarator
                if target is not None and target.type == "pointer_declarator":
                    inner = target.child_by_field_name("declarator")
                    if inner is not None and inner.type == "identifier":
                        pointers.add(text(inner))
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type != "pointer_expression" or text(node.child_by_field_name("operator")) != "*":
            continue
        sum_node = unparen(node.child_by_field_name("argument"))
        if sum_node is None or sum_node.type != "binary_expression" or \
                text(sum_node.child_by_field_name("operator")) != "+":
            continue
        base = unparen(sum_node.child_by_field_name("left"))
        offset = sum_node.child_by_field_name("right")
        if base is None or offset is None or base.type != "identifier" or text(base) not in pointers:
            continue
        edits.append((node.start_byte, node.end_byte, f"{text(base)}[{text(offset)}]"))
    return _outermost(edits)


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
            continue  # one-line helpers are `_inline_helpers`' (which also minds conversions)
        if any(n.type in ("return_statement", "goto_statement", "labeled_statement") for s in body for n in walk(s)) or \
                any(s.type not in ("declaration", "for_statement", "while_statement", "expression_statement", "comment")
                    for s in body) or \
                any(n.type == "storage_class_specifier" for s in body for n in walk(s)):  # `static` locals
            continue
        parameters = [p for p in params.named_children if p.type != "comment"]
        if not all(p.type == "parameter_declaration" and _parameter_name(p) is not None for p in parameters):
            continue
        helpers[text(name_node)] = (parameters, _type_of(node), body, statements[-1].named_children[0])
    return helpers


def _parameter_name(parameter: Node) -> Node | None:
    """The name of a by-value parameter (`int n`, `const float *a`), None for references and arrays."""
    current = parameter.child_by_field_name("declarator")
    while current is not None and current.type == "pointer_declarator":
        current = current.child_by_field_name("declarator")
    return current if current is not None and current.type == "identifier" else None


def _local_names(statements: list[Node]) -> set[str]:
    names: set[str] = set()
    for statement in statements:
        for node in walk(statement):
            if node.type == "init_declarator" or (node.type in ("pointer_declarator",) and
                                                   node.parent is not None and node.parent.type == "declaration"):
                target = node.child_by_field_name("declarator")
                while target is not None and target.type == "pointer_declarator":
                    target = target.child_by_field_name("declarator")
                if target is not None and target.type == "identifier":
                    names.add(text(target))
            elif node.type == "declaration":
                for declarator in node.children_by_field_name("declarator"):
                    if declarator.type == "identifier":
                        names.add(text(declarator))
    return names


def _inline_bodies(syntax: KernelSyntax) -> Edits:
    helpers = _body_helpers(syntax)
    if not helpers:
        return []
    spelled = identifiers_in(syntax.body)
    declared = _local_names(named_statements(syntax.body)) | {p.name for p in syntax.params}
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
    return _outermost(edits)


def _inlined(name: str, parameters: list[Node], result: str, body: list[Node], returned: Node, args: list[Node],
             spelled: set[str], declared: set[str]) -> tuple[str, str] | None:
    """(statements that bind the parameters and run the body, the value the call stands for),
    or None when a name would collide. The value is the returned local itself when it has the
    result type, else `result_<name>`, a local of the result type (the return's conversion)."""
    own = {text(target) for target in map(_parameter_name, parameters) if target is not None} | _local_names(body)
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
    same_type = any(s.type == "declaration" and _type_of(s) == result and returned_local in _local_names([s])
                    for s in body)
    if same_type and returned_local in renamed:
        return "\n".join(lines) + "\n", value
    lines.append(f"    const {result} result_{name} = {value};")
    return "\n".join(lines) + "\n", f"result_{name}"


def _plain_loads(syntax: KernelSyntax) -> Edits:
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type != "call_expression" or call_name(node) != "__ldg" or len(call_args(node)) != 1:
            continue
        address = unparen(call_args(node)[0])
        if address is None or address.type != "pointer_expression" or \
                text(address.child_by_field_name("operator")) != "&":
            continue
        target = unparen(address.child_by_field_name("argument"))
        if target is not None and target.type == "subscript_expression":
            edits.append((node.start_byte, node.end_byte, f"({text(target)})"))
    return _outermost(edits)


_THREAD_LOCAL_TYPES = frozenset({"int", "unsigned", "unsigned int"})  # int + unsigned int is unsigned int


def _named_global_index(syntax: KernelSyntax) -> Edits:
    names = identifiers_in(syntax.function)
    symbols = Symbols(syntax.constants)
    for node in walk(syntax.body):
        value = node.child_by_field_name("value") if node.type == "init_declarator" else \
            node.child_by_field_name("right") if node.type == "assignment_expression" else None
        if value is not None and any(symbols.poly(value) == _global_index(axis) for axis in "xyz"):
            return []  # the kernel names it already (a coordinate, a grid-stride loop's start)
    declared_once: dict[str, int] = {}
    for node in walk(syntax.function):
        if node.type == "identifier" and _declares(node):
            declared_once[text(node)] = declared_once.get(text(node), 0) + 1
    inserted: list[str] = []
    edits: Edits = []
    for axis in "xyz":
        found = _global_index_edits(syntax, axis, declared_once)
        if found is None:
            continue
        name = f"global_{axis}"
        while name in names:
            name += "_"
        uses, dropped = found
        edits.extend((start, end, name) for start, end in uses)
        edits.extend((d.start_byte, d.end_byte, "") for d in dropped)
        inserted.append(f"const unsigned int {name} = blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis};")
    if not inserted:
        return []
    opening = syntax.body.children[0]
    edits.append((opening.end_byte, opening.end_byte, "\n    " + "\n    ".join(inserted)))
    return edits


def _global_index(axis: str) -> Poly:
    return Poly.of({(f"blockDim.{axis}", f"blockIdx.{axis}"): 1, (f"threadIdx.{axis}",): 1})


def _global_index_edits(syntax: KernelSyntax, axis: str,
                        declared: dict[str, int]) -> tuple[list[tuple[int, int]], list[Node]] | None:
    """(the ranges of the expressions equal to the global index along `axis`, the declarations of
    the thread-index locals they used), or None unless that is every use of the axis's block and
    thread index."""
    thread = f"threadIdx.{axis}"
    symbols = Symbols(syntax.constants)
    locals_: dict[str, Node] = {}  # `int t = threadIdx.x;` at the top, never changed
    for statement in syntax.statements():
        found = _plain_counter(statement)
        if found is not None and found[2] is not None and symbols.poly(found[2]) == Poly.atom(thread) and \
                found[1] in _THREAD_LOCAL_TYPES and declared.get(found[0]) == 1 and \
                not _changes(syntax.body, {found[0]}):
            locals_[found[0]] = statement
            symbols.env[found[0]] = Poly.atom(thread)
    target = _global_index(axis)
    uses: list[tuple[int, int]] = []
    indices = 0
    for node in walk(syntax.body):
        if node.type not in ("binary_expression", "cast_expression") or \
                any(start <= node.start_byte < end for start, end in uses) or symbols.poly(node) != target:
            continue
        if not is_pure(node) or not (_whole_index(node) or _unsigned_global(node, axis, set(locals_)) and
                                     _bounded(node)):
            return None
        uses.append((node.start_byte, node.end_byte))
        indices += _whole_index(node)
    if not indices:
        return None  # no point's element is indexed by it
    for node in walk(syntax.body):
        inside = any(start <= node.start_byte < end for start, end in uses) or \
            any(d.start_byte <= node.start_byte < d.end_byte for d in locals_.values())
        if inside:
            continue
        if node.type == "identifier" and text(node) in locals_:
            return None
        if node.type == "field_expression" and text(node.child_by_field_name("field")) == axis and \
                text(node.child_by_field_name("argument")) in ("threadIdx", "blockIdx"):
            return None
    return uses, list(locals_.values())


def _whole_index(node: Node) -> bool:
    """Whether `node` (parentheses aside) is the one index of a subscript."""
    child, parent = node, node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        child, parent = parent, parent.parent
    if parent is not None and parent.type == "subscript_argument_list":
        return len([c for c in parent.named_children if c.type != "comment"]) == 1
    return parent is not None and parent.type == "subscript_expression" and \
        parent.child_by_field_name("argument") != child


def _bounded(node: Node) -> bool:
    """Whether `node` (parentheses aside) is the left side of a `<` (a guard's bound test)."""
    child, parent = node, node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        child, parent = parent, parent.parent
    return parent is not None and parent.type == "binary_expression" and \
        text(parent.child_by_field_name("operator")) == "<" and parent.child_by_field_name("left") == child


def _unsigned_global(node: Node, axis: str, locals_: set[str]) -> bool:
    """`blockIdx.x * blockDim.x + t` (either order, no cast), t `threadIdx.x` or an `int` or
    `unsigned` local of it: an `unsigned int`, as the coordinate."""
    node_ = unparen(node)
    if node_ is None or node_.type != "binary_expression" or text(node_.child_by_field_name("operator")) != "+":
        return False
    operands = [unparen(node_.child_by_field_name("left")), unparen(node_.child_by_field_name("right"))]
    thread = [o for o in operands if o is not None and (text(o) == f"threadIdx.{axis}" or
                                                         (o.type == "identifier" and text(o) in locals_))]
    block = [o for o in operands if o is not None and o.type == "binary_expression" and
             text(o.child_by_field_name("operator")) == "*" and
             sorted(text(unparen(o.child_by_field_name(f))) for f in ("left", "right")) ==
             [f"blockDim.{axis}", f"blockIdx.{axis}"]]
    return len(thread) == 1 and len(block) == 1
