"""Turns one tree-sitter `function_definition` into a `model.Function` with every body fact.

`FunctionExtractor.extract` walks the function's subtree once, iteratively (no recursion limit
to hit on 500-deep nesting), in source order, keeping an environment of local definitions so
that `int i = blockIdx.x * blockDim.x + threadIdx.x; ... a[i * stride]` resolves to an index
polynomial (`affine.Poly`). Spans are produced relative to a base row so that the caller can
cache a function's facts by its text and shift them when lines above it change.

This module owns the walk, the header and parameters, declarations and assignments (shared
arrays, dim3s), calls and launches. Its collaborators: the scope and integer evaluator
(`function_scope.py`, over `intexpr.py`), expression types and double-literal facts
(`arith_types.py`), loops and branches (`control_flow.py`), memory accesses, atomics and
pointer aliases (`memory.py`), node helpers (`nodes.py`).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.arith_types import (
    ARITHMETIC_OPERATORS,
    DOUBLE_MATH,
    MAX_EXPR_DEPTH,
    TYPE_DEPTH,
    ExpressionTypes,
    LiteralFacts,
    arithmetic_type,
    is_double_literal,
)
from regrapht.cuda.control_flow import ControlFlow
from regrapht.cuda.function_scope import ExtractionState, FunctionScope, WalkContext
from regrapht.cuda.intexpr import int_literal, type_bytes
from regrapht.cuda.memory import READ_ONLY_CALLS, MemoryAccesses
from regrapht.cuda.model import (
    Call,
    Dim3,
    Expr,
    Function,
    FunctionKind,
    LaunchSite,
    MallocCall,
    MathCall,
    Parameter,
    SharedArray,
    SyncCall,
)
from regrapht.cuda.nodes import (
    CAST_NAMES,
    Positions,
    ambiguous_cast,
    declarator_name,
    find_function_declarator,
    node_text,
)
from regrapht.text import Position, Span

MAX_LOCAL_VALUES = 256  # host-function scalar definitions kept for spec inference
_DOUBLE_WORD = re.compile(rb"\bdouble\b")


class FunctionExtractor:
    """Extracts one function. `constants` are file-level integer constants (`#define N 256`),
    `file_shared` the file-scope `__shared__` arrays (name -> element type)."""

    def __init__(self, positions: Positions, constants: dict[str, int], file_shared: dict[str, str]) -> None:
        self.positions = positions
        self.constants = constants
        self.file_shared = file_shared
        self._start(ExtractionState(), None, "host", ())

    def _start(self, state: ExtractionState, function: str | None, kind: FunctionKind,
               parameters: tuple[Parameter, ...]) -> None:
        """Fresh collaborators for the function about to be walked (or none, for file scope)."""
        self._params = {p.name: p for p in parameters}
        self._state = state
        self._function = function
        self._kind = kind
        self._scope = FunctionScope(self.constants, state, self._params, kind)
        self._types = ExpressionTypes(self._scope)
        self._literals = LiteralFacts(self.positions, self._types)
        self._control = ControlFlow(self._scope, self.positions, function)
        self._memory = MemoryAccesses(self._scope, self.positions, self._control)

    # ---------------------------------------------------------------- header
    def extract(self, node: Node, template_parameters: tuple[str, ...], extern_c: bool) -> Function | None:
        declarator = find_function_declarator(node.child_by_field_name("declarator"))
        if declarator is None and node.type == "ERROR":
            # Half-typed function (unclosed body): the header is a direct child of the ERROR node.
            declarator = next((c for c in node.children if c.type == "function_declarator"), None)
        if declarator is None:
            return None
        name_node = declarator.child_by_field_name("declarator")
        if name_node is None:
            return None
        if name_node.type == "template_function":
            name_node = name_node.child_by_field_name("name") or name_node
        qualifiers = {c.type for c in node.children}
        kind: FunctionKind = "global" if "__global__" in qualifiers else "device" if "__device__" in qualifiers else "host"
        launch_bounds = next((c for c in node.children if c.type == "launch_bounds"), None)
        parameters = tuple(
            p for p in (self._parameter(c) for c in (declarator.child_by_field_name("parameters") or declarator).named_children
                        if c.type in ("parameter_declaration", "optional_parameter_declaration"))
            if p is not None
        )
        body = node.child_by_field_name("body") or (node if node.type == "ERROR" else None)
        uses_double = bool(_DOUBLE_WORD.search(node.text or b""))
        state = ExtractionState()
        state.shared.update(self.file_shared)
        function_name = node_text(name_node)
        if body is not None:
            self._walk(body, state, function_name, kind, parameters, uses_double)
        return Function(
            name=function_name,
            kind=kind,
            name_span=self.positions.span(name_node),
            span=self.positions.span(node),
            body_span=self.positions.span(body) if body is not None else None,
            return_type=node_text(node.child_by_field_name("type")),
            template_parameters=template_parameters,
            parameters=parameters,
            launch_bounds=tuple(node_text(c) for c in launch_bounds.named_children if c.type != "comment")
            if launch_bounds else (),
            extern_c=extern_c,
            uses_double=uses_double,
            loops=tuple(state.loops),
            accesses=tuple(state.accesses),
            atomics=tuple(state.atomics),
            syncs=tuple(state.syncs),
            branches=tuple(state.branches),
            shared_arrays=tuple(state.shared_arrays),
            float_literals=tuple(state.float_literals),
            math_calls=tuple(state.math_calls),
            calls=tuple(state.calls),
            launches=tuple(state.launches),
            dim3s=tuple(state.dim3_list),
            mallocs=tuple(state.mallocs),
            written_pointers=frozenset(state.written),
            local_values=tuple(state.local_values),
        )

    def _parameter(self, node: Node) -> Parameter | None:
        is_const = any(c.type == "type_qualifier" and node_text(c) == "const" for c in node.children)
        is_pointer = False
        is_restrict = False
        star_end: Position | None = None
        declarator = node.child_by_field_name("declarator")
        name_node = None
        while declarator is not None:
            if declarator.type in ("identifier", "field_identifier"):
                name_node = declarator
                break
            if declarator.type in ("pointer_declarator", "abstract_pointer_declarator", "array_declarator",
                                   "abstract_array_declarator"):
                is_pointer = True
            for child in declarator.children:
                if child.type == "*":
                    star_end = self.positions.end(child)
                elif child.type in ("type_qualifier", "ms_pointer_modifier") and \
                        node_text(child) in ("__restrict__", "__restrict", "restrict"):  # GNU `__restrict`: an MS modifier to the grammar
                    is_restrict = True
            declarator = declarator.child_by_field_name("declarator")
        text = node_text(node)
        if name_node is not None:
            start = name_node.start_byte - node.start_byte
            end = name_node.end_byte - node.start_byte
            raw = node.text or b""
            type_text = (raw[:start] + raw[end:]).decode("utf-8", errors="replace").strip()
        else:
            type_text = text.strip()
        return Parameter(
            name=node_text(name_node),
            type_text=" ".join(type_text.split()),
            base_type=node_text(node.child_by_field_name("type")),
            is_pointer=is_pointer,
            is_const=is_const,
            is_restrict=is_restrict,
            span=self.positions.span(node),
            name_span=self.positions.span(name_node) if name_node is not None else None,
            star_end=star_end,
        )

    # ---------------------------------------------------------------- body walk
    def _walk(self, body: Node, state: ExtractionState, function: str, kind: FunctionKind,
              parameters: tuple[Parameter, ...], uses_double: bool) -> None:
        self._start(state, function, kind, parameters)
        for parameter in parameters:
            if not parameter.is_pointer:
                state.types[parameter.name] = arithmetic_type(parameter.base_type)
        device_code = kind != "host"
        float_code = device_code and not uses_double
        stack: list[tuple[Node, WalkContext]] = [(body, WalkContext((), None, False, False))]
        while stack:
            node, ctx = stack.pop()
            node_type = node.type
            children_ctx = ctx
            skip_children: set[int] = set()
            if node_type == "declaration":
                if not ctx.skip_env:
                    self._declaration(node, ctx)
            elif node_type == "assignment_expression" and not ctx.skip_env:
                self._assignment(node)
                if float_code:
                    self._literals.compound_literal(node)
            elif node_type == "binary_expression" and float_code and not ctx.chain:
                if node_text(node.child_by_field_name("operator")) in ARITHMETIC_OPERATORS:
                    self._literals.arithmetic_chain(node)
                    children_ctx = ctx._replace(chain=True)
            elif node_type == "update_expression":
                self._memory.mark_written_base(node.child_by_field_name("argument"))
            elif node_type == "subscript_expression" and device_code:
                self._memory.subscript(node, ctx)
            elif node_type == "call_expression":
                self._call(node, ctx, float_code)
            elif node_type in ("for_statement", "while_statement", "do_statement", "for_range_loop"):
                children_ctx, skip = self._control.loop(node, ctx)
                skip_children.update(skip)
            elif node_type == "if_statement":
                self._control.if_statement(node, ctx, stack)
                continue
            elif node_type == "conditional_expression" and device_code:
                condition = node.child_by_field_name("condition")
                if condition is not None:
                    self._control.branch("ternary", condition, node)
            elif node_type == "number_literal" and float_code:
                text = node_text(node)
                if is_double_literal(text):
                    state.float_literals.append(self._literals.float_literal(node, text, ctx))
            elif node_type in ("lambda_expression", "function_definition", "class_specifier", "struct_specifier"):
                continue  # nested definitions are not this function's code
            children = node.children
            for index in range(len(children) - 1, -1, -1):
                child = children[index]
                if child.id in skip_children:
                    if child.type in ("assignment_expression", "update_expression", "comma_expression",
                                      "declaration"):
                        stack.append((child, children_ctx._replace(skip_env=True)))
                    continue
                stack.append((child, children_ctx))


    def _declaration(self, node: Node, ctx: WalkContext) -> None:
        state = self._state
        qualifiers = {node_text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
        type_text = node_text(node.child_by_field_name("type"))
        for declarator in node.children_by_field_name("declarator"):
            value = declarator.child_by_field_name("value") if declarator.type == "init_declarator" else None
            target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
            name_node = declarator_name(target)
            if name_node is None:
                continue
            name = node_text(name_node)
            if "__shared__" in qualifiers:
                shared = self.shared_array(node, target, name, type_text, "extern" in qualifiers, self._function)
                state.shared_arrays.append(shared)
                state.shared[name] = type_text
                continue
            if target is not None and target.type == "array_declarator":
                state.local_arrays[name] = type_text
                continue
            if type_text == "dim3":
                if value is None and target is not None and target.type == "function_declarator":
                    # `dim3 block(TILE, TILE);` with macro or variable arguments parses as a
                    # function declaration whose "parameter types" are the components.
                    value = target.child_by_field_name("parameters")
                state.dim3s[name] = dim3 = self._dim3(name, value, node)
                state.dim3_list.append(dim3)
                continue
            if target is not None and target.type == "pointer_declarator":
                if value is not None:
                    alias = self._memory.alias_of(value, type_text)
                    if alias is not None:
                        state.aliases[name] = alias
                continue
            state.types[name] = arithmetic_type(type_text)
            if value is not None and value.type != "initializer_list":
                state.env[name] = self._scope.poly(value)
                if self._kind == "host" and len(state.local_values) < MAX_LOCAL_VALUES:
                    state.local_values.append((name, node_text(value)))
            elif value is None:
                state.env.pop(name, None)

    def shared_array(self, node: Node, target: Node | None, name: str, type_text: str, is_extern: bool,
                     function: str | None) -> SharedArray:
        dims: list[str] = []
        values: list[int | None] = []
        spans: list[Span] = []
        current = target
        while current is not None and current.type == "array_declarator":
            size = current.child_by_field_name("size")
            if size is not None:
                dims.append(node_text(size))
                values.append(self._scope.poly(size).constant)
                spans.append(self.positions.span(size))
            else:
                dims.append("")
                values.append(None)
                closing = current.children[-1]
                spans.append(Span(self.positions.start(closing), self.positions.start(closing)))
            current = current.child_by_field_name("declarator")
        dims.reverse()
        values.reverse()
        spans.reverse()
        return SharedArray(name, type_text, tuple(dims), tuple(values), tuple(spans), self.positions.span(node),
                           is_extern, function)

    def _dim3(self, name: str, value: Node | None, node: Node) -> Dim3:
        components: tuple[Node, ...] = ()
        if value is not None:
            if value.type == "call_expression":
                arguments = value.child_by_field_name("arguments")
                components = tuple(arguments.named_children) if arguments is not None else ()
            elif value.type in ("argument_list", "initializer_list", "parameter_list"):
                components = tuple(value.named_children)
            else:
                components = (value,)
        exprs = tuple(Expr(node_text(c), self.positions.span(c)) for c in components)
        values = tuple(self.constants.get(node_text(c).strip()) if c.type == "parameter_declaration"
                       else self._scope.poly(c).constant for c in components)
        return Dim3(name, exprs, values, self.positions.span(node))

    def _assignment(self, node: Node) -> None:
        left = node.child_by_field_name("left")
        if left is not None and left.type in ("pointer_expression", "field_expression", "parenthesized_expression"):
            self._memory.mark_written_base(left)
        if left is None or left.type != "identifier":
            return
        name = node_text(left)
        operator = node_text(node.child_by_field_name("operator"))
        right = node.child_by_field_name("right")
        env = self._state.env
        if name in self._state.aliases or (name in self._params and self._params[name].is_pointer):
            alias = self._memory.alias_of(right, "") if right is not None and operator == "=" else None
            if alias is not None:
                self._state.aliases[name] = alias
            return
        if operator == "=":
            env[name] = self._scope.poly(right)
        elif operator in ("+=", "-="):
            current = env.get(name, Poly.atom(name))
            step = self._scope.poly(right)
            env[name] = current + step if operator == "+=" else current - step
        else:
            env[name] = self._scope.opaque(node)

    def _call(self, node: Node, ctx: WalkContext, float_code: bool) -> None:
        state = self._state
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        args = tuple(arguments.named_children) if arguments is not None else ()
        config = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
        if config is not None:
            self._launch(node, function, config, args, ctx)
            return
        if function is None:
            return
        name_node = function
        if function.type == "template_function":
            name_node = function.child_by_field_name("name") or function
        name = node_text(name_node)
        span = self.positions.span(node)
        state.calls.append(Call(name, span, tuple(Expr(node_text(a), self.positions.span(a)) for a in args),
                                bool(ctx.loops), ctx.loops[-1] if ctx.loops else None))
        # A cast only renames the pointer: writes through the result are tracked as an alias
        # (`_alias_of`) or a subscript, so the cast itself is not an escape.
        if name not in READ_ONLY_CALLS and name not in CAST_NAMES:
            for argument in args:
                self._memory.mark_escape(argument)
        if name.startswith("__syncthreads"):
            exited = ctx.thread_branch is None and state.exit_condition is not None
            condition = ctx.thread_branch or state.exit_condition
            state.syncs.append(SyncCall(span, condition is not None, condition or "", after_early_exit=exited))
        elif name.startswith("atomic") and args:
            self._memory.atomic(name, args[0], span, ctx)
        elif name in DOUBLE_MATH and float_code and function.type == "identifier":
            state.math_calls.append(MathCall(name, name + "f", self.positions.span(function), span,
                                             self._types.overload(args, MAX_EXPR_DEPTH - TYPE_DEPTH)))
        elif name.startswith("cudaMalloc") and len(args) >= 2:
            pointer = args[0]
            while pointer.type in ("cast_expression", "pointer_expression", "parenthesized_expression"):
                inner = (pointer.child_by_field_name("value") if pointer.type == "cast_expression"
                         else pointer.child_by_field_name("argument") if pointer.type == "pointer_expression"
                         else (pointer.named_children[0] if pointer.named_children else None))
                if inner is None:
                    break
                pointer = inner
            state.mallocs.append(MallocCall(name, node_text(pointer) if pointer.type == "identifier" else None,
                                            node_text(args[1]), span))

    def _launch(self, node: Node, function: Node | None, config: Node, args: tuple[Node, ...], ctx: WalkContext) -> None:
        name_node = function
        if function is not None and function.type == "template_function":
            name_node = function.child_by_field_name("name")
        parts = config.named_children
        exprs = [Expr(node_text(p), self.positions.span(p)) for p in parts]
        empty = Expr("", self.positions.span(config))
        self._state.launches.append(LaunchSite(
            kernel=node_text(name_node),
            grid=exprs[0] if exprs else empty,
            block=exprs[1] if len(exprs) > 1 else empty,
            shared=exprs[2] if len(exprs) > 2 else None,
            stream=exprs[3] if len(exprs) > 3 else None,
            args=tuple(Expr(node_text(a), self.positions.span(a)) for a in args),
            host_function=self._function,
            span=self.positions.span(node),
            in_loop=bool(ctx.loops),
            block_dims=self._dims(parts[1]) if len(parts) > 1 else None,
            grid_dims=self._dims(parts[0]) if parts else None,
        ))

    def _dims(self, node: Node) -> tuple[int | None, ...] | None:
        if node.type == "identifier" and node_text(node) in self._state.dim3s:
            return self._state.dim3s[node_text(node)].values
        if node.type == "call_expression" and node_text(node.child_by_field_name("function")) == "dim3":
            arguments = node.child_by_field_name("arguments")
            return tuple(self._scope.poly(a).constant for a in (arguments.named_children if arguments else ()))
        value = self._scope.poly(node).constant
        return (value,) if value is not None else None



__all__ = [
    "FunctionExtractor", "Positions", "ambiguous_cast", "declarator_name", "find_function_declarator", "int_literal",
    "node_text", "type_bytes",
]
