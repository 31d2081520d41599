"""The walk behind `ranges.py`: a kernel's statements (and its `__device__` helpers') in order,
recording every access through a pointer parameter or an `extern __shared__` array as an `Access`
(buffer, kind, byte offset as parts, width, and the context it happens in: the path's conditions,
the enclosing loops, whether a witness can be sought there).

Owns the environment of the walk: locals defined once (`Defined`), only ever increased
(`Growing`), `for` loop variables (`LoopVar`, with whether iteration k is reached whenever the
condition holds at k), pointer aliases and casts (`Pointer`: bytes), helpers' parameters bound to
the caller's arguments; and which buffers escape (passed to a call the walk cannot see, a pointer
reassigned): `Walker.incomplete`. Template arguments of an instance's name: `template_values`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.intervals import (
    Defined,
    Env,
    Frame,
    Growing,
    LoopVar,
    Opaque,
    Pointer,
    parameter_names,
)
from regrapht.cuda.intexpr import int_literal, type_bytes
from regrapht.cuda.nodes import (
    CAST_NAMES,
    declarator_name,
    find_function_declarator,
    node_text,
    unparen,
    walk,
)

MAX_HELPER_DEPTH = 4
READ_CALLS = frozenset({"__ldg", "__ldcs", "__ldca", "__ldcg", "__ldlu", "__ldcv"})
PURE_CALLS = frozenset({"sizeof", "__syncthreads", "printf", "assert", "__syncwarp"})
SHARED_PREFIX = "__shared__:"


@dataclass(frozen=True)
class Loop:
    id: int
    witnessable: bool  # iteration k of it is reached whenever its condition holds at k


@dataclass(frozen=True)
class Ctx:
    env: Env
    conditions: tuple[tuple[Node, Env, bool], ...] = ()
    loops: tuple[Loop, ...] = ()
    witness_ok: bool = True
    depth: int = 0


@dataclass(frozen=True)
class Access:
    buffer: str
    kind: str  # read, write, readwrite, atomic
    parts: tuple[tuple[Node, Env, int], ...]
    width: int  # bytes the access moves
    ctx: Ctx
    line: int


def template_values(args: tuple[str, ...], names: tuple[str, ...]) -> tuple[dict[str, str], dict[str, int]]:
    """Template parameter name -> type, and -> integer, from an instance's arguments
    (`float`, `256`, `(unsigned int)256`, `true`, `256u`)."""
    types: dict[str, str] = {}
    values: dict[str, int] = {}
    for name, arg in zip(names, args, strict=False):
        value = template_integer(arg)
        if value is not None:
            values[name] = value
        else:
            types[name] = " ".join(arg.split())
    return types, values


def template_integer(text: str) -> int | None:
    compact = "".join(text.split())
    while compact.startswith("(") and ")" in compact and compact.index(")") < len(compact) - 1:
        compact = compact[compact.index(")") + 1:]  # `(unsigned int)256`
    if compact in ("true", "false"):
        return int(compact == "true")
    negative = compact.startswith("-")
    value = int_literal(compact.removeprefix("-"))
    return None if value is None else (-value if negative else value)


def split_template_args(name: str) -> tuple[str, ...]:
    if "<" not in name:
        return ()
    inner = name[name.index("<") + 1: name.rindex(">")]
    parts, depth, current = [], 0, ""
    for char in inner:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(char, 0)
        current += char
    if current.strip():
        parts.append(current.strip())
    return tuple(parts)


def device_functions(root: Node) -> dict[str, Node]:
    """`__device__` function definitions of the file by name (the first of each name)."""
    found: dict[str, Node] = {}
    for node in walk(root):
        if node.type != "function_definition":
            continue
        head = node_text(node)[: max(0, (node.child_by_field_name("body") or node).start_byte - node.start_byte)]
        if "__device__" not in head or "__global__" in head:
            continue
        name = declarator_name(find_function_declarator(node.child_by_field_name("declarator")))
        if name is not None:
            found.setdefault(node_text(name).split("::")[-1], node)
    return found


def _increments(body: Node) -> dict[str, list[Node | None]]:
    """Per plain name, the right-hand sides of its assignments when each is `x += e` or `x++`
    (None for `++`); a name assigned any other way is absent."""
    found: dict[str, list[Node | None]] = {}
    spoiled: set[str] = set()
    for node in walk(body):
        if node.type == "assignment_expression":
            target = unparen(node.child_by_field_name("left"))
            if target is None or target.type != "identifier":
                continue
            name = node_text(target)
            if node_text(node.child_by_field_name("operator")) == "+=":
                found.setdefault(name, []).append(node.child_by_field_name("right"))
            else:
                spoiled.add(name)
        elif node.type == "update_expression":
            target = unparen(node.child_by_field_name("argument"))
            if target is not None and target.type == "identifier":
                if "++" in node_text(node):
                    found.setdefault(node_text(target), []).append(None)
                else:
                    spoiled.add(node_text(target))
    return {name: steps for name, steps in found.items() if name not in spoiled}


def _assigned_names(body: Node) -> dict[str, int]:
    """How often each plain name is assigned (`x = `, `x += `, `x++`), a `for` header's update
    of its own variable not counted."""
    counts: dict[str, int] = {}
    for node in walk(body):
        target = None
        if node.type == "assignment_expression":
            target = unparen(node.child_by_field_name("left"))
        elif node.type == "update_expression":
            target = unparen(node.child_by_field_name("argument"))
        if target is None or target.type != "identifier":
            continue
        parent = node.parent
        if parent is not None and parent.type == "for_statement" and parent.child_by_field_name("update") == node:
            continue
        counts[node_text(target)] = counts.get(node_text(target), 0) + 1
    return counts


def element_of(type_text: str, types: Mapping[str, str]) -> tuple[str, int | None]:
    words = " ".join(w for w in type_text.replace("*", " ").split()
                     if w not in ("const", "volatile", "__restrict__", "__restrict", "restrict", "struct"))
    words = types.get(words, words)
    return words, type_bytes(words)


class Walker:
    def __init__(self, helpers: dict[str, Node]) -> None:
        self.helpers = helpers
        self.accesses: list[Access] = []
        self.incomplete: dict[str, list[str]] = {}
        self.loop_ids = 0
        self.assigned: dict[int, dict[str, int]] = {}
        self.increments: dict[int, dict[str, list[Node | None]]] = {}
        self.step_envs: dict[tuple[int, int], Env] = {}

    # -- bindings ------------------------------------------------------------------------------
    def escape(self, buffer: str, why: str) -> None:
        self.incomplete.setdefault(buffer, []).append(why)

    def pointer(self, node: Node | None, env: Env) -> Pointer | None:
        node = unparen(node)
        if node is None:
            return None
        if node.type == "identifier":
            binding = env.names.get(node_text(node))
            return binding if isinstance(binding, Pointer) else None
        if node.type == "cast_expression":
            inner = self.pointer(node.child_by_field_name("value"), env)
            return self._retyped(inner, node_text(node.child_by_field_name("type")), env)
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            arguments = node.child_by_field_name("arguments")
            if function is not None and function.type == "template_function" and arguments is not None \
                    and node_text(function.child_by_field_name("name")) in CAST_NAMES and arguments.named_children:
                inner = self.pointer(arguments.named_children[0], env)
                return self._retyped(inner, node_text(function.child_by_field_name("arguments")).strip("<>"), env)
            return None
        if node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) in ("+", "-"):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            sign = -1 if node_text(node.child_by_field_name("operator")) == "-" else 1
            base = self.pointer(left, env)
            offset = right
            if base is None and sign == 1:
                base, offset = self.pointer(right, env), left
            if base is None or offset is None:
                return None
            return Pointer(base.buffer, (*base.parts, (offset, env, sign * base.element_bytes)), base.element_bytes,
                           base.element_type)
        if node.type == "pointer_expression" and node_text(node.child_by_field_name("operator")) == "&":
            argument = unparen(node.child_by_field_name("argument"))
            if argument is not None and argument.type == "subscript_expression":
                base = self.pointer(argument.child_by_field_name("argument"), env)
                index = self._index(argument)
                if base is not None and index is not None:
                    return Pointer(base.buffer, (*base.parts, (index, env, base.element_bytes)), base.element_bytes,
                                   base.element_type)
        return None

    def _retyped(self, inner: Pointer | None, type_text: str, env: Env) -> Pointer | None:
        if inner is None or "*" not in type_text:
            return None
        element, size = element_of(type_text, env.frame.types)
        if size is None:
            self.escape(inner.buffer, f"cast to {type_text.strip()}, whose size is not known")
            return None
        return Pointer(inner.buffer, inner.parts, size, element)

    @staticmethod
    def _index(subscript: Node) -> Node | None:
        indices = subscript.child_by_field_name("indices")
        if indices is not None:
            named = [n for n in indices.named_children if n.type != "comment"]
            return named[0] if len(named) == 1 else None
        return subscript.child_by_field_name("index")

    def mentioned_pointers(self, node: Node, env: Env) -> set[str]:
        """Buffers whose pointer (not a value loaded through it) `node` may evaluate to."""
        found = set()
        stack = [node]
        while stack:
            inner = stack.pop()
            if inner.type == "identifier":
                binding = env.names.get(node_text(inner))
                if isinstance(binding, Pointer):
                    found.add(binding.buffer)
            elif inner.type in ("subscript_expression", "call_expression") or inner.type in (
                    "pointer_expression", "field_expression") and node_text(inner.child_by_field_name("operator")) in (
                    "*", "->", "."):
                continue
            else:
                stack.extend(inner.named_children)
        return found

    # -- statements ----------------------------------------------------------------------------
    def function(self, function: Node, ctx: Ctx) -> None:
        body = function.child_by_field_name("body")
        if body is not None:
            self.assigned[id(ctx.env.frame)] = _assigned_names(body)
            self.increments[id(ctx.env.frame)] = _increments(body)
            self.statement(body, ctx)

    def statement(self, node: Node, ctx: Ctx) -> None:
        kind = node.type
        if kind == "compound_statement":
            self.block(list(node.named_children), Ctx(ctx.env.child(), ctx.conditions, ctx.loops, ctx.witness_ok,
                                                        ctx.depth))
        elif kind == "declaration":
            self.declaration(node, ctx)
        elif kind == "if_statement":
            condition = node.child_by_field_name("condition")
            value = _condition_value(condition)
            if value is not None:
                self.expression(value, ctx)
            consequence = node.child_by_field_name("consequence")
            alternative = node.child_by_field_name("alternative")
            if consequence is not None:
                self.statement(consequence, self._when(ctx, value, True))
            if alternative is not None:
                for child in alternative.named_children:
                    self.statement(child, self._when(ctx, value, False))
        elif kind == "for_statement":
            self.for_loop(node, ctx)
        elif kind in ("while_statement", "do_statement"):
            condition = _condition_value(node.child_by_field_name("condition"))
            inner = Ctx(ctx.env.child(), ctx.conditions, ctx.loops, False, ctx.depth)
            if condition is not None:
                self.expression(condition, inner)
                inner = self._when(inner, condition, True)
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, inner)
        elif kind in ("expression_statement", "return_statement"):
            for child in node.named_children:
                self.expression(child, ctx)
        elif kind in ("comment", "break_statement", "continue_statement"):
            return
        else:  # switch, labels, goto, nested declarations: followed, no witness inside
            for child in node.named_children:
                if child.type.endswith("statement") or child.type in ("declaration", "case_statement"):
                    self.statement(child, Ctx(ctx.env, ctx.conditions, ctx.loops, False, ctx.depth))
                else:
                    self.expression(child, ctx)

    def block(self, statements: list[Node], ctx: Ctx) -> None:
        for statement in statements:
            self.statement(statement, ctx)
            if statement.type == "if_statement" and statement.child_by_field_name("alternative") is None \
                    and _exits(statement.child_by_field_name("consequence")):
                value = _condition_value(statement.child_by_field_name("condition"))
                ctx = self._when(ctx, value, False)
            elif statement.type in ("return_statement", "break_statement", "continue_statement"):
                return

    def _when(self, ctx: Ctx, condition: Node | None, holds: bool) -> Ctx:
        if condition is None:
            return Ctx(ctx.env, ctx.conditions, ctx.loops, False, ctx.depth)
        return Ctx(ctx.env, (*ctx.conditions, (condition, ctx.env, holds)), ctx.loops, ctx.witness_ok, ctx.depth)

    def declaration(self, node: Node, ctx: Ctx) -> None:
        type_text = node_text(node.child_by_field_name("type"))
        frame_assigned = self.assigned.get(id(ctx.env.frame), {})
        for declarator in node.named_children:
            if declarator.type != "init_declarator":
                if declarator.type == "identifier":
                    ctx.env.names[node_text(declarator)] = Opaque()
                continue
            inner = declarator.child_by_field_name("declarator")
            value = declarator.child_by_field_name("value")
            name_node = declarator_name(inner)
            if name_node is None or value is None:
                continue
            name = node_text(name_node)
            if value.type == "initializer_list" or value.type == "argument_list":
                value = value.named_children[0] if len(value.named_children) == 1 else None
                if value is None:
                    ctx.env.names[name] = Opaque()
                    continue
            self.expression(value, ctx)
            is_pointer = inner is not None and inner.type == "pointer_declarator"
            if is_pointer:
                pointer = self.pointer(value, ctx.env)
                if pointer is not None and not frame_assigned.get(name):
                    element, size = element_of(type_text, ctx.env.frame.types)
                    ctx.env.names[name] = Pointer(pointer.buffer, pointer.parts, size or pointer.element_bytes,
                                                  element if size else pointer.element_type)
                    continue
                for buffer in self.mentioned_pointers(value, ctx.env):
                    self.escape(buffer, f"the pointer {name} is not followed")
                ctx.env.names[name] = Opaque()
            elif frame_assigned.get(name):
                steps = self.increments.get(id(ctx.env.frame), {}).get(name)
                ctx.env.names[name] = Growing(value, ctx.env.child(), tuple(steps), self.step_envs) if steps else Opaque()
            else:
                ctx.env.names[name] = Defined(value, ctx.env.child())

    def for_loop(self, node: Node, ctx: Ctx) -> None:
        env = ctx.env.child()
        inner = Ctx(env, ctx.conditions, ctx.loops, ctx.witness_ok, ctx.depth)
        initializer = node.child_by_field_name("initializer")
        variable: LoopVar | None = None
        self.loop_ids += 1
        loop_id = self.loop_ids
        update = node.child_by_field_name("update")
        body = node.child_by_field_name("body")
        if initializer is not None:
            declared = initializer.type == "declaration"
            start = None
            name = None
            if declared:
                declarators = [d for d in initializer.named_children if d.type == "init_declarator"]
                if len(declarators) == 1:
                    name_node = declarator_name(declarators[0].child_by_field_name("declarator"))
                    name = node_text(name_node) if name_node is not None else None
                    start = declarators[0].child_by_field_name("value")
            elif initializer.type == "assignment_expression" and node_text(
                    initializer.child_by_field_name("operator")) == "=":
                left = unparen(initializer.child_by_field_name("left"))
                name = node_text(left) if left is not None and left.type == "identifier" else None
                start = initializer.child_by_field_name("right")
            if start is not None:
                self.expression(start, inner)
            step = _step(update, name) if name else None
            assigned_in_body = body is not None and name is not None and name in _assigned_names(body)
            if name is not None and start is not None and step is not None and not assigned_in_body:
                variable = LoopVar(loop_id, start, ctx.env.child(), step[0], step[1], step[2])
                env.names[name] = variable
            elif name is not None:
                env.names[name] = Opaque()
            if not declared and initializer.type != "assignment_expression":
                self.expression(initializer, inner)
        condition = node.child_by_field_name("condition")
        if condition is not None:
            self.expression(condition, inner)
        witnessable = variable is not None and body is not None and not _leaves(body) and condition is not None \
            and _monotone_condition(condition, variable, env)
        loop = Loop(loop_id, witnessable)
        body_ctx = Ctx(env, inner.conditions, (*inner.loops, loop), inner.witness_ok, inner.depth)
        if condition is not None:
            body_ctx = self._when(body_ctx, condition, True)
        else:
            body_ctx = Ctx(env, body_ctx.conditions, body_ctx.loops, False, body_ctx.depth)
        if body is not None:
            self.statement(body, body_ctx)
        if update is not None:
            self.expression(update, body_ctx)

    # -- expressions ---------------------------------------------------------------------------
    def expression(self, node: Node | None, ctx: Ctx, kind: str = "read") -> None:
        node = unparen(node)
        if node is None:
            return
        t = node.type
        if t == "assignment_expression":
            operator = node_text(node.child_by_field_name("operator"))
            right = node.child_by_field_name("right")
            if operator == "+=" and right is not None:
                self.step_envs[(right.start_byte, right.end_byte)] = ctx.env
            self.target(node.child_by_field_name("left"), ctx, "write" if operator == "=" else "readwrite")
            self.expression(node.child_by_field_name("right"), ctx)
        elif t == "update_expression":
            self.target(node.child_by_field_name("argument"), ctx, "readwrite")
        elif t == "subscript_expression":
            self.target(node, ctx, kind)
        elif t == "pointer_expression":
            operator = node_text(node.child_by_field_name("operator"))
            argument = node.child_by_field_name("argument")
            if operator == "*":
                self.target(node, ctx, kind)
            elif argument is not None:
                inner = unparen(argument)
                if inner is not None and inner.type == "subscript_expression":
                    self._index_reads(inner, ctx)
                else:
                    self.expression(argument, ctx)
        elif t == "field_expression":
            if node_text(node.child_by_field_name("operator")) == "->":
                self.target(node, ctx, kind)
            else:
                self.expression(node.child_by_field_name("argument"), ctx, kind)
        elif t == "call_expression":
            self.call(node, ctx)
        elif t == "conditional_expression":  # `c ? a[i] : 0`: each arm under its condition
            condition = node.child_by_field_name("condition")
            self.expression(condition, ctx)
            self.expression(node.child_by_field_name("consequence"), self._when(ctx, unparen(condition), True))
            self.expression(node.child_by_field_name("alternative"), self._when(ctx, unparen(condition), False))
        elif t == "binary_expression" and node_text(node.child_by_field_name("operator")) in ("&&", "||"):
            left = node.child_by_field_name("left")  # the right operand runs only as the left decides
            self.expression(left, ctx)
            holds = node_text(node.child_by_field_name("operator")) == "&&"
            self.expression(node.child_by_field_name("right"), self._when(ctx, unparen(left), holds))
        elif t in ("lambda_expression",):
            return
        else:
            for child in node.named_children:
                self.expression(child, ctx)

    def _index_reads(self, subscript: Node, ctx: Ctx) -> None:
        index = self._index(subscript)
        if index is not None:
            self.expression(index, ctx)
        base = subscript.child_by_field_name("argument")
        if base is not None and self.pointer(base, ctx.env) is None:
            self.expression(base, ctx)

    def target(self, node: Node | None, ctx: Ctx, kind: str) -> None:
        """An access of `kind` at `node` (a subscript, `*p`, `p->f`, `a[i].x`)."""
        node = unparen(node)
        while node is not None and node.type == "field_expression" and \
                node_text(node.child_by_field_name("operator")) == ".":
            node = unparen(node.child_by_field_name("argument"))
        if node is None:
            return
        if node.type == "identifier":
            binding = ctx.env.names.get(node_text(node))
            if isinstance(binding, Pointer) and kind != "read":
                self.escape(binding.buffer, f"the pointer {node_text(node)} is reassigned")
            return
        pointer: Pointer | None = None
        parts: tuple[tuple[Node, Env, int], ...] = ()
        if node.type == "subscript_expression":
            pointer = self.pointer(node.child_by_field_name("argument"), ctx.env)
            index = self._index(node)
            self._index_reads(node, ctx)
            if pointer is not None and index is not None:
                parts = (*pointer.parts, (index, ctx.env, pointer.element_bytes))
            elif pointer is not None:
                self.escape(pointer.buffer, f"line {node.start_point.row + 1}: a subscript that is not followed")
                return
        elif node.type in ("pointer_expression", "field_expression"):
            argument = node.child_by_field_name("argument")
            pointer = self.pointer(argument, ctx.env)
            if pointer is None and argument is not None:
                self.expression(argument, ctx)
                return
            if pointer is not None:
                parts = pointer.parts
                if argument is not None:
                    self._offset_reads(argument, ctx)
        else:
            self.expression(node, ctx)
            return
        if pointer is None:
            return
        self.accesses.append(Access(pointer.buffer, kind, parts, pointer.element_bytes, ctx,
                                     node.start_point.row + 1))

    def _offset_reads(self, node: Node, ctx: Ctx) -> None:
        """The reads inside an address expression (`&a[idx[i]]`: `idx[i]`, not `a[...]`)."""
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "subscript_expression":
                self._index_reads(current, ctx)
            elif current.type == "call_expression":
                self.expression(current, ctx)
            else:
                stack.extend(current.named_children)

    def call(self, node: Node, ctx: Ctx) -> None:
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        args = [a for a in (arguments.named_children if arguments is not None else []) if a.type != "comment"]
        name = ""
        if function is not None:
            name = node_text(function.child_by_field_name("name") if function.type == "template_function" else function)
        name = name.split("::")[-1]
        if name in CAST_NAMES:
            for arg in args:
                self.expression(arg, ctx)
            return
        if name.startswith("atomic") and args:
            pointer = self.pointer(args[0], ctx.env)
            if pointer is not None:
                self.accesses.append(Access(pointer.buffer, "atomic", pointer.parts, pointer.element_bytes, ctx,
                                             node.start_point.row + 1))
                self._offset_reads(args[0], ctx)
                for arg in args[1:]:
                    self.expression(arg, ctx)
                return
        if name in READ_CALLS and args:
            pointer = self.pointer(args[0], ctx.env)
            if pointer is not None:
                self.accesses.append(Access(pointer.buffer, "read", pointer.parts, pointer.element_bytes, ctx,
                                             node.start_point.row + 1))
                self._offset_reads(args[0], ctx)
                return
        helper = self.helpers.get(name)
        if helper is not None and ctx.depth < MAX_HELPER_DEPTH:
            self.helper(helper, function, args, ctx)
            return
        for arg in args:
            pointer = self.pointer(arg, ctx.env)
            buffers = {pointer.buffer} if pointer is not None else self.mentioned_pointers(arg, ctx.env)
            if buffers and name not in PURE_CALLS:
                for buffer in buffers:
                    self.escape(buffer, f"passed to {name or 'a call'}() at line {node.start_point.row + 1}")
            if pointer is None:
                self.expression(arg, ctx)

    def helper(self, helper: Node, function: Node | None, args: list[Node], ctx: Ctx) -> None:
        types = dict(ctx.env.frame.types)
        constants = dict(ctx.env.frame.constants)
        parent = helper.parent
        if parent is not None and parent.type == "template_declaration" and function is not None \
                and function.type == "template_function":
            params = parent.child_by_field_name("parameters")
            names = tuple(node_text(declarator_name(p) or p.named_children[-1]) for p in params.named_children) \
                if params is not None else ()
            arguments = function.child_by_field_name("arguments")
            targs = tuple(node_text(a) for a in arguments.named_children) if arguments is not None else ()
            resolved = tuple(types.get(a, str(constants[a]) if a in constants else a) for a in targs)
            more_types, more_values = template_values(resolved, names)
            types.update(more_types)
            constants.update(more_values)
        frame = Frame(types, constants)
        env = Env(frame)
        declarator = find_function_declarator(helper.child_by_field_name("declarator"))
        parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
        declared = [p for p in (parameters.named_children if parameters is not None else [])
                    if p.type in ("parameter_declaration", "optional_parameter_declaration")]
        for name, parameter, arg in zip(parameter_names(helper), declared, args, strict=False):
            pointer = self.pointer(arg, ctx.env)
            if pointer is not None:
                element, size = element_of(node_text(parameter.child_by_field_name("type")), types)
                env.names[name] = Pointer(pointer.buffer, pointer.parts, size or pointer.element_bytes,
                                          element if size else pointer.element_type)
                self._offset_reads(arg, ctx)
            else:
                for buffer in self.mentioned_pointers(arg, ctx.env):
                    self.escape(buffer, f"passed to {node_text(helper.child_by_field_name('declarator'))[:40]}")
                self.expression(arg, ctx)
                env.names[name] = Defined(arg, ctx.env)
        self.function(helper, Ctx(env, ctx.conditions, ctx.loops, ctx.witness_ok, ctx.depth + 1))


def _condition_value(condition: Node | None) -> Node | None:
    """The expression of an `if`/`while` condition clause (None for a declaration in it)."""
    node = condition
    if node is not None and node.type == "condition_clause":
        value = node.child_by_field_name("value")
        return value if value is not None and value.type != "declaration" else None
    return unparen(node)


def _exits(statement: Node | None) -> bool:
    if statement is None:
        return False
    if statement.type in ("return_statement", "continue_statement", "break_statement"):
        return True
    if statement.type == "compound_statement":
        named = [c for c in statement.named_children if c.type != "comment"]
        return bool(named) and _exits(named[-1])
    return False


def _leaves(body: Node) -> bool:
    """A loop body that may leave early (`break`, `return`, `goto`): later iterations unproven."""
    return any(n.type in ("break_statement", "return_statement", "goto_statement") for n in walk(body))


def _step(update: Node | None, name: str) -> tuple[str, Node | None, bool] | None:
    node = unparen(update)
    if node is None:
        return None
    if node.type == "update_expression":
        argument = unparen(node.child_by_field_name("argument"))
        if argument is None or node_text(argument) != name:
            return None
        increasing = "++" in node_text(node)
        return ("+" if increasing else "-"), None, increasing
    if node.type == "assignment_expression":
        left = unparen(node.child_by_field_name("left"))
        if left is None or node_text(left) != name:
            return None
        operator = node_text(node.child_by_field_name("operator"))[:-1]
        right = node.child_by_field_name("right")
        if operator in ("+", "*", "<<"):
            return operator, right, True
        if operator in ("-", ">>", "/"):
            return operator, right, False
    return None


def _monotone_condition(condition: Node, variable: LoopVar, env: Env) -> bool:
    """`v < B`, `v <= B` (increasing v), `v > B`, `v >= B` (decreasing), `&&` of such: holding at
    iteration k means holding at every earlier one."""
    node = _condition_value(condition)
    if node is None:
        return False
    if node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == "&&":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        return left is not None and right is not None and _monotone_condition(left, variable, env) \
            and _monotone_condition(right, variable, env)
    if node.type != "binary_expression":
        return False
    operator = node_text(node.child_by_field_name("operator"))
    left, right = unparen(node.child_by_field_name("left")), unparen(node.child_by_field_name("right"))
    if left is None or right is None:
        return False
    names = {n for n, b in env.names.items() if b is variable}
    if node_text(right) in names:
        left, right = right, left
        operator = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(operator, operator)
    if node_text(left) not in names or any(node_text(n) in names for n in walk(right)):
        return False
    return operator in (("<", "<=") if variable.increasing else (">", ">="))
