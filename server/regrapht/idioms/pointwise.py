"""Point kernels: one thread per point of a 1-3-D index space, read from the source model.

Most kernels of the copy, stencil, map and dense-product families have one shape: each thread
takes *coordinates* from its global thread id (`x = blockIdx.x * blockDim.x + threadIdx.x`),
checks them against bounds (`if (x < W && y < H)` or `if (x >= W || y >= H) return;`) and does
its *work* at that point. `point_kernel` recognises that shape on the tree-sitter tree of the
kernel and describes it with the affine algebra of `cuda/affine.py`: every subscript of a
pointer parameter in the work becomes an `Access` whose index is a polynomial over the
coordinates (kept as atoms, not expanded into thread ids), loop variables and scalars.

Rewrites built on a `PointKernel` keep the kernel's own statements and re-bind its coordinates
(a tile's threads visit the same points in another order), so they never re-derive the index
arithmetic. That is only sound when the work is *pointwise*: no barrier, no shared memory, no
use of the thread geometry other than through the coordinates, no `return` inside the work;
`point_kernel` returns None otherwise (and for data-dependent or non-affine bounds).

This module owns the reading of the kernel's structure (parameters, coordinates, pure
declarations, the guard, the work); its collaborators: the records (`point_model.py`), the
evaluator over the kernel's names (`point_values.py`), the guard's bounds and mixed-radix
indices (`point_guard.py`) and the scan of the work (`point_work.py`).
"""

from __future__ import annotations

from collections.abc import Mapping

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.nodes import encode_source, make_parser, node_text, walk
from regrapht.idioms.point_guard import GuardBounds, MixedRadix
from regrapht.idioms.point_model import (
    AXES,
    PURE_CALLS,
    Access,
    AtomicUpdate,
    Bound,
    Clamp,
    Condition,
    Coordinate,
    FreshNames,
    LinearIndex,
    LoopRange,
    PointKernel,
    coefficient_of,
    fresh,
    launch_block,
    unit_coordinate,
)
from regrapht.idioms.point_values import NotPointwise, PointValues, expression_poly, strip
from regrapht.idioms.point_work import WorkScanner


def point_kernel(kernel_text: str, block: tuple[int, int, int] | None,
                 constants: Mapping[str, int] | None = None, *, atomics: bool = False,
                 grid: tuple[str, ...] | None = None) -> PointKernel | None:
    """The point-kernel view of one `__global__` definition, or None when it is not one.

    `block` is the launch's block size when it is literal (lets `blockIdx.x * 16 + threadIdx.x`
    count as a coordinate when the block is 16 wide); `constants` are file-level `#define`s.
    `atomics`: accept `atomicAdd` on pointer parameters in the work (histograms, scatters).
    `grid`: the launch's grid expressions; a coordinate from `blockIdx` alone (block size 1 on
    its axis) that the guard does not bound (`c = blockIdx.z` of a depthwise convolution) then
    ranges over its axis's grid extent.
    """
    kernel_text = returns_as_else(kernel_text)
    data = encode_source(kernel_text)
    tree = make_parser().parse(data)
    function = next((n for n in walk(tree.root_node) if n.type == "function_definition"), None)
    if function is None or tree.root_node.has_error:
        return None
    try:
        builder = _Builder(kernel_text, data, function, block, dict(constants or {}))
        builder.allow_atomics = atomics
        builder.grid = grid
        return builder.build()
    except NotPointwise:
        return None


def returns_as_else(kernel_text: str) -> str:
    """`if (c) { A; return; } B...` at the top of the body (after the guard) as
    `if (c) { A; } else { B... }`: the same program, with the statements after the early exit
    under the negated condition instead of after a `return` (which no point kernel has).
    Only when `return;` is the last statement of the `if`'s block and its only `return`, the `if`
    has no `else`, and it is not the guard itself (a block of nothing but `return`)."""
    for _ in range(4):  # a few boundary exits in a row
        data = encode_source(kernel_text)
        tree = make_parser().parse(data)
        function = next((n for n in walk(tree.root_node) if n.type == "function_definition"), None)
        body = function.child_by_field_name("body") if function is not None else None
        if body is None or tree.root_node.has_error:
            return kernel_text
        statements = [c for c in body.named_children if c.type != "comment" and not is_pragma(c)]
        for index, statement in enumerate(statements):
            consequence = statement.child_by_field_name("consequence") if statement.type == "if_statement" else None
            if consequence is None or statement.child_by_field_name("alternative") is not None or \
                    consequence.type != "compound_statement" or _is_return(consequence):
                continue
            inner = [c for c in consequence.named_children if c.type != "comment"]
            returns = [n for n in walk(statement) if n.type == "return_statement"]
            if not inner or inner[-1].type != "return_statement" or inner[-1].named_child_count or returns != [inner[-1]] \
                    or index == len(statements) - 1:
                continue
            exit_node = inner[-1]
            rest_start, rest_end = statements[index + 1].start_byte, statements[-1].end_byte
            text = (data[:exit_node.start_byte] + data[exit_node.end_byte:statement.end_byte] + b" else {\n" +
                    data[rest_start:rest_end] + b"\n}" + data[rest_end:])
            kernel_text = text.decode()
            break
        else:
            return kernel_text
    return kernel_text


class _Builder:
    """Reads one kernel's structure in order: parameters, coordinates and pure declarations,
    the guard, the work."""

    def __init__(self, text: str, data: bytes, function: Node, block: tuple[int, int, int] | None,
                 constants: dict[str, int]) -> None:
        self.text = text
        self.data = data
        self.function = function
        self.block = block
        self.values = PointValues(constants)
        self.prelude: list[str] = []
        self.prelude_nodes: list[Node] = []
        self.linear: LinearIndex | None = None
        self.allow_atomics = False
        self.grid: tuple[str, ...] | None = None
        # Template type parameters: `T(1)` is a conversion, not a call.
        template = function.parent if function.parent is not None and \
            function.parent.type == "template_declaration" else None
        parameters = template.child_by_field_name("parameters") if template is not None else None
        self.type_names = {node_text(p.named_children[-1]) for p in (parameters.named_children if parameters else [])
                           if p.type == "type_parameter_declaration" and p.named_children}

    # ------------------------------------------------------------------ structure
    def build(self) -> PointKernel:
        self._parameters()
        body = self.function.child_by_field_name("body")
        if body is None:
            raise NotPointwise
        statements = [c for c in body.named_children if c.type != "comment" and not is_pragma(c)]
        guard: Node | None = None
        negated = False
        work: list[Node] = []
        index = 0
        while index < len(statements):
            statement = statements[index]
            if statement.type == "declaration" and self._coordinate(statement):
                index += 1
                continue
            if statement.type == "declaration" and self._pure_declaration(statement):
                index += 1
                continue
            if statement.type == "if_statement" and guard is None and self.values.coordinates:
                condition = statement.child_by_field_name("condition")
                consequence = statement.child_by_field_name("consequence")
                if statement.child_by_field_name("alternative") is not None or condition is None or consequence is None:
                    raise NotPointwise
                if _is_return(consequence):
                    guard, negated = condition, True
                    index += 1
                    continue
                if index == len(statements) - 1:
                    guard = condition
                    inner = consequence.named_children if consequence.type == "compound_statement" else [consequence]
                    inner = [c for c in inner if c.type != "comment" and not is_pragma(c)]
                    while inner and inner[0].type == "declaration" and self._pure_declaration(inner[0]):
                        inner = inner[1:]
                    work = inner
                    break
            work = statements[index:]
            break
        if guard is None or not work or not self.values.coordinates:
            raise NotPointwise
        bounds = GuardBounds(self.values, self.block, self.grid).bounds(guard, negated)
        guard_text = node_text(strip(guard))
        guard_text = f"!({guard_text})" if negated else guard_text
        if any(c.axis == "x" for c in self.values.coordinates):
            decomposed = MixedRadix(self.values).linearise(bounds, self.prelude, self.prelude_nodes)
            if decomposed is not None:
                bounds, self.linear, self.prelude, self.prelude_nodes = decomposed
                guard_text = " && ".join(
                    (f"{c.name} >= {bounds[c.name].lower} && " if bounds[c.name].lower != "0" else "") +
                    f"{c.name} < {bounds[c.name].upper}" for c in self.values.coordinates)
        self.values.bounds = bounds
        scanner = WorkScanner(self.values, self.type_names, self.allow_atomics)
        for statement in work:
            scanner.check_pointwise(statement)
        scanner.mutable = scanner.assigned_names(work)
        scanner.loop_names = {node_text(_declared_name(n.child_by_field_name("initializer")))
                           for statement in work for n in walk(statement) if n.type == "for_statement"} - {""}
        accesses: list[Access] = []
        loops: dict[str, LoopRange] = {}
        for statement in work:
            scanner.scan(statement, accesses, loops)
        return PointKernel(
            text=self.text,
            params=self.values.params,
            pointers=self.values.pointers,
            coordinates=tuple(self.values.coordinates),
            bounds=bounds,
            guard=guard_text,
            prelude=tuple(self.prelude),
            work=tuple(node_text(s) for s in work),
            work_start=work[0].start_byte,
            work_end=work[-1].end_byte,
            accesses=tuple(accesses),
            loops=loops,
            identifiers=frozenset(node_text(n) for n in walk(self.function) if n.type == "identifier"),
            work_nodes=tuple(work),
            linear=self.linear,
            atomics=tuple(scanner.atomics),
            symbols=dict(self.values.env),
            clamps=dict(self.values.clamps),
        )

    def _parameters(self) -> None:
        declarator = self.function.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        params = declarator.child_by_field_name("parameters") if declarator is not None else None
        if params is None:
            raise NotPointwise
        for param in params.named_children:
            if param.type != "parameter_declaration":
                raise NotPointwise
            inner = param.child_by_field_name("declarator")
            is_pointer = False
            while inner is not None and inner.type != "identifier":
                if inner.type == "pointer_declarator":
                    is_pointer = True
                elif inner.type != "type_qualifier":
                    raise NotPointwise  # arrays, references, function pointers
                inner = inner.child_by_field_name("declarator")
            if inner is None:
                raise NotPointwise
            name = node_text(inner)
            base = node_text(param.child_by_field_name("type"))
            whole = node_text(param)
            self.values.params[name] = " ".join(whole[: whole.rfind(name)].split())
            if is_pointer:
                self.values.pointers[name] = base
            else:
                self.values.env[name] = Poly.atom(name)

    def _coordinate(self, statement: Node) -> bool:
        """`int x = <global thread id along an axis>;` (one declarator)."""
        declarators = statement.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            return False
        target = declarators[0].child_by_field_name("declarator")
        value = declarators[0].child_by_field_name("value")
        if target is None or target.type != "identifier" or value is None:
            return False
        poly = self.values.poly(value)
        for axis in AXES:
            if self._is_global_id(poly, axis):
                name = node_text(target)
                if any(c.name == name or c.axis == axis for c in self.values.coordinates):
                    raise NotPointwise
                type_text = " ".join(node_text(c) for c in statement.children
                                     if c.type in ("type_qualifier", "primitive_type", "sized_type_specifier",
                                                   "type_identifier"))
                if not type_text or "float" in type_text or "double" in type_text:
                    raise NotPointwise
                self.values.coordinates.append(Coordinate(name, type_text, axis))
                self.values.env[name] = Poly.atom(name)
                return True
        return False

    def _is_global_id(self, poly: Poly, axis: str) -> bool:
        thread, block, dim = f"threadIdx.{axis}", f"blockIdx.{axis}", f"blockDim.{axis}"
        size = self.block[AXES.index(axis)] if self.block is not None else None
        thread_id = Poly.of({(block, dim): 1, (thread,): 1}) if block < dim else Poly.of({(dim, block): 1, (thread,): 1})
        if poly == thread_id:
            return True
        if size is not None and poly == Poly.of({(block,): size, (thread,): 1}):
            return True
        # `blockIdx.z` alone when the block is one thread deep along that axis.
        return size == 1 and poly == Poly.atom(block)

    def _pure_declaration(self, statement: Node) -> bool:
        """`int i = y * W + x;`: integer locals computed from coordinates and scalars only."""
        if any(node_text(c) in ("static", "__shared__", "extern") for c in statement.children):
            return False
        type_node = statement.child_by_field_name("type")
        if type_node is None or node_text(type_node) in ("float", "double", "half", "auto"):
            return False
        names = []
        for declarator in statement.children_by_field_name("declarator"):
            if declarator.type != "init_declarator":
                return False
            target = declarator.child_by_field_name("declarator")
            value = declarator.child_by_field_name("value")
            if target is None or target.type != "identifier" or value is None:
                return False
            if any(n.type in ("subscript_expression", "call_expression", "pointer_expression", "assignment_expression",
                              "update_expression") for n in walk(value)):
                return False
            poly = self.values.poly(value)
            if poly.thread_dependent or any(a.startswith(("threadIdx", "blockIdx", "blockDim", "gridDim"))
                                            for a in poly.atoms()):
                return False
            names.append((node_text(target), poly, value))
        if not self.values.coordinates:
            return False
        scalars = {name for name in self.values.params if name not in self.values.pointers}
        for name, poly, value in names:
            self.values.env[name] = poly
            if poly.atoms() <= scalars:  # `OW = W - 2`: a guard may bound a coordinate by it
                self.values.scalar_locals[name] = value
        self.prelude.append(node_text(statement))
        self.prelude_nodes.append(statement)
        return True


def is_pragma(node: Node) -> bool:
    """`#pragma unroll` and friends between statements: compiler hints, not work (kept verbatim
    in the text a rewrite reuses)."""
    return node.type == "preproc_call" and node_text(node.child_by_field_name("directive")) == "#pragma"


def _declared_name(declaration: Node | None) -> Node | None:
    if declaration is None or declaration.type != "declaration":
        return None
    declarators = declaration.children_by_field_name("declarator")
    if len(declarators) != 1:
        return None
    target = declarators[0].child_by_field_name("declarator") if declarators[0].type == "init_declarator" \
        else declarators[0]
    return target if target is not None and target.type == "identifier" else None


def _is_return(statement: Node) -> bool:
    if statement.type == "return_statement":
        return statement.named_child_count == 0
    return statement.type == "compound_statement" and [c.type for c in statement.named_children
                                                        if c.type != "comment"] == ["return_statement"] and \
        statement.named_children[0].named_child_count == 0



__all__ = [
    "AXES", "PURE_CALLS", "Access", "AtomicUpdate", "Bound", "Clamp", "Condition", "Coordinate", "FreshNames",
    "LinearIndex", "LoopRange", "PointKernel", "coefficient_of", "expression_poly", "fresh", "is_pragma",
    "launch_block", "point_kernel", "returns_as_else", "unit_coordinate",
]
