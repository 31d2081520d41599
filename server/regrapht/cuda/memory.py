"""What one function reads and writes through pointers, as the extractor's walk meets it.

`MemoryAccesses` records every subscript of an array or pointer as a `MemoryAccess` (the
array it resolves to, its memory space, index polynomials and their thread coefficients,
access width), every atomic as an `Atomic`, the local pointer aliases (`float *row = A + r * N`)
and which global pointers the function may write (stores, updates, escapes into calls).
"""

from __future__ import annotations

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.control_flow import ControlFlow
from regrapht.cuda.function_scope import FunctionScope, PointerAlias, WalkContext
from regrapht.cuda.intexpr import type_bytes
from regrapht.cuda.model import AccessKind, Atomic, Expr, MemoryAccess, MemorySpace
from regrapht.cuda.nodes import (
    CAST_NAMES,
    Positions,
    cast_operand,
    node_text,
    reinterpreted_load,
    subscript_chain,
)
from regrapht.text import Span

# Calls that take a pointer without writing through it.
READ_ONLY_CALLS = frozenset({"__ldg", "__ldcs", "__ldca", "__ldcg", "__ldlu", "__ldcv", "sizeof"})


class MemoryAccesses:
    """Reads the memory accesses of the function whose scope is `scope`."""

    def __init__(self, scope: FunctionScope, positions: Positions, control: ControlFlow) -> None:
        self.scope = scope
        self.positions = positions
        self.control = control

    def alias_of(self, value: Node, type_text: str) -> PointerAlias | None:
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
            offset = self.scope.poly(indices[0])
        elif node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == "+":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if left is None or right is None:
                return None
            node = left
            offset = self.scope.poly(right)
        if node.type != "identifier":
            return None
        resolved = self.scope.resolve_array(node_text(node))
        if resolved is None:
            return None
        array, space, base_offset, element_type = resolved
        offset = base_offset + offset
        if type_text and element_type and type_text != element_type and offset.thread_dependent:
            # The offset counts the old elements, the alias's subscripts the new (wider) ones:
            # keep only that the address depends on the thread, not a wrong stride.
            offset = self.scope.opaque(value)
        return PointerAlias(array, space, offset, type_text or element_type)


    def mark_written_base(self, target: Node | None) -> None:
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
            resolved = self.scope.resolve_array(node_text(target))
            if resolved is not None and resolved[1] == "global":
                self.scope.state.written.add(resolved[0])


    def subscript(self, node: Node, ctx: WalkContext) -> None:
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
        array, space, offset, element_type = self.scope.resolve_array(node_text(base)) or unknown
        base_type = element_type
        if cast_type:
            element_type = cast_type.replace("const", "").replace("*", "").strip()
        access = self._access_kind(node)
        wider = reinterpreted_load(node)
        if wider and access == "address":
            access = "readwrite"  # read or written through the wider pointer, not handed on
        access_bytes = type_bytes(wider or element_type)
        if access != "read" and space == "global":
            self.scope.state.written.add(array)
        polys = [self.scope.poly(i) for i in indices]
        # The index counts the elements of the pointer's type; after a cast in the subscript
        # (`reinterpret_cast<float4 *>(p)[k]`) `k` counts the cast type's, the alias offset the old ones.
        stride_unit_bytes = type_bytes(base_type)
        if cast_type and polys[-1].thread_dependent:
            stride_unit_bytes = None if offset.thread_dependent else type_bytes(element_type)
        last = polys[-1] + offset if len(polys) == 1 else polys[-1]
        flattened = polys[0] + offset
        for poly in polys[1:]:
            flattened = flattened + poly
        loop_variables = {self.scope.state.loops[i].variable for i in ctx.loops}
        used = tuple(sorted(v for v in flattened.atoms() if v in loop_variables))
        self.scope.state.accesses.append(MemoryAccess(
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
            written_as=node_text(base) if node_text(base) != array else "",
        ))

    def _steps_by_one(self, variable: str, ctx: WalkContext) -> bool:
        """The enclosing loop over `variable` steps it by +-1 (a walk, not a stride)."""
        return any(self.scope.state.loops[i].variable == variable and i in self.control.unit_step_loops for i in ctx.loops)

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


    def mark_escape(self, argument: Node) -> None:
        """A pointer parameter passed to a call (other than a read-only load) may be written."""
        if argument.type == "identifier":
            name = node_text(argument)
            resolved = self.scope.resolve_array(name)
            if resolved is not None and resolved[1] == "global":
                self.scope.state.written.add(resolved[0])
        elif argument.type == "binary_expression":
            left = argument.child_by_field_name("left")
            if left is not None:
                self.mark_escape(left)
        elif argument.type in ("cast_expression", "parenthesized_expression", "call_expression"):
            inner = argument.child_by_field_name("value") if argument.type == "cast_expression" else \
                cast_operand(argument) if argument.type == "call_expression" else \
                (argument.named_children[0] if argument.named_children else None)
            if inner is not None:
                self.mark_escape(inner)
        elif argument.type == "pointer_expression" and node_text(argument.child_by_field_name("operator")) == "&":
            self.mark_written_base(argument.child_by_field_name("argument"))  # `f(&out[i])`

    def atomic(self, name: str, target: Node, span: Span, ctx: WalkContext, *, operand: str = "",
               result_used: bool = False, guard: str = "") -> None:
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
                        offset = offset + self.scope.poly(index)
        elif node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == "+":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                array = node_text(left)
                offset = self.scope.poly(node.child_by_field_name("right"))
        elif node.type == "identifier":
            array = node_text(node)
        space: MemorySpace = "unknown"
        if array is not None:
            resolved = self.scope.resolve_array(array)
            if resolved is not None:
                array, space, base_offset, _ = resolved
                offset = offset + base_offset
                if space == "global":
                    self.scope.state.written.add(array)
        self.scope.state.atomics.append(Atomic(
            function=name,
            target=Expr(node_text(target), self.positions.span(target)),
            span=span,
            space=space,
            array=array,
            thread_dependent=offset.thread_dependent,
            data_dependent=offset.memory_dependent,
            single_thread_guard=ctx.single_guard,
            loop_depth=len(ctx.loops),
            operand=operand,
            result_used=result_used,
            guard=guard,
        ))

