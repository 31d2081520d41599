"""One kernel's syntax tree and the symbolic values of its integer expressions.

`kernel_syntax(source, name)` returns the kernel's `function_definition` from the code state's
one tree-sitter parse (`cuda.view.kernels_of`) with its parameters, the file's integer constants
and helpers to read nodes. `Symbols` turns expressions into `affine.Poly` values over named atoms (thread and block
indices, parameters, loop variables), resolving the kernel's local definitions: idioms compare
polynomials, never spellings, so `row * cols + j`, `j + cols * row` and `(r * cols) + j` with
`int r = row;` are one index.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

from regrapht.cuda.affine import Poly, opaque_atom
from regrapht.cuda.extract import (
    declarator_name,
    find_function_declarator,
    node_text,
)
from regrapht.cuda.intexpr import PolyFolder
from regrapht.cuda.nodes import unparen, walk  # re-exported: the idioms' tree helpers are cuda's
from regrapht.cuda.view import kernels_of

BUILTINS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})
# The global thread index along x, the way kernels spell `blockIdx.x * blockDim.x + threadIdx.x`.
GLOBAL_X = Poly.of({("blockDim.x", "blockIdx.x"): 1, ("threadIdx.x",): 1})
GLOBAL_Y = Poly.of({("blockDim.y", "blockIdx.y"): 1, ("threadIdx.y",): 1})
GRID_THREADS_X = Poly.of({("blockDim.x", "gridDim.x"): 1})


@dataclass(frozen=True)
class KernelParam:
    name: str
    base_type: str  # "float", "unsigned int", "T"
    is_pointer: bool
    is_const: bool  # the pointee is const (for pointers)


@dataclass(frozen=True)
class KernelSyntax:
    """A parsed kernel: its definition node, body, parameters and the file's constants."""

    source: bytes
    function: Node  # function_definition
    body: Node  # compound_statement
    params: tuple[KernelParam, ...]
    root: Node  # the file's translation_unit (the code state's one parse)
    constants: Mapping[str, int] = field(default_factory=dict)  # `#define N 256` and friends
    template_parameters: tuple[str, ...] = ()

    def param(self, name: str) -> KernelParam | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def pointers(self) -> dict[str, KernelParam]:
        return {p.name: p for p in self.params if p.is_pointer}

    @property
    def scalars(self) -> dict[str, KernelParam]:
        return {p.name: p for p in self.params if not p.is_pointer}

    def statements(self) -> list[Node]:
        return named_statements(self.body)


def text(node: Node | None) -> str:
    return node_text(node)


def named_statements(block: Node | None) -> list[Node]:
    """The statements of a compound statement (comments dropped), or [block] for a single one."""
    if block is None:
        return []
    if block.type != "compound_statement":
        return [block]
    return [c for c in block.named_children if c.type != "comment"]


def updated_target(node: Node) -> Node | None:
    """What an assignment (`x = ...`, `x += ...`) or update (`x++`, `--x`) writes, unparenthesised."""
    return unparen(node.child_by_field_name("left") or node.child_by_field_name("argument"))


def loop_counter(loop: Node) -> tuple[str, Node, Node] | None:
    """(name, start, declaration) of the one counter a for loop declares: `for (T i = start; ...)`;
    None for any other initialiser (none, an expression, several declarators, no value, a pointer
    or array)."""
    init = loop.child_by_field_name("initializer")
    if init is None or init.type != "declaration":
        return None
    declarators = init.children_by_field_name("declarator")
    if len(declarators) != 1 or declarators[0].type != "init_declarator":
        return None
    target, start = declarators[0].child_by_field_name("declarator"), declarators[0].child_by_field_name("value")
    if target is None or target.type != "identifier" or start is None:
        return None
    return text(target), start, init


def condition_of(statement: Node) -> Node | None:
    """The condition expression of an `if`/`while` (inside its condition_clause)."""
    condition = statement.child_by_field_name("condition")
    if condition is not None and condition.type == "condition_clause":
        condition = condition.child_by_field_name("value")
    return unparen(condition)


def subscript_parts(node: Node) -> tuple[Node | None, list[Node]]:
    """(array expression, index expressions) of `a[i]`, `a[i][j]`."""
    indices: list[Node] = []
    current: Node | None = node
    while current is not None and current.type == "subscript_expression":
        holder = current.child_by_field_name("indices") or current.child_by_field_name("index")
        if holder is not None and holder.type == "subscript_argument_list":
            indices[:0] = list(holder.named_children)
        elif holder is not None:
            indices.insert(0, holder)
        current = current.child_by_field_name("argument")
    return current, indices


def call_name(node: Node) -> str:
    return text(node.child_by_field_name("function")) if node.type == "call_expression" else ""


def call_args(node: Node) -> list[Node]:
    args = node.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def _param(node: Node) -> KernelParam | None:
    declarator = node.child_by_field_name("declarator")
    name = declarator_name(declarator)
    if name is None:
        return None
    qualifiers = [text(c) for c in node.children if c.type == "type_qualifier"]
    is_pointer = False
    current = declarator
    while current is not None and current.type != "identifier":
        if current.type in ("pointer_declarator", "array_declarator"):
            is_pointer = True
        current = current.child_by_field_name("declarator")
    base = text(node.child_by_field_name("type"))
    return KernelParam(text(name), " ".join(base.split()), is_pointer, "const" in qualifiers)


def kernel_syntax(source: str, name: str) -> KernelSyntax | None:
    """The kernel `name` of `source` (a template's instantiation `scan<float>` names its template),
    or None when it is absent or does not parse cleanly. The parse is the code state's one
    (`cuda.view.kernels_of`), shared with the other engines."""
    view = kernels_of(source)
    found = view.function_node(name)
    if found is None:
        return None
    function, template = found
    body = function.child_by_field_name("body")
    declarator = find_function_declarator(function.child_by_field_name("declarator"))
    plist = declarator.child_by_field_name("parameters") if declarator is not None else None
    if body is None or plist is None or function.has_error:
        return None
    params = []
    for child in plist.named_children:
        if child.type != "parameter_declaration":
            continue
        param = _param(child)
        if param is None:
            return None
        params.append(param)
    return KernelSyntax(view.data, function, body, tuple(params), view.tree.root_node, dict(view.model.constants),
                        template)


class Symbols(PolyFolder):
    """Symbolic integer values of expressions (`poly`, the `intexpr` evaluator), resolving
    local definitions made so far.

    `define(name, node)` records `int name = node;`; a name assigned again later is `forget`-ed
    by the caller (its value is then unknown: an atom of its own name).
    """

    def __init__(self, constants: Mapping[str, int] | None = None) -> None:
        super().__init__(dict(constants or {}))
        self.env: dict[str, Poly] = {}
        self.definitions: dict[str, Node] = {}
        # Local pointers into a parameter: `const float *row_in = x + row * cols` -> ("x", row*cols).
        self.aliases: dict[str, tuple[str, Poly]] = {}

    def copy(self) -> Symbols:
        other = Symbols(self.constants)
        other.env = dict(self.env)
        other.definitions = dict(self.definitions)
        other.aliases = dict(self.aliases)
        return other

    def define_alias(self, name: str, value: Node | None, pointers: Mapping[str, object]) -> bool:
        """Record `T *name = P + offset` (or `&P[offset]`, or `P`) for a pointer P; False if
        `value` is not of that shape."""
        value = unparen(value)
        if value is None:
            return False
        base: Node | None = value
        offset = Poly.const(0)
        # `P + o1 + o2 - o3` parses as ((P + o1) + o2) - o3: walk down the left spine to P
        while base is not None and base.type == "binary_expression" and \
                text(base.child_by_field_name("operator")) in ("+", "-"):
            right = self.poly(base.child_by_field_name("right"))
            offset = offset + (right if text(base.child_by_field_name("operator")) == "+" else -right)
            base = unparen(base.child_by_field_name("left"))
        if base is value and value.type == "pointer_expression" and text(value.child_by_field_name("operator")) == "&":
            inner = unparen(value.child_by_field_name("argument"))
            if inner is None or inner.type != "subscript_expression":
                return False
            base_node, indices = subscript_parts(inner)
            if len(indices) != 1:
                return False
            base, offset = unparen(base_node), self.poly(indices[0])
        if base is None or base.type != "identifier":
            return False
        name_of_base = text(base)
        if name_of_base in self.aliases:
            root, first = self.aliases[name_of_base]
            self.aliases[name] = (root, first + offset)
            return True
        if name_of_base not in pointers:
            return False
        self.aliases[name] = (name_of_base, offset)
        return True

    def define(self, name: str, value: Node | None) -> None:
        if value is None:
            self.forget(name)
            return
        self.env[name] = self.poly(value)
        self.definitions[name] = value

    def forget(self, name: str) -> None:
        self.env.pop(name, None)
        self.definitions.pop(name, None)

    def local_value(self, name: str) -> Poly | None:
        return self.env.get(name)

    def opaque(self, node: Node) -> Poly:
        memory = False
        dims = ""
        for current in walk(node):
            if current.type in ("subscript_expression", "pointer_expression") or call_name(current).startswith("__ldg"):
                memory = True
            elif current.type == "identifier":
                known = self.env.get(text(current))
                if known is not None:
                    dims += known.thread_dims()
                    memory = memory or known.memory_dependent
            elif current.type == "field_expression" and text(current.child_by_field_name("argument")) == "threadIdx":
                dims += text(current.child_by_field_name("field"))[-1:]
        dims = "".join(d for d in "xyz" if d in dims)
        return Poly.atom(opaque_atom(" ".join(text(node).split())[:80], dims, memory))


def depends_on(poly: Poly, name: str) -> bool:
    """Whether `poly` mentions the atom `name` (also inside opaque atoms, by spelling)."""
    for atom in poly.atoms():
        if atom == name:
            return True
        if atom.startswith("~") and _mentions(atom.split(":", 1)[1], name):
            return True
    return False


def _mentions(spelling: str, name: str) -> bool:
    start = 0
    while True:
        at = spelling.find(name, start)
        if at < 0:
            return False
        before = spelling[at - 1] if at > 0 else " "
        after = spelling[at + len(name)] if at + len(name) < len(spelling) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = at + 1


def identifiers_in(node: Node) -> set[str]:
    """Every identifier spelled under `node` (names of calls and fields included)."""
    return {text(n) for n in walk(node) if n.type in ("identifier", "field_identifier", "type_identifier")}
