"""What names mean inside one function while `FunctionExtractor` walks it.

`ExtractionState` holds the facts collected so far and the local environment (integer values,
pointer aliases, shared and local arrays, dim3s, scalar types); `WalkContext` is what the walk
knows at a node (enclosing loops, the innermost thread-dependent branch). `FunctionScope` is the
integer evaluator (`intexpr.PolyFolder`) over that environment: index polynomials of
expressions, what an expression depends on (thread dimensions, loaded data), and which array a
pointer name resolves to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

from tree_sitter import Node

from regrapht.cuda.affine import Poly, opaque_atom
from regrapht.cuda.intexpr import PolyFolder
from regrapht.cuda.model import (
    Atomic,
    Branch,
    Call,
    Dim3,
    FloatLiteral,
    FunctionKind,
    LaunchSite,
    Loop,
    MallocCall,
    MathCall,
    MemoryAccess,
    MemorySpace,
    Parameter,
    SharedArray,
    SyncCall,
)
from regrapht.cuda.nodes import node_text
from regrapht.text import Span

# Local variables and device-function parameters that hold a lane or thread rank by convention.
V = TypeVar("V")
LANE_NAMES = frozenset({"lane", "lane_id", "laneId", "laneid", "lane_idx", "tid", "thread_id"})
# Barriers that return one value to every thread of the block.
BLOCK_VOTES = ("__syncthreads_or", "__syncthreads_and", "__syncthreads_count")
LANE_CALLS = ("thread_rank", "__lane_id", "lane_id", "laneid", "get_lane_id", "threadIdx")


class WalkContext(NamedTuple):
    loops: tuple[int, ...]  # indices into the loops list, outermost first
    thread_branch: str | None  # condition text of the innermost thread-dependent branch
    single_guard: bool  # under `if (tid == 0)`-like conditions
    skip_env: bool  # inside a for-update clause: do not treat `i += s` as a new definition
    chain: bool = False  # inside an arithmetic expression whose literals were examined already


@dataclass
class PointerAlias:
    """A local pointer derived from a parameter or shared array: `float *row = A + r * N`."""

    array: str
    space: MemorySpace
    offset: Poly
    element_type: str


@dataclass
class ExtractionState:
    env: dict[str, Poly] = field(default_factory=dict)
    aliases: dict[str, PointerAlias] = field(default_factory=dict)
    shared: dict[str, str] = field(default_factory=dict)  # name -> element type
    local_arrays: dict[str, str] = field(default_factory=dict)
    dim3s: dict[str, Dim3] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)  # scalar locals and parameters: arithmetic_type
    local_values: list[tuple[str, str]] = field(default_factory=list)  # host scalars: (name, initializer)
    written: set[str] = field(default_factory=set)
    loops: list[Loop] = field(default_factory=list)
    accesses: list[MemoryAccess] = field(default_factory=list)
    atomics: list[Atomic] = field(default_factory=list)
    syncs: list[SyncCall] = field(default_factory=list)
    branches: list[Branch] = field(default_factory=list)
    shared_arrays: list[SharedArray] = field(default_factory=list)
    float_literals: list[FloatLiteral] = field(default_factory=list)
    math_calls: list[MathCall] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    launches: list[LaunchSite] = field(default_factory=list)
    dim3_list: list[Dim3] = field(default_factory=list)
    mallocs: list[MallocCall] = field(default_factory=list)
    # Condition of the first `if (<thread-dependent>) return;` seen: later barriers are divergent.
    exit_condition: str | None = None
    exit_span: Span | None = None  # that `if` statement
    # Block scopes being walked, innermost last: what their declarations shadowed (`ScopeFrame`).
    frames: list[ScopeFrame] = field(default_factory=list)

    def declare(self, name: str) -> None:
        """`name` is declared in the innermost block: remember what it shadows, restored when
        the walk leaves the block (a loop's `int j` does not leak into the next loop)."""
        if self.frames:
            frame = self.frames[-1]
            if name not in frame.declared:
                frame.declared[name] = (self.env.get(name), self.types.get(name), self.aliases.get(name),
                                        self.local_arrays.get(name))

    def leave(self, always_exits: bool) -> None:
        """The walk leaves the innermost block; `always_exits`: the block ends in a `return`, so
        no thread that continues after it went through an early exit inside it."""
        frame = self.frames.pop()
        for name, (value, type_, alias, local_array) in frame.declared.items():
            _restore(self.env, name, value)
            _restore(self.types, name, type_)
            _restore(self.aliases, name, alias)
            _restore(self.local_arrays, name, local_array)
        if always_exits:
            self.exit_condition, self.exit_span = frame.exit_condition, frame.exit_span


def _restore(table: dict[str, V], name: str, old: V | None) -> None:
    if old is None:
        table.pop(name, None)
    else:
        table[name] = old


@dataclass
class ScopeFrame:
    """One block being walked: the outer meaning of each name it declares (value, type, alias,
    local array: None where there was none), and the early exit known when it was entered."""

    declared: dict[str, tuple[Poly | None, str | None, PointerAlias | None, str | None]] = field(default_factory=dict)
    exit_condition: str | None = None
    exit_span: Span | None = None



class FunctionScope(PolyFolder):
    """The integer evaluator over one function's environment (`state.env`, the file's
    constants), with opaque atoms that record the thread dimensions and loads they depend on."""

    def __init__(self, constants: dict[str, int], state: ExtractionState, params: dict[str, Parameter],
                 kind: FunctionKind) -> None:
        super().__init__(constants)
        self.state = state
        self.params = params
        self.kind = kind

    def local_value(self, name: str) -> Poly | None:
        return self.state.env.get(name)

    def opaque(self, node: Node) -> Poly:
        dims, memory = self.dependencies(node)
        text = node_text(node)
        return Poly.atom(opaque_atom(text[:80], dims, memory))

    def dependencies(self, node: Node) -> tuple[str, bool]:
        """(thread dimensions, loaded-from-memory) that an expression's value depends on."""
        dims = ""
        memory = False
        stack = [node]
        env = self.state.env
        while stack:
            current = stack.pop()
            current_type = current.type
            if current_type == "field_expression":
                argument = current.child_by_field_name("argument")
                if argument is not None and node_text(argument) == "threadIdx":
                    dims += node_text(current.child_by_field_name("field"))[-1:]
                    continue
            elif current_type == "identifier":
                known = env.get(node_text(current))
                if known is not None:
                    dims += known.thread_dims()
                    memory = memory or known.memory_dependent
                elif node_text(current) in LANE_NAMES:
                    dims += "x"  # a lane or rank handed in by the caller (`lane == 0`)
                continue
            elif current_type in ("subscript_expression", "pointer_expression") and current is not node:
                memory = memory or current_type == "subscript_expression" or node_text(current)[:1] == "*"
            elif current_type == "call_expression":
                function = node_text(current.child_by_field_name("function"))
                if function.startswith(BLOCK_VOTES):
                    continue  # `__syncthreads_or(p)`: one value for the whole block, whatever p is
                if function.startswith(("__shfl", "__ldg", "atomic")):
                    memory = True
                elif function.endswith(LANE_CALLS):
                    dims += "x"  # `g.thread_rank()`, `__lane_id()`
            stack.extend(current.named_children)
        if node.type == "subscript_expression":
            memory = True
        return "".join(d for d in "xyz" if d in dims), memory

    def resolve_array(self, name: str) -> tuple[str, MemorySpace, Poly, str] | None:
        """(array, memory space, offset, element type) of a pointer name: an alias, a shared or
        local array, or a pointer parameter; None for anything else."""
        state = self.state
        if name in state.aliases:
            alias = state.aliases[name]
            return alias.array, alias.space, alias.offset, alias.element_type
        if name in state.shared:
            return name, "shared", Poly.const(0), state.shared[name]
        if name in state.local_arrays:
            return name, "local", Poly.const(0), state.local_arrays[name]
        parameter = self.params.get(name)
        if parameter is not None and parameter.is_pointer:
            # A kernel's pointer arguments point to global memory; a device function's may
            # point to a caller's shared tile (or a register array): unknown.
            space: MemorySpace = "global" if self.kind != "device" else "unknown"
            return name, space, Poly.const(0), parameter.base_type
        return None
