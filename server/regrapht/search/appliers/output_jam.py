"""Output-stationary coarsening: one thread computes K outputs that differ only in a coordinate
the kernel's big reads do not depend on (a multi-channel convolution's output channel), sharing
every load that does not depend on it (unroll-and-jam of that coordinate into the work).

A multi-channel 3x3 convolution launched with one thread per output pixel and the output channel
in `blockIdx.z` re-reads the same `cin x 3 x 3` input neighbourhood for every output channel.
Here each thread takes K consecutive output channels of its pixel: the work's loops and
conditions run once, and each statement that depends on the channel (through the coordinate or
through a local computed from it: the accumulator, a weight) is repeated K times with its own
copy of those locals, side by side. Each input element is then loaded once for K outputs (the K
copies read the same address with no store in between, under `__restrict__`), while each output
still gets exactly the statements it had, in the same order.

Recognised on the point-kernel view (`idioms/pointwise.py`), with no array both read and
written (the rewrite adds `__restrict__`): a coordinate J taken from
`blockIdx` alone on its axis (block size 1 there, not the contiguous x axis), lower bound 0;
a read inside a loop whose index does not depend on J (what gets shared); no loop header or
condition that controls a `continue`/`break` depends on J (else the K outputs would need
different control flow); no `return` in the work; J not used by the guard's prelude. Outputs
past J's bound are not stored: the K-th copy of a thread whose J runs past the bound computes
with J clamped to the last valid value (every read stays where the kernel reads) and skips its
stores.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from regrapht.cuda.parse import encode_source
from regrapht.idioms.pointwise import AXES, PointKernel, fresh
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_edits
from regrapht.search.appliers.grid import grid_order
from regrapht.search.appliers.points import bind, ceil_div, point_view
from regrapht.search.appliers.qualifiers import with_restricted_pointers
from regrapht.search.appliers.stencil_columns import fills_device
from regrapht.spec.launch import LaunchConfig

OUTPUTS_PER_THREAD = (4, 8)  # the hand-picked variants, first
# The rest of the grid (`Rewrite.params` outputs_per_thread), in order: 2 spreads the outputs over
# twice the threads (channel counts that leave 4 with too few blocks), 16 shares each load once
# more (offered only when it still fills the device)
MORE_OUTPUTS_PER_THREAD = (2, 16)
CONTROL = frozenset({"continue_statement", "break_statement"})
SCOPES = frozenset({"for_statement", "while_statement", "do_statement", "if_statement", "compound_statement"})


class JammedOutputs:
    technique = "thread_coarsening"
    also: tuple[str, ...] = ("shared_memory_tiling", "register_promotion")

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = point_view(given)
        if found is None:
            return []
        kernel, view = found
        if view.written & {a.array for a in view.accesses if a.read}:
            return []  # read-modify-write and in-place updates: an output's copies could race its reads
        block = [int(b) for b in given.launch.block] + [1] * (3 - len(given.launch.block))
        jammed = _jammed_coordinate(view, block)
        if jammed is None:
            return []
        data = encode_source(view.text)
        dependent = _dependent_names(view, data, jammed)
        if dependent is None:
            return []
        rewrites: list[Rewrite] = []
        for count in OUTPUTS_PER_THREAD + MORE_OUTPUTS_PER_THREAD:
            body = _body(view, data, jammed, dependent, count)
            if body is None:
                return []
            axis = AXES.index(view.coordinate(jammed).axis)  # type: ignore[union-attr]
            grid = list(given.launch.grid) + ["1"] * (3 - len(given.launch.grid))
            grid[axis] = ceil_div(view.bounds[jammed].upper, count)
            while len(grid) > 1 and grid[-1] == "1":
                grid.pop()
            launch = LaunchConfig(tuple(grid), given.launch.block, given.launch.shared_bytes)
            if rewrites and count > OUTPUTS_PER_THREAD[0] and not fills_device(given, launch):
                continue  # more outputs per thread would leave SMs idle
            jam = Rewrite(given.source, launch, f"{count} outputs per thread along {jammed}, sharing the loads that "
                          "do not depend on it", (("outputs_per_thread", count),), body_edits(given, kernel, body))
            rewrites.append(with_restricted_pointers(jam, given.kernel))
        first = sum(1 for r in rewrites if r.params[0][1] in OUTPUTS_PER_THREAD)
        return grid_order(rewrites[:first], rewrites[first:])


def _jammed_coordinate(view: PointKernel, block: list[int]) -> str | None:
    """The coordinate to jam: from blockIdx alone (block size 1 on its axis, not x), lower bound
    0, absent from the index of a read made inside a loop (the reads K outputs will share)."""
    if view.linear is not None:
        return None
    for coordinate in view.coordinates:
        axis = AXES.index(coordinate.axis)
        if axis == 0 or block[axis] != 1 or view.bounds[coordinate.name].lower != "0":
            continue
        shared = [a for a in view.accesses if a.read and a.loop_vars and coordinate.name not in a.index.atoms()]
        if shared:
            return coordinate.name
    return None


def _walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _identifiers(node: Node, data: bytes) -> set[str]:
    return {data[n.start_byte:n.end_byte].decode() for n in _walk(node) if n.type == "identifier"}


def _assigned(node: Node, data: bytes) -> set[str]:
    """Names a leaf statement declares or assigns (`T a = ...`, `a += ...`, `a++`)."""
    names: set[str] = set()
    for n in _walk(node):
        target = None
        if n.type == "init_declarator" or (n.type == "declaration" and n.child_by_field_name("declarator")):
            target = n.child_by_field_name("declarator")
        elif n.type in ("assignment_expression",):
            target = n.child_by_field_name("left")
        elif n.type == "update_expression":
            target = n.child_by_field_name("argument")
        if target is not None and target.type == "identifier":
            names.add(data[target.start_byte:target.end_byte].decode())
    return names


def _dependent_names(view: PointKernel, data: bytes, jammed: str) -> set[str] | None:
    """The locals whose value depends on the jammed coordinate (a fixed point over the work's
    statements); None when the work cannot be jammed (a `return`, or J in the prelude)."""
    if any(jammed in p.split("=", 1)[-1] for p in view.prelude):
        return None
    if any(n.type == "return_statement" for node in view.work_nodes for n in _walk(node)):
        return None
    dependent = {jammed}
    statements = [s for node in view.work_nodes for s in _all_statements(node)]
    changed = True
    while changed:
        changed = False
        for statement in statements:
            if _identifiers(statement, data) & dependent:
                new = _assigned(statement, data) - dependent
                if new:
                    dependent |= new
                    changed = True
    return dependent


def _all_statements(node: Node) -> list[Node]:
    return [n for n in _walk(node) if n.type in ("declaration", "expression_statement")]


def _body(view: PointKernel, data: bytes, jammed: str, dependent: set[str], count: int) -> str | None:
    start = fresh(view, f"{jammed}_first")
    coordinate = view.coordinate(jammed)
    assert coordinate is not None
    upper = view.bounds[jammed].upper
    axis = coordinate.axis
    values = {c.name: (f"blockIdx.{c.axis} * blockDim.{c.axis} + threadIdx.{c.axis}" if c.name != jammed else start)
              for c in view.coordinates}
    lines = [f"    // {count} outputs per thread along {jammed}: the loads that do not depend on it are shared.",
             f"    const {coordinate.type.replace('const ', '')} {start} = blockIdx.{axis} * {count};",
             f"    {bind(view, values)} {' '.join(view.prelude)}".rstrip(),
             f"    if (!({view.guard})) return;"]
    writes = [(a.start, a.end) for a in view.accesses if a.write]
    renamed = {name: [fresh(view, f"{name}_{j}") for j in range(count)] for name in dependent}
    for j in range(count):
        clamp = f"({start} + {j} < {upper} ? {start} + {j} : {upper} - 1)" if j else start
        lines.append(f"    const {coordinate.type.replace('const ', '')} {renamed[jammed][j]} = {clamp};")
    out: list[str] = []
    for node in view.work_nodes:
        text = _jam(node, data, dependent, renamed, writes, start, upper, count)
        if text is None:
            return None
        out.append(" " * node.start_point[1] + text)
    lines.extend(out)
    return "\n" + "\n".join(lines) + "\n"


def _jam(node: Node, data: bytes, dependent: set[str], renamed: dict[str, list[str]],
         writes: list[tuple[int, int]], start: str, upper: str, count: int) -> str | None:
    """`node` with its dependent statements repeated per output (None when it cannot be)."""
    text = data[node.start_byte:node.end_byte].decode()
    mentions = _identifiers(node, data) & dependent
    if not mentions:
        return text  # shared by the K outputs as it is
    if node.type == "compound_statement":
        parts = []
        for child in node.named_children:
            part = _jam(child, data, dependent, renamed, writes, start, upper, count)
            if part is None:
                return None
            parts.append(" " * child.start_point[1] + part)
        return "{\n" + "\n".join(parts) + "\n" + " " * _line_indent(node, data) + "}"
    if node.type in ("for_statement", "while_statement", "do_statement", "if_statement"):
        body = node.child_by_field_name("body") or node.child_by_field_name("consequence")
        header_end = body.start_byte if body is not None else node.end_byte
        header = data[node.start_byte:header_end].decode()
        header_node_ids = [c for c in node.children if c.end_byte <= header_end]
        if any(_identifiers(c, data) & dependent for c in header_node_ids):
            # a loop or condition that depends on the output: repeat it whole, unless it steers
            # the shared control flow
            if any(n.type in CONTROL | {"return_statement"} for n in _walk(node)):
                return None
            return _repeat(node, data, dependent, renamed, writes, start, upper, count)
        if node.type == "do_statement" or body is None:
            return None
        inner = _braced(body, _jam(body, data, dependent, renamed, writes, start, upper, count), data)
        if inner is None:
            return None
        rest = ""
        alternative = node.child_by_field_name("alternative")
        if alternative is not None:
            branch = alternative.named_children[0] if alternative.type == "else_clause" else alternative
            other = _braced(branch, _jam(branch, data, dependent, renamed, writes, start, upper, count), data)
            if other is None:
                return None
            rest = "\n" + " " * _line_indent(node, data) + "else " + other
        return header.rstrip() + " " + inner + rest
    if any(n.type in CONTROL | {"return_statement"} for n in _walk(node)):
        return None
    return _repeat(node, data, dependent, renamed, writes, start, upper, count)


def _repeat(node: Node, data: bytes, dependent: set[str], renamed: dict[str, list[str]],
            writes: list[tuple[int, int]], start: str, upper: str, count: int) -> str:
    """K copies of a statement, each with its own copies of the dependent locals; a copy that
    stores is skipped when its output lies past the bound."""
    stores = any(node.start_byte <= s and e <= node.end_byte for s, e in writes)
    names = [n for n in _walk(node) if n.type == "identifier" and data[n.start_byte:n.end_byte].decode() in dependent]
    copies = []
    for j in range(count):
        out = []
        cursor = node.start_byte
        for n in names:
            out.append(data[cursor:n.start_byte].decode())
            out.append(renamed[data[n.start_byte:n.end_byte].decode()][j])
            cursor = n.end_byte
        out.append(data[cursor:node.end_byte].decode())
        text = "".join(out)
        if stores and j:
            text = f"if ({start} + {j} < {upper}) {text}"
        copies.append(text)
    return ("\n" + " " * node.start_point[1]).join(copies)


def _braced(node: Node, text: str | None, data: bytes) -> str | None:
    """`text` (what `node` became) as one statement: repeated copies of a body written without
    braces need them."""
    if text is None or node.type == "compound_statement":
        return text
    outer = _line_indent(node.parent, data) if node.parent is not None else 0
    return "{\n" + " " * node.start_point[1] + text + "\n" + " " * outer + "}"


def _line_indent(node: Node, data: bytes) -> int:
    """The indentation of the line `node` starts on."""
    line_start = data.rfind(b"\n", 0, node.start_byte) + 1
    line = data[line_start:node.start_byte]
    return len(line) - len(line.lstrip())
