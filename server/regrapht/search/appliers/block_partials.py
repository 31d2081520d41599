"""Per-block tree reductions in shared memory -> `cub::BlockReduce`, the same output.

A kernel in which every block sums (or takes the maximum or minimum of) one value per thread
through a shared array and a loop of barriers (`idioms/block_partials.py`: interleaved
`tid % (2 * s)`, strided, sequential addressing, unrolled `if (blockSize >= 512)` steps; static
or `extern __shared__`; recognised by running the block, not by its spelling) ends with one
statement in one thread: `OUT[J] = Y`, or `atomicAdd`/`atomicMax`/`atomicMin` of Y into the
whole array's result. The rewrite keeps each thread's own statements (its loads and guards)
verbatim, combines the block with `cub::BlockReduce` (warp shuffles, no divergent halving, two
barriers; `Sum`, or `Reduce` with a max/min functor) and runs that final statement as written
in thread 0, Y replaced by the block's aggregate: the same output array and grid, the block's
elements combined in another order. A float max/min atomic has no native instruction (a
source that has one defines its own CAS loop, which this leaves as it is): not rewritten.

Variants (`block_items`): the original block of B threads, each with its one value; then B / k
threads (k = 2, 4, 8; at least a warp), each combining the values of original threads
`t, t + B/k, ...` (the prelude re-bound: `threadIdx.x` -> that thread, `blockDim.x` -> B), so
each block still covers the same B values with fewer threads and loads kept in flight.
"""

from __future__ import annotations

from collections.abc import Mapping

from tree_sitter import Node

from regrapht.idioms.block_partials import BlockPartial, block_partial
from regrapht.idioms.syntax import KernelSyntax, identifiers_in, text, walk
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_change, edits
from regrapht.search.appliers.cooperative import PREFIX, cub_change, indent_code, template_arguments, value_of
from regrapht.search.appliers.grid import thread_limit
from regrapht.search.appliers.points import template_pins, template_values
from regrapht.search.source import KernelText
from regrapht.spec.launch import LaunchConfig

ITEMS = (1, 2, 4, 8)
SUMMABLE = frozenset({"float", "double", "int", "unsigned int", "unsigned", "unsigned long long", "long long"})
# the types atomicMax/atomicMin take natively (a float one would be the source's own CAS helper)
ATOMIC_ORDERED = frozenset({"int", "unsigned int", "unsigned", "unsigned long long", "long long"})


def block_threads(given: ApplierInput) -> int | None:
    """The launch's threads per block when the block is 1-D, a literal and whole warps."""
    block = [value_of(b, given) for b in given.launch.block]
    if not block or any(b is None for b in block) or any(b != 1 for b in block[1:]):
        return None
    threads = block[0]
    return threads if threads is not None and 32 <= threads <= 1024 and threads % 32 == 0 else None


def respelled(node: Node, replacements: Mapping[str, str]) -> str:
    """`node`'s text with each built-in field named in `replacements` (`threadIdx.x`) written as
    its replacement, its lines after the first indented from the node's own column."""
    start, column = node.start_byte, node.start_point[1]
    data = node.text or b""
    changes: list[tuple[int, int, str]] = []
    for current in walk(node):
        if current.type == "field_expression" and "".join(text(current).split()) in replacements:
            changes.append((current.start_byte - start, current.end_byte - start,
                            replacements["".join(text(current).split())]))
    for begin, end, new in sorted(changes, reverse=True):
        data = data[:begin] + new.encode() + data[end:]
    first, *rest = data.decode().split("\n")
    return "\n".join([first, *(line[column:] if line[:column].isspace() else line.lstrip() for line in rest)])


def thread_value(found: BlockPartial, accumulate: str, replacements: Mapping[str, str], first: str = "") -> str:
    """One original thread's statements, its stored value put in `accumulate` (no
    `replacements`: the thread is the original one) or combined into it by the tree's operator
    (`first`: the condition under which it is the first value, for max/min)."""
    lines = [respelled(statement, replacements) for statement in found.prelude]
    value = f"({found.value_type})({respelled(found.value, replacements)})"
    if not replacements:
        lines.append(f"{accumulate} = {value};")
    elif found.operator == "sum":
        lines.append(f"{accumulate} += {value};")
    else:
        # a max/min has no identity of every type: the first value starts the thread's own; the
        # rest go through the block's own functor, so a thread combines as CUB does (fmaxf's NaNs)
        held = f"{PREFIX}item_value_"
        lines.append(f"const {found.value_type} {held} = {value};")
        lines.append(f"{accumulate} = {first} ? {held} : {PREFIX}op_()({accumulate}, {held});")
    return "{\n" + indent_code("\n".join(lines)) + "\n}"


def final_statement(found: BlockPartial, total: str) -> str:
    """The source's final statement (`OUT[J] = Y`, `atomicAdd(&OUT[J], Y)`) with Y as `total`."""
    data = found.final.text or b""
    begin, end = found.result.start_byte - found.final.start_byte, found.result.end_byte - found.final.start_byte
    return (data[:begin] + total.encode() + data[end:]).decode() + ";"


def aggregate(found: BlockPartial, reduce: str, value: str) -> tuple[list[str], str]:
    """The declarations the block's combine needs (a max/min functor) and its expression."""
    if found.operator == "sum":
        return [], f"{reduce}({PREFIX}temp_).Sum({value})"
    value_type, ordering = found.value_type, found.operator
    functor = (f"struct {PREFIX}op_ {{ __device__ __forceinline__ {value_type} operator()(const {value_type} &a, "
               f"const {value_type} &b) const {{ return {ordering}(a, b); }} }};")
    return [functor], f"{reduce}({PREFIX}temp_).Reduce({value}, {PREFIX}op_())"


def partial_body(found: BlockPartial, threads: int, items: int, pins: str = "") -> str:
    """The kernel's new body: `items` original threads' values per thread of a `threads // items`
    block, combined by `cub::BlockReduce`, the result given to the source's final statement in
    thread 0."""
    value_type = found.value_type
    width = threads // items
    reduce, value = f"{PREFIX}block_reduce_", f"{PREFIX}value_"
    head = [f"typedef cub::BlockReduce<{value_type}, {width}> {reduce};",
            f"__shared__ typename {reduce}::TempStorage {PREFIX}temp_;"]
    functors, combined = aggregate(found, reduce, value)
    head += functors
    if items == 1:
        head.append(f"{value_type} {value};")
        work = thread_value(found, value, {})
    else:
        original = f"{PREFIX}thread_"
        head.append(f"{value_type} {value} = ({value_type})0;")
        per_thread = thread_value(found, value, {"threadIdx.x": original, "blockDim.x": f"{threads}u"},
                                  f"{PREFIX}item_ == 0u")
        work = (f"// {items} of the original {threads} threads' values each: t, t + {width}, ...\n"
                f"#pragma unroll\nfor (unsigned int {PREFIX}item_ = 0; {PREFIX}item_ < {items}u; ++{PREFIX}item_) {{\n"
                f"    const unsigned int {original} = threadIdx.x + {PREFIX}item_ * {width}u;\n"
                f"{indent_code(per_thread)}\n}}")
    finish = (f"// The block's values combined by CUB (warp shuffles) instead of the shared-memory tree.\n"
              f"const {value_type} {PREFIX}total_ = {combined};\n"
              f"if (threadIdx.x == 0)\n    {final_statement(found, PREFIX + 'total_')}")
    return pins + "\n" + indent_code("\n".join(head) + "\n" + work + "\n" + finish) + "\n"


def recognised_partial(given: ApplierInput, kernel: KernelSyntax) -> tuple[BlockPartial, int] | None:
    """The kernel's per-block tree reduction and its launch's block size, when its values can be
    combined by CUB (an arithmetic type, the template parameter as its instance gives it) and
    its final atomic is a native one."""
    threads = block_threads(given)
    if threads is None or any(n.startswith(PREFIX) for n in identifiers_in(kernel.body)):
        return None
    constants = {**kernel.constants, **template_values(given), **given.constants}
    found = block_partial(kernel, threads, constants)
    if found is None:
        return None
    instance = template_arguments(given.kernel, kernel.template_parameters)
    value_type = instance.get(found.value_type, found.value_type)
    if value_type not in SUMMABLE or (found.atomic in ("atomicMax", "atomicMin") and value_type not in ATOMIC_ORDERED):
        return None
    return found, threads


def block_partial_rewrites(given: ApplierInput, kernel: KernelSyntax, located: KernelText) -> list[Rewrite]:
    found = recognised_partial(given, kernel)
    if found is None:
        return []
    partial, threads = found
    limit = thread_limit(given)
    rewrites = []
    for items in ITEMS:
        width = threads // items
        if width < 32 or width > limit or threads % items:
            continue
        launch = LaunchConfig(tuple(given.launch.grid), (str(width),), "0")
        note = _note(partial, width, items)
        body = partial_body(partial, threads, items, template_pins(given))
        rewrites.append(Rewrite(given.source, launch, note, (("block_items", items),),
                                edits(given.source, *cub_change(given.source), body_change(located, body))))
    return rewrites


def _note(found: BlockPartial, width: int, items: int) -> str:
    """The rewrite's note; a sum stored per block keeps the notes it always had."""
    ending = "one store per block" if found.atomic is None else f"one {found.atomic} per block"
    combining = "" if found.operator == "sum" else f" ({found.operator})"
    if items == 1:
        return f"shared-memory tree{combining} -> cub::BlockReduce, {ending}"
    verb = "summing" if found.operator == "sum" else "combining"
    note = f"shared-memory tree{combining} -> cub::BlockReduce, {width} threads {verb} {items} values each"
    return note if found.atomic is None else f"{note}, {ending}"
