"""Turns one tree-sitter `function_definition` into a `model.Function` with every body fact.

`FunctionExtractor.extract` walks the function's subtree once, iteratively (no recursion limit
to hit on 500-deep nesting), in source order, keeping an environment of local definitions so
that `int i = blockIdx.x * blockDim.x + threadIdx.x; ... a[i * stride]` resolves to an index
polynomial (`affine.Poly`). Spans are produced relative to a base row so that the caller can
cache a function's facts by its text and shift them when lines above it change.

This module owns the walk, the header and parameters, declarations and assignments (aliases,
shared arrays, dim3s), memory accesses, calls, atomics and launches. Its collaborators: the
scope and integer evaluator (`function_scope.py`, over `intexpr.py`), expression types and
double-literal facts (`arith_types.py`), loops and branches (`control_flow.py`), node helpers
(`nodes.py`).
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
from regrapht.cuda.function_scope import ExtractionState, FunctionScope, PointerAlias, WalkContext
from regrapht.cuda.intexpr import int_literal, type_bytes
from regrapht.cuda.model import (
    AccessKind,
    Atomic,
    Call,
    Dim3,
    Expr,
    Function,
    FunctionKind,
    LaunchSite,
    MallocCall,
    MathCall,
    MemoryAccess,
    MemorySpace,
    Parameter,
    SharedArray,
    SyncCall,
)
from regrapht.cuda.nodes import (
    CAST_NAMES,
    Positions,
    ambiguous_cast,
    cast_operand,
    declarator_name,
    find_function_declarator,
    node_text,
    reinterpreted_load,
    subscript_chain,
)
from regrapht.text import Position, Span

# Calls that take a pointer without writing through it.
READ_ONLY_CALLS = frozenset({"__ldg", "__ldcs", "__ldca", "__ldcg", "__ldlu", "__ldcv", "sizeof"})
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
                elif child.type == "type_qualifier" and node_text(child) in ("__restrict__", "__restrict", "restrict"):
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
                self._mark_written_base(node.child_by_field_name("argument"))
            elif node_type == "subscript_expression" and device_code:
                self._subscript(node, ctx)
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
                    alias = self._alias_of(value, type_text)
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

    def _alias_of(self, value: Node, type_text: str) -> PointerAlias | None:
        """`A + off`, `&A[off]`, `A` where A is a pointer parameter, alias or shared array."""
        node = value
        while node.type in ("cast_expression", "parenthesized_expression", "call_expression"):
            if node.type == "call_expression":
                inner = cast_operand(node)  # `reinterpret_cast<float4 *>(p)`
            else:
                inner = node.child_by_field_name("value") if node.type == "cast_expression" else node.named_children[0]
            if inner is None:
                return None
            node = inner
        offset = Poly.const(0)
        if node.type == "pointer_expression" and node_text(node.child_by_field_name("operator")) == "&":
            argument = node.child_by_field_name("argument")
            if argument is None or argument.type != "subscript_expression":
                return None
            base, indices = subscript_chain(argument)
            if len(indices) != 1 or base is None:
                return None
            node = base
            offset = self._scope.poly(indices[0])
        elif node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == "+":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if left is None or right is None:
                return None
            node = left
            offset = self._scope.poly(right)
        if node.type != "identifier":
            return None
        resolved = self._scope.resolve_array(node_text(node))
        if resolved is None:
            return None
        array, space, base_offset, element_type = resolved
        offset = base_offset + offset
        if type_text and element_type and type_text != element_type and offset.thread_dependent:
            # The offset counts the old elements, the alias's subscripts the new (wider) ones:
            # keep only that the address depends on the thread, not a wrong stride.
            offset = self._scope.opaque(value)
        return PointerAlias(array, space, offset, type_text or element_type)


    def _mark_written_base(self, target: Node | None) -> None:
        """`*p = v`, `p->x = v`, `(*p)++`: the pointer behind the target is written."""
        while target is not None and target.type in ("pointer_expression", "field_expression",
                                                     "parenthesized_expression", "subscript_expression",
                                                     "call_expression", "cast_expression"):
            if target.type == "call_expression":
                target = cast_operand(target)  # `*reinterpret_cast<float4 *>(&out[i]) = v`
                continue
            if target.type == "cast_expression":
                target = target.child_by_field_name("value")
                continue
            if target.type == "field_expression" and node_text(target.child_by_field_name("operator")) == ".":
                target = target.child_by_field_name("argument")
                continue
            inner = target.child_by_field_name("argument")
            target = inner if inner is not None else (target.named_children[0] if target.named_children else None)
        if target is not None and target.type == "identifier":
            resolved = self._scope.resolve_array(node_text(target))
            if resolved is not None and resolved[1] == "global":
                self._state.written.add(resolved[0])

    def _assignment(self, node: Node) -> None:
        left = node.child_by_field_name("left")
        if left is not None and left.type in ("pointer_expression", "field_expression", "parenthesized_expression"):
            self._mark_written_base(left)
        if left is None or left.type != "identifier":
            return
        name = node_text(left)
        operator = node_text(node.child_by_field_name("operator"))
        right = node.child_by_field_name("right")
        env = self._state.env
        if name in self._state.aliases or (name in self._params and self._params[name].is_pointer):
            alias = self._alias_of(right, "") if right is not None and operator == "=" else None
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

    def _subscript(self, node: Node, ctx: WalkContext) -> None:
        parent = node.parent
        if parent is not None and parent.type == "subscript_expression" and parent.child_by_field_name("argument") == node:
            return  # the outer subscript records `t[a][b]` as one access
        base, indices = subscript_chain(node)
        if base is None or not indices:
            return
        cast_type = ""
        while base.type in ("call_expression", "cast_expression", "parenthesized_expression"):
            if base.type == "call_expression":
                function = base.child_by_field_name("function")
                arguments = base.child_by_field_name("arguments")
                if function is None or function.type != "template_function" or arguments is None or \
                        node_text(function.child_by_field_name("name")) not in CAST_NAMES or not arguments.named_children:
                    return
                cast_type = node_text(function.child_by_field_name("arguments")).strip("<>")
                base = arguments.named_children[0]
            elif base.type == "cast_expression":
                cast_type = node_text(base.child_by_field_name("type"))
                value = base.child_by_field_name("value")
                if value is None:
                    return
                base = value
            else:
                if not base.named_children:
                    return
                base = base.named_children[0]
        if base.type != "identifier":
            return
        unknown: tuple[str, MemorySpace, Poly, str] = (node_text(base), "unknown", Poly.const(0), "")
        array, space, offset, element_type = self._scope.resolve_array(node_text(base)) or unknown
        base_type = element_type
        if cast_type:
            element_type = cast_type.replace("const", "").replace("*", "").strip()
        access = self._access_kind(node)
        wider = reinterpreted_load(node)
        if wider and access == "address":
            access = "readwrite"  # read or written through the wider pointer, not handed on
        access_bytes = type_bytes(wider or element_type)
        if access != "read" and space == "global":
            self._state.written.add(array)
        polys = [self._scope.poly(i) for i in indices]
        # The index counts the elements of the pointer's type; after a cast in the subscript
        # (`reinterpret_cast<float4 *>(p)[k]`) `k` counts the cast type's, the alias offset the old ones.
        stride_unit_bytes = type_bytes(base_type)
        if cast_type and polys[-1].thread_dependent:
            stride_unit_bytes = None if offset.thread_dependent else type_bytes(element_type)
        last = polys[-1] + offset if len(polys) == 1 else polys[-1]
        flattened = polys[0] + offset
        for poly in polys[1:]:
            flattened = flattened + poly
        loop_variables = {self._state.loops[i].variable for i in ctx.loops}
        used = tuple(sorted(v for v in flattened.atoms() if v in loop_variables))
        self._state.accesses.append(MemoryAccess(
            array=array,
            space=space,
            indices=tuple(Expr(node_text(i), self.positions.span(i)) for i in indices),
            span=self.positions.span(node),
            access=access,
            loop_depth=len(ctx.loops),
            loop=ctx.loops[-1] if ctx.loops else None,
            loop_vars=used,
            tid_x=last.coefficient("threadIdx.x"),
            tid_y=last.coefficient("threadIdx.y"),
            thread_dependent=any(p.thread_dependent for p in polys) or offset.thread_dependent,
            data_dependent=any(p.memory_dependent for p in polys) or offset.memory_dependent,
            element_type=element_type,
            index_tid_x=tuple(p.coefficient("threadIdx.x") for p in polys),
            unit_stride_loop_vars=tuple(v for v in used if flattened.coefficient(v).kind == "unit"
                                        and self._steps_by_one(v, ctx)),
            access_bytes=access_bytes,
            stride_unit_bytes=stride_unit_bytes,
        ))

    def _steps_by_one(self, variable: str, ctx: WalkContext) -> bool:
        """The enclosing loop over `variable` steps it by +-1 (a walk, not a stride)."""
        return any(self._state.loops[i].variable == variable and i in self._control.unit_step_loops for i in ctx.loops)

    def _access_kind(self, node: Node) -> AccessKind:
        parent = node.parent
        child = node
        while parent is not None and parent.type == "parenthesized_expression":
            child, parent = parent, parent.parent
        if parent is None:
            return "read"
        if parent.type == "assignment_expression" and parent.child_by_field_name("left") == child:
            return "write" if node_text(parent.child_by_field_name("operator")) == "=" else "readwrite"
        if parent.type == "update_expression":
            return "readwrite"
        if parent.type == "pointer_expression" and node_text(parent.child_by_field_name("operator")) == "&":
            call = parent.parent.parent if parent.parent is not None else None
            if call is not None and call.type == "call_expression" and \
                    node_text(call.child_by_field_name("function")) in READ_ONLY_CALLS:
                return "read"
            return "address"
        return "read"

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
                self._mark_escape(argument)
        if name.startswith("__syncthreads"):
            exited = ctx.thread_branch is None and state.exit_condition is not None
            condition = ctx.thread_branch or state.exit_condition
            state.syncs.append(SyncCall(span, condition is not None, condition or "", after_early_exit=exited))
        elif name.startswith("atomic") and args:
            self._atomic(name, args[0], span, ctx)
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

    def _mark_escape(self, argument: Node) -> None:
        """A pointer parameter passed to a call (other than a read-only load) may be written."""
        if argument.type == "identifier":
            name = node_text(argument)
            resolved = self._scope.resolve_array(name)
            if resolved is not None and resolved[1] == "global":
                self._state.written.add(resolved[0])
        elif argument.type == "binary_expression":
            left = argument.child_by_field_name("left")
            if left is not None:
                self._mark_escape(left)
        elif argument.type in ("cast_expression", "parenthesized_expression", "call_expression"):
            inner = argument.child_by_field_name("value") if argument.type == "cast_expression" else \
                cast_operand(argument) if argument.type == "call_expression" else \
                (argument.named_children[0] if argument.named_children else None)
            if inner is not None:
                self._mark_escape(inner)
        elif argument.type == "pointer_expression" and node_text(argument.child_by_field_name("operator")) == "&":
            self._mark_written_base(argument.child_by_field_name("argument"))  # `f(&out[i])`

    def _atomic(self, name: str, target: Node, span: Span, ctx: WalkContext) -> None:
        node = target
        array: str | None = None
        offset = Poly.const(0)
        if node.type == "pointer_expression" and node_text(node.child_by_field_name("operator")) == "&":
            argument = node.child_by_field_name("argument")
            if argument is not None and argument.type == "subscript_expression":
                base, indices = subscript_chain(argument)
                if base is not None and base.type == "identifier":
                    array = node_text(base)
                    for index in indices:
                        offset = offset + self._scope.poly(index)
        elif node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == "+":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                array = node_text(left)
                offset = self._scope.poly(node.child_by_field_name("right"))
        elif node.type == "identifier":
            array = node_text(node)
        space: MemorySpace = "unknown"
        if array is not None:
            resolved = self._scope.resolve_array(array)
            if resolved is not None:
                array, space, base_offset, _ = resolved
                offset = offset + base_offset
                if space == "global":
                    self._state.written.add(array)
        self._state.atomics.append(Atomic(
            function=name,
            target=Expr(node_text(target), self.positions.span(target)),
            span=span,
            space=space,
            array=array,
            thread_dependent=offset.thread_dependent,
            data_dependent=offset.memory_dependent,
            single_thread_guard=ctx.single_guard,
            loop_depth=len(ctx.loops),
        ))

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
