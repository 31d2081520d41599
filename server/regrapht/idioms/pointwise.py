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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from tree_sitter import Node

from regrapht.cuda.affine import Poly, exact_quotient, opaque_atom, polynomial_quotient
from regrapht.cuda.extract import int_literal, node_text
from regrapht.cuda.intexpr import PolyFolder
from regrapht.cuda.parse import encode_source, make_parser
from regrapht.idioms.syntax import walk

AXES = ("x", "y", "z")
# Calls that only compute a value from their arguments: work calling anything else is not
# known to be pointwise (it might write memory or synchronise).
PURE_CALLS = frozenset({
    "min", "max", "fminf", "fmaxf", "fmin", "fmax", "abs", "fabsf", "fabs", "sqrtf", "sqrt", "rsqrtf", "expf",
    "exp", "__expf", "logf", "log", "__logf", "log1pf", "expm1f", "sinf", "cosf", "tanf", "tanhf", "tanh",
    "sin", "cos", "erff", "erf", "powf", "pow", "floorf", "ceilf", "roundf", "truncf", "fmaf", "fma",
    "exp2f", "log2f", "__fdividef", "__saturatef", "__ldg", "copysignf", "hypotf", "cbrtf", "rintf",
    "__float2int_rn", "__int2float_rn", "static_cast", "float", "int", "double", "unsigned",
})
_GEOMETRY = ("threadIdx", "blockIdx", "blockDim", "gridDim")


@dataclass(frozen=True)
class Coordinate:
    name: str
    type: str  # as declared, e.g. "int", "const unsigned int"
    axis: str  # "x", "y" or "z": the thread-id axis it comes from


@dataclass(frozen=True)
class LinearIndex:
    """A 1-D global thread index that the kernel decodes into coordinates (`i = t / n`,
    `j = t % n`): the rewrites bind the coordinates and re-define it from them."""

    name: str
    type: str
    total: str  # its exclusive bound, as written (a launch covers it)
    definition: str  # `int t = i * n + j;`: the index from the coordinates


@dataclass(frozen=True)
class Bound:
    """`lower <= coordinate < upper`; `upper` is a launch-expressible text (scalars, literals)."""

    lower: str  # "0" when the guard gives none
    upper: str


@dataclass(frozen=True)
class Access:
    array: str  # the pointer parameter
    index: Poly  # over coordinates, loop variables, scalars (opaque atoms for the rest)
    index_text: str
    start: int  # byte offsets of the whole subscript expression in `PointKernel.text`
    end: int
    write: bool
    read: bool
    loop_vars: tuple[str, ...]  # enclosing loop variables, outermost first
    # Comparisons that must hold for the access to run (enclosing `if`s, `?:`), and whether it
    # also runs under some condition not listed (an `else`, `continue`, `&&` operand, `while`).
    conditions: tuple[Condition, ...] = ()
    conditional: bool = False


@dataclass(frozen=True)
class Condition:
    """`left op right` with both sides as index polynomials; texts for re-emitting them."""

    left: Poly
    op: str  # "<", "<=", ">", ">="
    right: Poly
    right_text: str
    left_text: str


class _Scope(NamedTuple):
    loop_vars: tuple[str, ...]
    conditions: tuple[Condition, ...]
    unknown: bool


@dataclass(frozen=True)
class AtomicUpdate:
    """`atomicAdd(&array[index], value)` (or `array + index`) in the work."""

    array: str
    index: Poly
    index_text: str
    array_start: int  # byte offsets of the array's name in the call (to redirect it)
    array_end: int
    value_text: str
    conditional: bool  # under any condition or loop
    # byte offsets of the whole `atomicAdd(...)` call, and whether it is a statement of its own
    # (its old value unused), so a rewrite may replace the call by recording its operands
    call_start: int = -1
    call_end: int = -1
    statement: bool = False


@dataclass(frozen=True)
class LoopRange:
    variable: str
    first: int  # inclusive constant range of the variable
    last: int


@dataclass(frozen=True)
class Clamp:
    """An index clamped to a range, `min(max(c + shift, lower), upper)` of a coordinate `c`
    (either side may be absent), written with `min`/`max` or as `c > 0 ? c - 1 : 0`."""

    coordinate: str
    shift: int
    lower: str | None  # scalars and literals (launch-expressible)
    upper: str | None


@dataclass(frozen=True)
class PointKernel:
    text: str  # the kernel's whole definition
    params: Mapping[str, str]  # parameter name -> type text ("const float *")
    pointers: Mapping[str, str]  # pointer parameter name -> element type ("float")
    coordinates: tuple[Coordinate, ...]
    bounds: Mapping[str, Bound]  # per coordinate name
    guard: str  # condition text under which the work runs, over coordinates and scalars
    prelude: tuple[str, ...]  # pure declarations (statement texts) the guard or work may use
    work: tuple[str, ...]  # the statements run at each point, in order
    work_start: int  # byte offsets of the work statements in `text` (first start, last end)
    work_end: int
    accesses: tuple[Access, ...]  # subscripts of pointer parameters in the work
    loops: Mapping[str, LoopRange]  # constant-range loop variables of the work
    identifiers: frozenset[str]  # every identifier in the kernel (to pick fresh names)
    linear: LinearIndex | None = None  # the 1-D thread index the coordinates were decoded from
    atomics: tuple[AtomicUpdate, ...] = ()  # only when asked for (`point_kernel(atomics=True)`)
    work_nodes: tuple[Node, ...] = field(default=(), compare=False, repr=False)  # the statements' trees
    symbols: Mapping[str, Poly] = field(default_factory=dict, compare=False, repr=False)  # locals at the end
    clamps: Mapping[str, Clamp] = field(default_factory=dict, compare=False, repr=False)  # opaque atom -> clamp

    def coordinate(self, name: str) -> Coordinate | None:
        return next((c for c in self.coordinates if c.name == name), None)

    def reads(self, array: str) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.array == array and a.read)

    def writes(self, array: str) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.array == array and a.write)

    @property
    def written(self) -> frozenset[str]:
        return frozenset(a.array for a in self.accesses if a.write)

    def work_with(self, replacements: Mapping[tuple[int, int], str]) -> str:
        """The work statements' text with the byte ranges `(start, end)` replaced."""
        data = encode_source(self.text)
        out = []
        cursor = self.work_start
        for (start, end), text in sorted(replacements.items()):
            out.append(data[cursor:start].decode())
            out.append(text)
            cursor = end
        out.append(data[cursor : self.work_end].decode())
        return "".join(out)


def fresh(kernel: PointKernel, base: str) -> str:
    """`base` with a suffix that no identifier of the kernel has."""
    name = f"{base}_rg"
    while name in kernel.identifiers:
        name += "_"
    return name


class FreshNames:
    """Fresh names for one rewrite: each free in the kernel and distinct from every name given
    before. Bases built from the kernel's own names (`f"{coordinate}0"`) can meet fixed ones
    (`l0`, a tile counter, for a coordinate `l`); `fresh` alone would give both the same name."""

    def __init__(self, kernel: PointKernel) -> None:
        self._taken = set(kernel.identifiers)

    def __call__(self, base: str) -> str:
        name = f"{base}_rg"
        while name in self._taken:
            name += "_"
        self._taken.add(name)
        return name


# ---------------------------------------------------------------------------------------------


class _NotPointwise(Exception):
    """Internal: the kernel leaves the recognised shape (caught in `point_kernel` only)."""


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
    except _NotPointwise:
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


def _strip(node: Node | None) -> Node | None:
    while node is not None and node.type in ("parenthesized_expression", "condition_clause") and node.named_children:
        node = node.named_children[-1] if node.type == "condition_clause" else node.named_children[0]
    return node


class _PointValues(PolyFolder):
    """The integer evaluator over a point kernel's locals: a name with no definition is opaque
    (not a scalar of its own), a clamp of a coordinate is an opaque atom the builder records."""

    def __init__(self, builder: _Builder) -> None:
        super().__init__(builder.constants)
        self.builder = builder

    def poly(self, node: Node | None, depth: int = 0) -> Poly:
        return super().poly(_strip(node), depth)

    def local_value(self, name: str) -> Poly | None:
        return self.builder.env.get(name)

    def unknown_name(self, name: str, node: Node) -> Poly:
        return self.opaque(node)

    def opaque(self, node: Node) -> Poly:
        return self.builder._opaque(node)

    def extension(self, node: Node, depth: int) -> Poly | None:
        if node.type not in ("call_expression", "conditional_expression"):
            return None
        clamp = self.builder._clamp(node)
        if clamp is None:
            return None
        atom = self.opaque(node)
        self.builder.clamps[atom.terms[0][0][0]] = clamp
        return atom


class _Builder:
    def __init__(self, text: str, data: bytes, function: Node, block: tuple[int, int, int] | None,
                 constants: dict[str, int]) -> None:
        self.text = text
        self.data = data
        self.function = function
        self.block = block
        self.constants = constants
        self.env: dict[str, Poly] = {}
        self.params: dict[str, str] = {}
        self.pointers: dict[str, str] = {}
        self.coordinates: list[Coordinate] = []
        self.prelude: list[str] = []
        self.prelude_nodes: list[Node] = []
        self.linear: LinearIndex | None = None
        self.mutable: set[str] = set()
        self.allow_atomics = False
        self.grid: tuple[str, ...] | None = None
        # Template type parameters: `T(1)` is a conversion, not a call.
        template = function.parent if function.parent is not None and \
            function.parent.type == "template_declaration" else None
        parameters = template.child_by_field_name("parameters") if template is not None else None
        self.type_names = {node_text(p.named_children[-1]) for p in (parameters.named_children if parameters else [])
                           if p.type == "type_parameter_declaration" and p.named_children}
        self.atomics: list[AtomicUpdate] = []
        self.loop_names: set[str] = set()
        self.scalar_locals: dict[str, Node] = {}  # locals defined from scalars and literals only
        self.clamps: dict[str, Clamp] = {}  # opaque atoms that are clamped coordinates
        self.values = _PointValues(self)

    # ------------------------------------------------------------------ structure
    def build(self) -> PointKernel:
        self._parameters()
        body = self.function.child_by_field_name("body")
        if body is None:
            raise _NotPointwise
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
            if statement.type == "if_statement" and guard is None and self.coordinates:
                condition = statement.child_by_field_name("condition")
                consequence = statement.child_by_field_name("consequence")
                if statement.child_by_field_name("alternative") is not None or condition is None or consequence is None:
                    raise _NotPointwise
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
        if guard is None or not work or not self.coordinates:
            raise _NotPointwise
        bounds = self._bounds(guard, negated)
        guard_text = node_text(_strip(guard))
        guard_text = f"!({guard_text})" if negated else guard_text
        if any(c.axis == "x" for c in self.coordinates):
            decomposed = self._linearise(bounds)
            if decomposed is not None:
                bounds = decomposed
                guard_text = " && ".join(
                    (f"{c.name} >= {bounds[c.name].lower} && " if bounds[c.name].lower != "0" else "") +
                    f"{c.name} < {bounds[c.name].upper}" for c in self.coordinates)
        self.bounds = bounds
        for statement in work:
            self._check_pointwise(statement)
        self.mutable = self._assigned_names(work)
        self.loop_names = {node_text(_declared_name(n.child_by_field_name("initializer")))
                           for statement in work for n in walk(statement) if n.type == "for_statement"} - {""}
        accesses: list[Access] = []
        loops: dict[str, LoopRange] = {}
        for statement in work:
            self._scan(statement, _Scope((), (), False), accesses, loops)
        return PointKernel(
            text=self.text,
            params=self.params,
            pointers=self.pointers,
            coordinates=tuple(self.coordinates),
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
            atomics=tuple(self.atomics),
            symbols=dict(self.env),
            clamps=dict(self.clamps),
        )

    def _parameters(self) -> None:
        declarator = self.function.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        params = declarator.child_by_field_name("parameters") if declarator is not None else None
        if params is None:
            raise _NotPointwise
        for param in params.named_children:
            if param.type != "parameter_declaration":
                raise _NotPointwise
            inner = param.child_by_field_name("declarator")
            is_pointer = False
            while inner is not None and inner.type != "identifier":
                if inner.type == "pointer_declarator":
                    is_pointer = True
                elif inner.type != "type_qualifier":
                    raise _NotPointwise  # arrays, references, function pointers
                inner = inner.child_by_field_name("declarator")
            if inner is None:
                raise _NotPointwise
            name = node_text(inner)
            base = node_text(param.child_by_field_name("type"))
            whole = node_text(param)
            self.params[name] = " ".join(whole[: whole.rfind(name)].split())
            if is_pointer:
                self.pointers[name] = base
            else:
                self.env[name] = Poly.atom(name)

    def _coordinate(self, statement: Node) -> bool:
        """`int x = <global thread id along an axis>;` (one declarator)."""
        declarators = statement.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            return False
        target = declarators[0].child_by_field_name("declarator")
        value = declarators[0].child_by_field_name("value")
        if target is None or target.type != "identifier" or value is None:
            return False
        poly = self.poly(value)
        for axis in AXES:
            if self._is_global_id(poly, axis):
                name = node_text(target)
                if any(c.name == name or c.axis == axis for c in self.coordinates):
                    raise _NotPointwise
                type_text = " ".join(node_text(c) for c in statement.children
                                     if c.type in ("type_qualifier", "primitive_type", "sized_type_specifier",
                                                   "type_identifier"))
                if not type_text or "float" in type_text or "double" in type_text:
                    raise _NotPointwise
                self.coordinates.append(Coordinate(name, type_text, axis))
                self.env[name] = Poly.atom(name)
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
            poly = self.poly(value)
            if poly.thread_dependent or any(a.startswith(("threadIdx", "blockIdx", "blockDim", "gridDim"))
                                            for a in poly.atoms()):
                return False
            names.append((node_text(target), poly, value))
        if not self.coordinates:
            return False
        scalars = {name for name in self.params if name not in self.pointers}
        for name, poly, value in names:
            self.env[name] = poly
            if poly.atoms() <= scalars:  # `OW = W - 2`: a guard may bound a coordinate by it
                self.scalar_locals[name] = value
        self.prelude.append(node_text(statement))
        self.prelude_nodes.append(statement)
        return True

    def _linearise(self, bounds: dict[str, Bound]) -> dict[str, Bound] | None:
        """Coordinates decoded from a 1-D index `t` by `t % M`, `(t / D) % M` and `t / D` in a
        mixed radix (D of each part = D * M of the previous one, the last part's bound times
        its D = t's bound); None when the declarations are not such a decomposition."""
        index = next(c for c in self.coordinates if c.axis == "x")
        others = [c for c in self.coordinates if c.axis != "x"]  # (a channel on y: one value per block row)
        bound = bounds[index.name]
        total = expression_poly(bound.upper, self.constants)
        if bound.lower != "0" or total is None:
            return None
        parts: list[tuple[str, str, Poly, Poly | None, Node]] = []
        for statement in self.prelude_nodes:
            type_text = " ".join(node_text(statement.child_by_field_name("type")).split())
            for declarator in statement.children_by_field_name("declarator"):
                value = _strip(declarator.child_by_field_name("value"))
                split = self._radix_part(value, index.name)
                if split is not None:
                    parts.append((node_text(declarator.child_by_field_name("declarator")), type_text, *split,
                                  statement))
        if len(parts) < 2:
            return None
        parts.sort(key=lambda part: _size_order(part[2]))
        divisor = Poly.const(1)
        for position, (_, _, part_divisor, modulus, _) in enumerate(parts):
            last = position == len(parts) - 1
            if part_divisor != divisor or (modulus is None) != last:
                return None
            if modulus is not None:
                product = divisor * modulus
                if product is None:
                    return None
                divisor = product
        quotient = _divide_poly(total, divisor)
        if quotient is None:
            return None
        # Every declaration holding a part must hold only parts (it is replaced by the binding).
        holders = {id(part[4]) for part in parts}
        named = {part[0] for part in parts}
        for statement in self.prelude_nodes:
            if id(statement) in holders and any(node_text(d.child_by_field_name("declarator")) not in named
                                                for d in statement.children_by_field_name("declarator")):
                return None
        kept = [(t, n) for t, n in zip(self.prelude, self.prelude_nodes, strict=True) if id(n) not in holders]
        terms = []
        new_bounds: dict[str, Bound] = {c.name: bounds[c.name] for c in others}
        self.coordinates = []
        for name, type_text, part_divisor, modulus, _ in parts:
            self.coordinates.append(Coordinate(name, type_text, "x"))
            self.env[name] = Poly.atom(name)
            terms.append(name if part_divisor.constant == 1 else f"{name} * ({part_divisor.text()})")
            new_bounds[name] = Bound("0", (modulus or quotient).text())
        self.coordinates.extend(others)
        definition = f"{index.type.replace('const ', '')} {index.name} = {' + '.join(reversed(terms))};"
        self.linear = LinearIndex(index.name, index.type, bound.upper, definition)
        decoded = Poly.const(0)
        for name, _, part_divisor, _, _ in parts:
            decoded = decoded + Poly.of({tuple(sorted((name, *m))): v for m, v in part_divisor.terms})
        self.env[index.name] = decoded
        self.prelude = [definition] + [t for t, _ in kept]
        self.prelude_nodes = [n for _, n in kept]
        for statement in self.prelude_nodes:  # re-read the other locals with the index re-defined
            for declarator in statement.children_by_field_name("declarator"):
                target = declarator.child_by_field_name("declarator")
                if target is not None:
                    self.env[node_text(target)] = self.poly(declarator.child_by_field_name("value"))
        return new_bounds

    def _radix_part(self, value: Node | None, index: str) -> tuple[Poly, Poly | None] | None:
        """(D, M) for `index % M` (D = 1), `(index / D) % M`, `index / D` (M None)."""
        if value is None or value.type != "binary_expression":
            return None
        op = node_text(value.child_by_field_name("operator"))
        left, right = _strip(value.child_by_field_name("left")), value.child_by_field_name("right")
        if right is None or left is None or op not in ("/", "%"):
            return None
        amount = self._scalar_poly(right)
        if amount is None:
            return None
        if left.type == "identifier" and node_text(left) == index:
            return (Poly.const(1), amount) if op == "%" else (amount, None)
        if op == "%" and left.type == "binary_expression" and node_text(left.child_by_field_name("operator")) == "/":
            inner_left = _strip(left.child_by_field_name("left"))
            divisor = self._scalar_poly(left.child_by_field_name("right"))
            if inner_left is not None and inner_left.type == "identifier" and node_text(inner_left) == index and \
                    divisor is not None:
                return divisor, amount
        return None

    def _scalar_poly(self, node: Node | None) -> Poly | None:
        """A polynomial of scalars (`n`, `C * W`, `16`, an extent `OW = W - 2`) whose one term, or
        whose term of highest degree, is positive; else None."""
        if node is None:
            return None
        poly = self.poly(node)
        if not poly.terms or not poly.atoms() <= set(self.params):
            return None
        top = max(poly.terms, key=lambda term: (len(term[0]), term[0]))
        return poly if top[1] > 0 else None

    def _bounds(self, guard: Node, negated: bool) -> dict[str, Bound]:
        """Per coordinate, its bounds from a conjunction (`!negated`) or disjunction of negated
        comparisons (`negated`, the early-return form)."""
        join = "||" if negated else "&&"
        terms: list[Node] = []
        stack: list[Node] = [guard]
        while stack:
            node = _strip(stack.pop())
            if node is None:
                raise _NotPointwise
            if node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == join:
                stack.extend((node.child_by_field_name("right"), node.child_by_field_name("left")))  # type: ignore[arg-type]
                continue
            terms.append(node)
        lower: dict[str, str] = {}
        upper: dict[str, str] = {}
        above_zero: set[str] = set()
        names = {c.name for c in self.coordinates}
        for term in terms:
            if term.type != "binary_expression":
                raise _NotPointwise
            op = node_text(term.child_by_field_name("operator"))
            left, right = term.child_by_field_name("left"), term.child_by_field_name("right")
            if left is None or right is None:
                raise _NotPointwise
            flip = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
            if op == ("==" if negated else "!=") and self._is_zero_test(left, right):
                # `if (x == 0 || ...) return;`: a coordinate is a thread id (>= 0), so x >= 1
                above_zero.add(node_text(_strip(left if node_text(_strip(left)) in names else right)))
                continue
            if op not in flip:
                raise _NotPointwise
            moved = self._moved_coordinate(left)
            if moved is None:
                left, right, op = right, left, flip[op]
                moved = self._moved_coordinate(left)
            if moved is None:
                raise _NotPointwise
            coordinate, shift = moved
            if negated:  # `x >= W` returns, so the work has `x < W`
                op = {"<": ">=", ">=": "<", ">": "<=", "<=": ">"}[op]
            bound = self._bound_text(right)
            if shift:  # `i + 1 >= n`: a bound on `i` moved by the constant (`i >= n - 1`)
                bound = f"({bound}) {'-' if shift > 0 else '+'} {abs(shift)}"
            if op == "<":
                upper[coordinate] = bound
            elif op == "<=":
                upper[coordinate] = f"{bound} + 1"
            elif op == ">=":
                lower[coordinate] = bound
            else:
                lower[coordinate] = f"{bound} + 1"
        for coordinate in above_zero:
            other = expression_poly(lower[coordinate], self.constants) if coordinate in lower else None
            if coordinate in lower and (other is None or other.constant is None or other.constant < 1):
                raise _NotPointwise  # two lower bounds, not known which is the tighter
            lower.setdefault(coordinate, "1")
        for unbounded in self.coordinates:
            if unbounded.name not in upper:
                extent = self._grid_extent(unbounded.axis)
                if extent is not None:
                    upper[unbounded.name] = extent
        if set(upper) != names:
            raise _NotPointwise  # a coordinate with no upper bound: its extent is the launch's
        # in the coordinates' order, not the set's: guards built from the bounds read the same every run
        return {c.name: Bound(lower.get(c.name, "0"), upper[c.name]) for c in self.coordinates}

    def _is_zero_test(self, left: Node, right: Node) -> bool:
        """`c == 0` or `0 == c` for a coordinate `c`."""
        names = {c.name for c in self.coordinates}
        return (node_text(_strip(left)) in names and self.poly(right) == Poly.const(0)) or \
            (node_text(_strip(right)) in names and self.poly(left) == Poly.const(0))

    def _moved_coordinate(self, node: Node | None) -> tuple[str, int] | None:
        """`(c, k)` when `node` is a coordinate `c` plus a constant `k` (`x`, `i + 1`, `(y - 2)`),
        with integer arithmetic only (no casts that could change the comparison's type)."""
        node = _strip(node)
        if node is None or any(n.type in ("cast_expression", "call_expression", "subscript_expression")
                               for n in walk(node)):
            return None
        value = self.poly(node)
        for coordinate in self.coordinates:
            shift = (value - Poly.atom(coordinate.name)).constant
            if shift is not None and (shift == 0 or node.type == "binary_expression"):
                return coordinate.name, shift
        return None

    def _grid_extent(self, axis: str) -> str | None:
        """The grid's extent along `axis` when a coordinate on it comes from `blockIdx` alone
        (block size 1) and the extent is an expression of scalar parameters and literals."""
        index = AXES.index(axis)
        if self.block is None or self.block[index] != 1 or self.grid is None:
            return None
        extent = self.grid[index] if index < len(self.grid) else "1"
        value = expression_poly(extent, self.constants)
        scalars = {name for name in self.params if name not in self.pointers}
        if value is None or not value.atoms() <= scalars:
            return None
        return " ".join(extent.split())

    def _bound_text(self, node: Node) -> str:
        """A bound's text over scalars and literals only (so a launch can use it): `#define`d
        constants by their values, locals declared before the guard from scalars (`OW = W - 2`) by
        their definitions, integer casts (`(size_t)nx`) by their operands (a launch expression has
        no casts; the kernel's own guard keeps them)."""
        return " ".join(self._scalar_text(node, 0).split())

    def _scalar_text(self, node: Node, depth: int) -> str:
        if depth > 8:
            raise _NotPointwise
        data = node.text or b""
        edits: list[tuple[int, int, str]] = []
        stack = [node]
        while stack:
            inner = stack.pop()
            kind = inner.type
            if kind in ("subscript_expression", "call_expression", "pointer_expression", "field_expression",
                        "assignment_expression", "update_expression"):
                raise _NotPointwise
            if kind == "cast_expression":
                type_text = node_text(inner.child_by_field_name("type"))
                value = inner.child_by_field_name("value")
                if value is None or any(word in type_text for word in ("float", "double", "half", "*")):
                    raise _NotPointwise
                edits.append((inner.start_byte, inner.end_byte, f"({self._scalar_text(value, depth + 1)})"))
                continue
            if kind == "identifier":
                name = node_text(inner)
                if name in self.pointers:
                    raise _NotPointwise
                if name in self.constants:
                    edits.append((inner.start_byte, inner.end_byte, str(self.constants[name])))
                elif name in self.scalar_locals:
                    edits.append((inner.start_byte, inner.end_byte,
                                  f"({self._scalar_text(self.scalar_locals[name], depth + 1)})"))
                elif name not in self.params:
                    raise _NotPointwise
                continue
            stack.extend(inner.children)
        for start, end, replacement in sorted(edits, reverse=True):
            data = data[:start - node.start_byte] + replacement.encode() + data[end - node.start_byte:]
        return data.decode()

    def _check_pointwise(self, statement: Node) -> None:
        for node in walk(statement):
            kind = node.type
            if kind in ("return_statement", "goto_statement", "break_statement", "lambda_expression", "asm_statement"):
                raise _NotPointwise  # `break` out of the work's own loops is fine but rare: keep it simple
            if kind == "field_expression":
                argument = node.child_by_field_name("argument")
                if argument is not None and node_text(argument) in _GEOMETRY:
                    raise _NotPointwise
            if kind == "declaration":
                if any(node_text(c) in ("__shared__", "static", "extern") for c in node.children):
                    raise _NotPointwise
                if any(d.type == "pointer_declarator" or (d.type == "init_declarator" and
                       (d.child_by_field_name("declarator") or d).type == "pointer_declarator")
                       for d in node.children_by_field_name("declarator")):
                    raise _NotPointwise  # a local pointer could alias a parameter
            if kind == "call_expression":
                function = node.child_by_field_name("function")
                name = node_text(function.child_by_field_name("name") if function is not None and
                                 function.type == "template_function" else function)
                if name not in PURE_CALLS and name not in self.type_names and \
                        not (name == "atomicAdd" and self.allow_atomics):
                    raise _NotPointwise
            if kind in ("assignment_expression", "update_expression"):
                target = node.child_by_field_name("left") or node.child_by_field_name("argument")
                target = _strip(target)
                if target is None:
                    raise _NotPointwise
                if target.type == "identifier":
                    if node_text(target) in self.params or any(c.name == node_text(target) for c in self.coordinates):
                        raise _NotPointwise  # re-binding a parameter or a coordinate
                elif target.type != "subscript_expression":
                    raise _NotPointwise  # `*p = v`, fields: not tracked
            if kind == "pointer_expression" and node_text(node.child_by_field_name("operator")) == "&" and \
                    not self._atomic_target(node):
                raise _NotPointwise

    def _atomic_target(self, node: Node) -> bool:
        """`&a[i]` as the first argument of an allowed `atomicAdd`."""
        arguments = node.parent
        call = arguments.parent if arguments is not None else None
        return self.allow_atomics and call is not None and call.type == "call_expression" and \
            node_text(call.child_by_field_name("function")) == "atomicAdd" and arguments is not None and \
            arguments.named_children[:1] == [node]

    def _assigned_names(self, work: list[Node]) -> set[str]:
        names: set[str] = set()
        for statement in work:
            for node in walk(statement):
                if node.type in ("assignment_expression", "update_expression"):
                    target = _strip(node.child_by_field_name("left") or node.child_by_field_name("argument"))
                    if target is not None and target.type == "identifier":
                        names.add(node_text(target))
        return names

    def _scan(self, node: Node, scope: _Scope, accesses: list[Access], loops: dict[str, LoopRange]) -> None:
        """Accesses and loop ranges under `node`, in source order, tracking local definitions
        and the conditions each access runs under."""
        kind = node.type
        if kind in ("for_statement", "while_statement", "do_statement"):
            variable = self._loop_header(node, loops) if kind == "for_statement" else None
            exits = any(n.type in ("continue_statement", "break_statement") and not self._offset_only_exit(n, node)
                        for n in walk(node))
            inner = scope._replace(loop_vars=scope.loop_vars + ((variable,) if variable else ()),
                                   unknown=scope.unknown or exits or kind != "for_statement")
            for child in node.children:
                if child.type == "declaration" and child == node.child_by_field_name("initializer"):
                    continue
                self._scan(child, inner, accesses, loops)
            return
        if kind in ("if_statement", "conditional_expression"):
            condition = node.child_by_field_name("condition")
            consequence = node.child_by_field_name("consequence")
            alternative = node.child_by_field_name("alternative")
            if condition is not None and self._offset_only(condition):
                # `if (dx == 0 && dy == 0) continue;`: picks offsets, says nothing of the point
                for part in (condition, consequence, alternative):
                    if part is not None:
                        self._scan(part, scope, accesses, loops)
                return
            if condition is not None:
                self._scan(condition, scope, accesses, loops)
                terms = self._conditions(condition)
                then_scope = scope._replace(conditions=scope.conditions + (terms or ()),
                                            unknown=scope.unknown or terms is None)
            else:
                then_scope = scope._replace(unknown=True)
            if consequence is not None:
                self._scan(consequence, then_scope, accesses, loops)
            if alternative is not None:
                # `if (x == 0 || x == W - 1 || ...) copy; else stencil`: the else branch runs under
                # the negated disjunction (`x != 0` is `x > 0` where the guard gives x >= 0)
                others = self._negated_at_bounds(condition) if condition is not None else None
                else_scope = scope._replace(conditions=scope.conditions + others) if others is not None \
                    else scope._replace(unknown=True)
                self._scan(alternative, else_scope, accesses, loops)
            return
        if kind == "compound_statement":
            for child in node.children:
                self._scan(child, scope, accesses, loops)
                if child.type == "if_statement":
                    consequence = child.child_by_field_name("consequence")
                    body = consequence.named_children if consequence is not None and \
                        consequence.type == "compound_statement" else [consequence]
                    exit_node = body[0] if len(body) == 1 else None
                    condition = child.child_by_field_name("condition")
                    if exit_node is not None and exit_node.type == "continue_statement" and \
                            not (condition is not None and self._offset_only(condition)):
                        after = self._skip_guard(exit_node)
                        scope = scope._replace(conditions=scope.conditions + after) if after is not None \
                            else scope._replace(unknown=True)
            return
        if kind == "binary_expression" and node_text(node.child_by_field_name("operator")) in ("&&", "||"):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None:
                self._scan(left, scope, accesses, loops)
            if right is not None:
                self._scan(right, scope._replace(unknown=True), accesses, loops)
            return
        if kind == "declaration":
            for declarator in node.children_by_field_name("declarator"):
                if declarator.type == "init_declarator":
                    target = declarator.child_by_field_name("declarator")
                    value = declarator.child_by_field_name("value")
                    if value is not None:
                        self._scan(value, scope, accesses, loops)
                    if target is not None and target.type == "identifier" and value is not None:
                        name = node_text(target)
                        self.env[name] = Poly.atom(opaque_atom(name, "", False)) if name in self.mutable \
                            else self.poly(value)
                elif declarator.type == "identifier":
                    self.env[node_text(declarator)] = Poly.atom(opaque_atom(node_text(declarator), "", False))
                else:
                    self._scan(declarator, scope, accesses, loops)
            return
        if kind == "call_expression" and node_text(node.child_by_field_name("function")) == "atomicAdd":
            self._atomic(node, scope, accesses, loops)
            return
        if kind == "subscript_expression":
            base = node.child_by_field_name("argument")
            index = _subscript_index(node)
            if base is not None and base.type == "identifier" and node_text(base) in self.pointers and index is not None:
                read, write = _access_kind(node)
                accesses.append(Access(node_text(base), self.poly(index), node_text(index), node.start_byte,
                                       node.end_byte, write, read, scope.loop_vars, scope.conditions, scope.unknown))
            elif base is not None and base.type != "identifier":
                raise _NotPointwise  # `t[i][j]` on parameters, casts: not tracked
            if index is not None:
                self._scan(index, scope, accesses, loops)
            return
        for child in node.children:
            self._scan(child, scope, accesses, loops)

    def _atomic(self, node: Node, scope: _Scope, accesses: list[Access], loops: dict[str, LoopRange]) -> None:
        arguments = node.child_by_field_name("arguments")
        args = [a for a in (arguments.named_children if arguments else []) if a.type != "comment"]
        if len(args) != 2:
            raise _NotPointwise
        target = _strip(args[0])
        array: Node | None = None
        index: Node | None = None
        if target is not None and target.type == "pointer_expression" and \
                node_text(target.child_by_field_name("operator")) == "&":
            inner = _strip(target.child_by_field_name("argument"))
            if inner is not None and inner.type == "subscript_expression":
                array, index = inner.child_by_field_name("argument"), _subscript_index(inner)
        elif target is not None and target.type == "binary_expression" and \
                node_text(target.child_by_field_name("operator")) == "+":
            array, index = target.child_by_field_name("left"), target.child_by_field_name("right")
            if index is not None and index.type == "identifier" and node_text(index) in self.pointers:
                array, index = index, array
        if array is None or index is None or array.type != "identifier" or node_text(array) not in self.pointers:
            raise _NotPointwise  # an atomic on something other than a pointer parameter's element
        self._scan(index, scope, accesses, loops)
        self._scan(args[1], scope, accesses, loops)
        self.atomics.append(AtomicUpdate(node_text(array), self.poly(index), node_text(index), array.start_byte,
                                         array.end_byte, node_text(args[1]),
                                         bool(scope.loop_vars or scope.conditions or scope.unknown),
                                         node.start_byte, node.end_byte,
                                         node.parent is not None and node.parent.type == "expression_statement"))

    def _offset_only(self, condition: Node) -> bool:
        """A condition over the work's loop variables and literals only."""
        for node in walk(condition):
            if node.type in ("subscript_expression", "call_expression", "field_expression", "assignment_expression"):
                return False
            if node.type == "identifier" and node_text(node) not in self.loop_names:
                return False
        return True

    def _offset_only_exit(self, exit_node: Node, loop: Node) -> bool:
        """A `continue` whose enclosing conditions up to `loop` are all offset-only."""
        if exit_node.type != "continue_statement":
            return False
        if self._skip_guard(exit_node) is not None:
            return True  # `if (iy < 0 || iy >= H) continue;`: later statements see its negation
        current = exit_node.parent
        while current is not None and current != loop:
            if current.type in ("for_statement", "while_statement", "do_statement"):
                return True  # it continues an inner loop
            if current.type == "if_statement":
                condition = current.child_by_field_name("condition")
                if condition is None or not self._offset_only(condition):
                    return False
            current = current.parent
        return True

    def _skip_guard(self, exit_node: Node) -> tuple[Condition, ...] | None:
        """For a `continue` that is the whole of an `if` without `else` standing in a block, the
        comparisons that hold after that `if` (the negation of a disjunction of comparisons)."""
        statement = exit_node.parent
        if statement is not None and statement.type == "compound_statement" and \
                [c.type for c in statement.named_children if c.type != "comment"] == ["continue_statement"]:
            statement = statement.parent
        block = statement.parent if statement is not None else None
        loop = block.parent if block is not None else None
        if statement is None or statement.type != "if_statement" or \
                statement.child_by_field_name("alternative") is not None or block is None or \
                block.type != "compound_statement" or loop is None or \
                loop.type not in ("for_statement", "while_statement", "do_statement") or \
                loop.child_by_field_name("body") != block:
            return None  # the skip must cover the rest of the loop body: the block it stands in
        condition = statement.child_by_field_name("condition")
        return self._negated(condition) if condition is not None else None

    def _negated(self, condition: Node) -> tuple[Condition, ...] | None:
        """`!(a < b || c >= d)` as the conjunction `a >= b && c < d`; None for other conditions."""
        return self._comparisons(condition, "||", {"<": ">=", ">=": "<", ">": "<=", "<=": ">"})

    def _negated_at_bounds(self, condition: Node) -> tuple[Condition, ...] | None:
        """The negation of a disjunction of comparisons, where a term `c == e` on a coordinate
        may be one of its guard's ends (`c == 0` with `c >= 0`: its negation is `c > 0`; `c == W - 1`
        with `c < W`: `c < W - 1`); None for anything else."""
        return self._comparisons(condition, "||", {"<": ">=", ">=": "<", ">": "<=", "<=": ">"}, equal_at_ends=True)

    def _unequal_at_end(self, left: Node, right: Node) -> Condition | None:
        """`left != right` as a strict bound when `left` is a coordinate and `right` one end of
        its guard range."""
        name = node_text(_strip(left))
        bound = getattr(self, "bounds", {}).get(name)
        if bound is None:
            return None
        value = self.poly(right)
        lower, upper = expression_poly(bound.lower, self.constants), expression_poly(bound.upper, self.constants)
        text = " ".join(node_text(right).split())
        if lower is not None and value == lower:
            return Condition(Poly.atom(name), ">", value, text, name)
        if upper is not None and value == upper - Poly.const(1):
            return Condition(Poly.atom(name), "<", value, text, name)
        return None

    def _conditions(self, condition: Node) -> tuple[Condition, ...] | None:
        """A conjunction of comparisons as `Condition`s; None for any other condition."""
        return self._comparisons(condition, "&&", {"<": "<", "<=": "<=", ">": ">", ">=": ">="})

    def _comparisons(self, condition: Node, join: str, operators: Mapping[str, str], *,
                     equal_at_ends: bool = False) -> tuple[Condition, ...] | None:
        """The comparisons joined by `join` in `condition`, each operator mapped by `operators`
        (identity, or negation for a disjunction); with `equal_at_ends`, also `c == e` where `e` is
        an end of coordinate `c`'s guard range, negated to a strict bound; None for any other
        condition or a load."""
        terms: list[Condition] = []
        stack: list[Node | None] = [condition]
        while stack:
            node = _strip(stack.pop())
            if node is None or node.type != "binary_expression":
                return None
            op = node_text(node.child_by_field_name("operator"))
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op == join:
                stack.extend((right, left))
                continue
            if left is None or right is None or \
                    any(n.type in ("subscript_expression", "call_expression") for n in walk(node)):
                return None
            if op in operators:
                terms.append(Condition(self.poly(left), operators[op], self.poly(right),
                                       " ".join(node_text(right).split()), " ".join(node_text(left).split())))
                continue
            term = (self._unequal_at_end(left, right) or self._unequal_at_end(right, left)) \
                if op == "==" and equal_at_ends else None
            if term is None:
                return None
            terms.append(term)
        return tuple(terms)

    def _loop_header(self, node: Node, loops: dict[str, LoopRange]) -> str | None:
        init = node.child_by_field_name("initializer")
        condition = _strip(node.child_by_field_name("condition"))
        update = node.child_by_field_name("update")
        if init is None or init.type != "declaration":
            return None
        declarators = init.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            return None
        variable = node_text(declarators[0].child_by_field_name("declarator"))
        first = self.poly(declarators[0].child_by_field_name("value")).constant
        self.env[variable] = Poly.atom(variable)
        if first is None or condition is None or condition.type != "binary_expression" or update is None:
            return variable
        if node_text(condition.child_by_field_name("left")) != variable or variable in self.mutable and \
                node_text(update).replace(" ", "") not in (f"{variable}++", f"++{variable}", f"{variable}+=1"):
            return variable
        # The loop variable's own update is its only assignment: other assignments forfeit a range.
        assigned = sum(1 for n in walk(node) if n.type in ("assignment_expression", "update_expression")
                       and node_text(_strip(n.child_by_field_name("left") or n.child_by_field_name("argument")))
                       == variable)
        if assigned != 1 or node_text(update).replace(" ", "") not in (f"{variable}++", f"++{variable}",
                                                                       f"{variable}+=1"):
            return variable
        bound = self.poly(condition.child_by_field_name("right")).constant
        op = node_text(condition.child_by_field_name("operator"))
        if bound is None or op not in ("<", "<="):
            return variable
        last = bound - 1 if op == "<" else bound
        if last >= first:
            loops[variable] = LoopRange(variable, first, last)
        return variable

    # ------------------------------------------------------------------ expressions
    def poly(self, node: Node | None) -> Poly:
        return self.values.poly(node)

    def _clamp(self, node: Node) -> Clamp | None:
        """The clamp `node` applies to a coordinate moved by a constant (`max(x - 1, 0)`,
        `min(max(x + k, 0), W - 1)`, `y > 0 ? y - 1 : 0`, `x < W - 1 ? x + 1 : W - 1`), or None."""
        if node.type == "call_expression":
            name = node_text(node.child_by_field_name("function"))
            arguments = node.child_by_field_name("arguments")
            args = [a for a in (arguments.named_children if arguments else []) if a.type != "comment"]
            if name not in ("min", "max") or len(args) != 2:
                return None
            for inner, bound in (args, args[::-1]):
                clamped = self._clamped(inner)
                text = self._clamp_bound(bound)
                if clamped is None or text is None:
                    continue
                # `max(x - 1, 0)` on unsigned values wraps instead of clamping: signed only
                if any(word in t for t in self._types_of(clamped.coordinate, bound) for word in ("unsigned", "size_t")):
                    return None
                if name == "max" and clamped.lower is None and clamped.upper is None:
                    return Clamp(clamped.coordinate, clamped.shift, text, None)
                if name == "min" and clamped.upper is None:
                    return Clamp(clamped.coordinate, clamped.shift, clamped.lower, text)
            return None
        condition = node.child_by_field_name("condition")
        consequence, alternative = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
        terms = self._conditions(condition) if condition is not None else None
        if not terms or len(terms) != 1 or consequence is None or alternative is None:
            return None
        term = terms[0]
        # the condition as `E >= 0` over integers
        difference = term.left - term.right
        normal = {">=": difference, ">": difference - Poly.const(1), "<=": -difference,
                  "<": -difference - Poly.const(1)}[term.op]
        for moved_node, bound_node, taken in ((consequence, alternative, True), (alternative, consequence, False)):
            moved = self._clamped(moved_node)
            text = self._clamp_bound(bound_node)
            if moved is None or moved.lower is not None or moved.upper is not None or text is None:
                continue
            value = Poly.atom(moved.coordinate) + Poly.const(moved.shift)
            limit = self.poly(bound_node)
            # max(value, limit) takes the value when value - limit >= 0, the limit when
            # limit - value - 1 >= 0; min(value, limit) the value when limit - value >= 0, the
            # limit when value - limit - 1 >= 0.
            one = Poly.const(1)
            if normal == (value - limit if taken else limit - value - one):
                return Clamp(moved.coordinate, moved.shift, text, None)
            if normal == (limit - value if taken else value - limit - one):
                return Clamp(moved.coordinate, moved.shift, None, text)
        return None

    def _clamped(self, node: Node) -> Clamp | None:
        """`node` as a coordinate moved by a constant (a clamp without bounds), or an inner clamp."""
        value = self.poly(node)
        if len(value.terms) == 1 and value.terms[0][1] == 1 and len(value.terms[0][0]) == 1 and \
                value.terms[0][0][0] in self.clamps:
            return self.clamps[value.terms[0][0][0]]
        for coordinate in self.coordinates:
            shift = (value - Poly.atom(coordinate.name)).constant
            if shift is not None:
                return Clamp(coordinate.name, shift, None, None)
        return None

    def _clamp_bound(self, node: Node) -> str | None:
        """A clamp's bound as a launch-expressible text, or None when it is not one."""
        scalars = {name for name in self.params if name not in self.pointers}
        if not self.poly(node).atoms() <= scalars:
            return None
        try:
            return self._bound_text(node)
        except _NotPointwise:
            return None

    def _types_of(self, coordinate: str, bound: Node) -> list[str]:
        found = self.coordinate_named(coordinate)
        types = [found.type] if found is not None else ["unsigned"]
        return types + [self.params[n] for n in (node_text(i) for i in walk(bound) if i.type == "identifier")
                        if n in self.params]

    def coordinate_named(self, name: str) -> Coordinate | None:
        return next((c for c in self.coordinates if c.name == name), None)

    def _opaque(self, node: Node) -> Poly:
        memory = any(n.type in ("subscript_expression", "pointer_expression") for n in walk(node))
        dims = "".join(sorted({node_text(n.child_by_field_name("field"))[-1:] for n in walk(node)
                               if n.type == "field_expression" and node_text(n.child_by_field_name("argument"))
                               == "threadIdx"}))
        return Poly.atom(opaque_atom(" ".join(node_text(node).split()), dims, memory))


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


def _subscript_index(node: Node) -> Node | None:
    indices = node.child_by_field_name("indices")
    if indices is not None:
        named = [c for c in indices.named_children if c.type != "comment"]
        return named[0] if len(named) == 1 else None
    return node.child_by_field_name("index")


def _access_kind(node: Node) -> tuple[bool, bool]:
    """(read, write) for a subscript expression."""
    child = node
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        child, parent = parent, parent.parent
    if parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("left") == child:
        return node_text(parent.child_by_field_name("operator")) != "=", True
    if parent is not None and parent.type == "update_expression":
        return True, True
    return True, False


def _replace_word(text: str, word: str, replacement: str) -> str:
    import re

    return re.sub(rf"\b{re.escape(word)}\b", replacement, text)


def _size_order(divisor: Poly) -> tuple[int, int]:
    """Sorts a mixed radix's divisors smallest first: 1, 16, W, W - 2, W * H (degree, then the
    leading term's coefficient)."""
    if not divisor.terms:
        return (0, 0)
    lead = max(divisor.terms, key=lambda term: (len(term[0]), term[0]))
    return len(lead[0]), lead[1]


def _divide_poly(total: Poly, divisor: Poly) -> Poly | None:
    """`total / divisor` when it divides exactly (`N*C*(H-2)*(W-2)` by `(H-2)*(W-2)`)."""
    if len(total.terms) == 1:
        return exact_quotient(total, divisor)
    return polynomial_quotient(total, divisor)


def coefficient_of(poly: Poly, atom: str) -> Poly:
    """The part of `poly` linear in `atom`, divided by it (`W*y + x` -> W for y); zero when
    `atom` does not occur linearly."""
    out: dict[tuple[str, ...], int] = {}
    for monomial, value in poly.terms:
        if monomial.count(atom) == 1:
            rest = list(monomial)
            rest.remove(atom)
            out[tuple(rest)] = out.get(tuple(rest), 0) + value
    return Poly.of(out)


def unit_coordinate(poly: Poly, coordinates: tuple[Coordinate, ...]) -> str | None:
    """The coordinate whose +1 moves the index by +-1 element (the fast, contiguous one)."""
    found = [c.name for c in coordinates if coefficient_of(poly, c.name).constant in (1, -1)]
    return found[0] if len(found) == 1 else None


def launch_block(block: tuple[str, ...]) -> tuple[int, int, int] | None:
    values = []
    for text in block:
        value = int_literal(text)
        if value is None:
            return None
        values.append(value)
    return tuple((values + [1, 1, 1])[:3])  # type: ignore[return-value]


def expression_poly(expression: str, constants: Mapping[str, int] | None = None) -> Poly | None:
    """The polynomial of a standalone integer expression over named scalars (a launch or bound
    text such as `nx - 1`), or None when it does not parse as one expression."""
    data = encode_source(f"int value_ = ({expression});")
    tree = make_parser().parse(data)
    if tree.root_node.has_error:
        return None
    value = next((n.child_by_field_name("value") for n in walk(tree.root_node) if n.type == "init_declarator"), None)
    if value is None:
        return None
    builder = _Builder("", data, tree.root_node, None, dict(constants or {}))
    names = {node_text(n) for n in walk(value) if n.type == "identifier"}
    builder.env.update({name: Poly.atom(name) for name in names})
    return builder.poly(value)
