"""Prefix sums: row-wise scans -> a group per row with `cub::BlockScan`/`cub::WarpScan`; a
whole-array scan run by one thread -> a single-pass scan with decoupled look-back.

Matches (through `idioms.items`) loops that keep a running sum and write it per element
(`acc += x[j]; y[j] = acc;` inclusive, `y[j] = acc; acc += x[j];` exclusive):

- one thread per row (`item_program`): each row's elements are scanned by a whole block (or a
  warp, for short rows) in tiles of the group's size, carrying the tile totals
  (`cooperative.py`);
- one thread for the whole array (`single_program`, guarded by `threadIdx.x == 0 &&
  blockIdx.x == 0` or launched on one thread): tiles of 256 x 8 elements, each scanned with
  `cub::BlockScan` (eight striped, coalesced sub-tiles); tiles are taken in order from an atomic
  ticket, and each tile's block publishes its total, then looks back over the tiles before it
  for their totals or inclusive prefixes (Merrill and Garland's decoupled look-back), so the
  whole scan reads the input once, in one launch. Statements after the loop (`*total = acc`)
  run once, in the block of the last tile.

The look-back needs per-tile state and a ticket counter that outlive a block: they are
`__device__` variables of the rewritten file (one set per kernel): a flag per tile (30-bit launch
epoch, 2-bit state) and the tile's total and inclusive prefix, each written before its flag
(with a fence) and never overwritten within a launch. The last block of each launch resets the
ticket and advances the epoch, so no launch has to clear them. Launches of the same kernel must
not overlap in time (different streams).
Sums in a different order round differently: float scans compare within the spec's tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.idioms.access import accesses
from regrapht.idioms.items import ItemLoop, ItemProgram, ItemStatement, item_program, single_program
from regrapht.idioms.syntax import depends_on, identifiers_in, kernel_syntax, text, unparen
from regrapht.search.appliers.common import ApplierInput, Rewrite, with_body
from regrapht.search.appliers.cooperative import (
    PREFIX,
    Group,
    cooperative_body,
    extent_of,
    indent_code,
    item_count,
    one_thread_launch,
    original_covers,
    plain_type,
    resident_blocks,
    with_cub,
)
from regrapht.search.source import KernelText, find_kernel
from regrapht.spec.expr import names_in
from regrapht.spec.launch import LaunchConfig

SCAN_BLOCK = 256
ITEMS = 8
TILE = SCAN_BLOCK * ITEMS
MAX_TILES = 1 << 20  # 2^31 elements in tiles of 2048: every int-indexed array
SCANNABLE = frozenset({"float", "double", "int", "unsigned int", "unsigned", "long long", "unsigned long long"})


class ParallelScan:
    technique = "block_scan"
    also: tuple[str, ...] = ("memory_coalescing",)

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        kernel = kernel_syntax(given.source, given.kernel)
        located = find_kernel(given.source, given.kernel)
        if kernel is None or located is None or any(n.startswith(PREFIX) for n in identifiers_in(kernel.function)):
            return []
        program = item_program(kernel)
        if program is not None:
            return self._rows(given, program, located) or self._prefix_per_item(given, program, located)
        single = single_program(kernel)
        if single is not None:
            return self._whole(given, single, located)
        return []

    # ------------------------------------------------------------------------------ row scans
    def _rows(self, given: ApplierInput, program: ItemProgram, located: KernelText) -> list[Rewrite]:
        if program.csr is not None or not any(loop.scan for loop in program.loops):
            return []
        if not original_covers(given, program):
            return []
        rows = item_count(given, program)
        if rows is None:
            return []
        extents = [e for e in (extent_of(given, loop, program) for loop in program.loops) if e is not None]
        extent = max(extents) if extents else None
        if extent is not None and extent <= 256:
            groups = [Group("warp", 256), Group("block", 128)]
        elif extent is not None and extent >= 4096:
            groups = [Group("block", 1024), Group("block", 512)]
        else:
            groups = [Group("block", 256), Group("block", 1024)]
        rewrites = []
        for group in groups:
            body = cooperative_body(program, group)
            if body is None:
                continue
            grid = rows if group.kind == "block" else f"({rows} + {group.per_block - 1}) / {group.per_block}"
            rewrites.append(Rewrite(with_cub(with_body(given, located, body)),
                                    LaunchConfig((grid,), (str(group.block),), given.launch.shared_bytes),
                                    group.describe().format(item="row") + ", tiles scanned by CUB with a carry"))
        return rewrites

    # ------------------------------------------------------------------------------ whole array
    def _whole(self, given: ApplierInput, program: ItemProgram, located: KernelText) -> list[Rewrite]:
        loops = program.loops
        if len(loops) != 1 or loops[0].scan is None:
            return []
        guarded = program.kernel.statements()[-1].type == "if_statement"
        if not (guarded or one_thread_launch(given)):
            return []
        loop = loops[0]
        position = program.steps.index(loop)
        before, after = program.steps[:position], program.steps[position + 1:]
        if any(isinstance(s, ItemStatement) and s.writes for s in before):
            return []
        assert loop.scan is not None
        value_type = plain_type(loop.scan.type)
        if value_type not in SCANNABLE:
            return []
        count = self._count(given, program, loop)
        if count is None:
            return []
        kernel_name = given.kernel.split("<")[0]
        globals_ = _status_globals(kernel_name, value_type)
        body = _single_pass_body(_loop_plan(loop, before, after, kernel_name))
        source = with_body(given, located, body)
        source = source[: located.start] + globals_ + source[located.start:]
        grid = f"min(({count} + {TILE - 1}) / {TILE}, {self._grid_cap(given)})"
        return [Rewrite(with_cub(source), LaunchConfig((grid,), (str(SCAN_BLOCK),), given.launch.shared_bytes),
                        f"single-pass scan: tiles of {TILE} by cub::BlockScan, decoupled look-back")]

    def _prefix_per_item(self, given: ApplierInput, program: ItemProgram, located: KernelText) -> list[Rewrite]:
        """Thread i sums elements 0..i (or 0..i-1) itself and writes the result at i: the
        inclusive (exclusive) scan, computed by the single-pass scan instead (O(n) work)."""
        plan = _prefix_plan(program, given.kernel.split("<")[0])
        if plan is None or not original_covers(given, program):
            return []
        count = item_count(given, program)
        if count is None:
            return []
        source = with_body(given, located, _single_pass_body(plan))
        source = source[: located.start] + _status_globals(plan.kernel, plan.value_type) + source[located.start:]
        grid = f"min(({count} + {TILE - 1}) / {TILE}, {self._grid_cap(given)})"
        return [Rewrite(with_cub(source), LaunchConfig((grid,), (str(SCAN_BLOCK),), given.launch.shared_bytes),
                        f"per-element prefix sums -> single-pass scan: tiles of {TILE}, decoupled look-back")]

    @staticmethod
    def _count(given: ApplierInput, program: ItemProgram, loop: ItemLoop) -> str | None:
        """Elements of the loop as a spec expression over the kernel's scalars."""
        scalars = set(program.kernel.scalars)
        upper, lower = loop.end, text(loop.lower)
        if names_in(upper) <= scalars and names_in(lower) <= scalars:
            return f"({' '.join(upper.split())}) - ({' '.join(lower.split())})"
        extent = extent_of(given, loop, program)
        return str(extent) if extent is not None else None

    @staticmethod
    def _grid_cap(given: ApplierInput) -> int:
        """Blocks that take tiles: the device's resident blocks when known (more would only wait
        for tickets), else a size that fills any current GPU."""
        resident = resident_blocks(given, SCAN_BLOCK)
        return resident if resident is not None else 65535


def _status_globals(kernel: str, value_type: str) -> str:
    p = f"{PREFIX}{kernel}_"
    return (f"// Look-back state of {kernel}'s single-pass scan: per tile a flag (launch epoch, state) and\n"
            f"// its total and inclusive prefix; the tile ticket, the finished blocks and the launch epoch.\n"
            f"__device__ unsigned int {p}flag[{MAX_TILES}];\n"
            f"__device__ {value_type} {p}aggregate[{MAX_TILES}], {p}inclusive[{MAX_TILES}];\n"
            f"__device__ unsigned int {p}ticket, {p}finished, {p}epoch;\n\n")


@dataclass(frozen=True)
class ScanPlan:
    """What the single-pass generator needs: per element position `var` in [lower, end), the
    declarations and the contribution to the running sum, and the statements that use the
    running sum (`accumulator`, set to its inclusive or exclusive value first)."""

    kernel: str
    value_type: str
    var: str
    var_type: str
    lower: str
    end: str
    accumulator: str
    head: str  # before the scan, in every thread (declares the accumulator with its start value)
    position_decls: str  # declared at every position before the declarations (another index name)
    decls: str
    contribution: str
    element_code: str  # per position, after `accumulator = prefix + scanned (- value)`
    exclusive: bool  # the element code sees the sum before its own contribution
    tail: str  # once, with the accumulator at the total, in the block of the last tile


def _loop_plan(loop: ItemLoop, before: tuple[ItemStatement | ItemLoop, ...],
               after: tuple[ItemStatement | ItemLoop, ...], kernel: str) -> ScanPlan:
    """The plan of a one-thread scan loop (`acc += e; y[i] = acc;` or the exclusive order)."""
    scan = loop.scan
    assert scan is not None
    x = scan.accumulator
    statements = list(loop.body)
    update_at = statements.index(scan.update)
    users_before = any(x in _names_of(s) for s in statements[:update_at])
    users_after = any(x in _names_of(s) for s in statements[update_at + 1:])
    exclusive = users_before and not users_after
    p = PREFIX
    # The element code starts with the sum before this element; the update makes it inclusive.
    before_value = f"{x} = {p}prefix_ + {p}scanned_[{p}k_]" + ("" if exclusive else f" - {p}values_[{p}k_]") + ";"
    after_value = f"{x} = {p}prefix_ + {p}scanned_[{p}k_]" + (f" + {p}values_[{p}k_]" if exclusive else "") + ";"
    code = "\n".join(after_value if i == update_at else text(s) for i, s in enumerate(statements))
    return ScanPlan(kernel, plain_type(scan.type), loop.var, plain_type(loop.var_type), text(loop.lower), loop.end, x,
                    "\n".join(text(s.node) for s in before), "",
                    "\n".join(text(s) for s in statements[:update_at] if s.type == "declaration"),
                    text(scan.contribution), before_value + "\n" + code, exclusive,
                    "\n".join(text(s.node) for s in after))


def _prefix_plan(program: ItemProgram, kernel: str) -> ScanPlan | None:
    """The plan for `T s = init; for (j = 0; j <= i; ++j) s += f(j); out[i] = g(s);` (or
    `j < i`: exclusive), where f does not depend on the item i."""
    item = program.item
    if item is None or program.csr is not None or len(program.loops) != 1:
        return None
    loop = program.loops[0]
    if loop.scan is not None or loop.writes or len(loop.accumulators) != 1 or loop.accumulators[0].op != "sum":
        return None
    accumulator = loop.accumulators[0]
    value_type = plain_type(accumulator.type)
    if value_type not in SCANNABLE or text(loop.lower).strip() not in ("0", "0u", "0L", "0LL"):
        return None
    symbols = program.mapping.symbols if program.mapping is not None else None
    if symbols is None:
        return None
    end = symbols.poly(loop.upper) + Poly.const(1 if loop.inclusive_upper else 0)
    index = Poly.atom(item.name)
    if end == index + Poly.const(1):
        exclusive = False
    elif end == index:
        exclusive = True
    else:
        return None
    position = program.steps.index(loop)
    before, after = program.steps[:position], program.steps[position + 1:]
    if any(not isinstance(s, ItemStatement) or s.writes or item.name in _names_of(s.node) for s in before):
        return None
    decls = [s for s in loop.body if s.type == "declaration"]
    updates = [s for s in loop.body if s.type != "declaration"]
    contribution = _added(updates[0], accumulator.name) if len(updates) == 1 else None
    if contribution is None or any(item.name in _names_of(s) for s in loop.body):
        return None
    if any(a.index is None or depends_on(a.index, item.name) for a in loop.reads):
        return None
    for step in after:
        for access in accesses(step.node, symbols):
            if access.kind != "read" and access.index != index:
                return None
    item_type = plain_type(item.type)
    code = f"{accumulator.name} = {PREFIX}prefix_ + {PREFIX}scanned_[{PREFIX}k_];\n" + \
        "\n".join(text(s.node) for s in after)
    return ScanPlan(kernel, value_type, loop.var, plain_type(loop.var_type), "0", " ".join(item.bound.split()),
                    accumulator.name, "\n".join(text(s.node) for s in before),
                    f"const {item_type} {item.name} = ({item_type}){loop.var};", "\n".join(text(d) for d in decls),
                    contribution, code, exclusive, "")


def _added(statement: Node, accumulator: str) -> str | None:
    """e of `acc += e;`, `acc = acc + e;`, `acc = e + acc;`."""
    expression = unparen(statement.named_children[0]) if statement.type == "expression_statement" and \
        statement.named_children else None
    if expression is None or expression.type != "assignment_expression" or \
            text(expression.child_by_field_name("left")) != accumulator:
        return None
    operator = text(expression.child_by_field_name("operator"))
    right = unparen(expression.child_by_field_name("right"))
    if right is None:
        return None
    if operator == "+=":
        return text(right)
    if operator == "=" and right.type == "binary_expression" and text(right.child_by_field_name("operator")) == "+":
        left_side, right_side = unparen(right.child_by_field_name("left")), unparen(right.child_by_field_name("right"))
        if left_side is not None and text(left_side) == accumulator and right_side is not None:
            return text(right_side)
        if right_side is not None and text(right_side) == accumulator and left_side is not None:
            return text(left_side)
    return None


def _single_pass_body(plan: ScanPlan) -> str:
    p = PREFIX
    g = f"{PREFIX}{plan.kernel}_"
    value_type, var_type, x = plan.value_type, plan.var_type, plan.accumulator
    decls = (plan.position_decls + "\n" + plan.decls).strip()
    head, tail, replaced = plan.head, plan.tail, plan.element_code
    inclusive_scan = "ExclusiveSum" if plan.exclusive else "InclusiveSum"
    code = f"""// Single-pass scan: blocks take tiles of {TILE} elements in order (atomic ticket), scan
// them with cub::BlockScan and find the tile's prefix by looking back at earlier tiles.
{head}
typedef cub::BlockScan<{value_type}, {SCAN_BLOCK}> {p}block_scan_;
__shared__ typename {p}block_scan_::TempStorage {p}scan_temp_;
__shared__ unsigned int {p}tile_shared_, {p}epoch_shared_;
__shared__ {value_type} {p}prefix_shared_;
const {value_type} {p}start_ = {x};
const long long {p}lower_ = (long long)({plan.lower}), {p}upper_ = (long long)({plan.end});
const long long {p}tiles_ = {p}upper_ > {p}lower_ ? ({p}upper_ - {p}lower_ + {TILE - 1}) / {TILE} : 0;
if ({p}tiles_ > {MAX_TILES}) __trap();  // more tiles than status words
if (threadIdx.x == 0) {p}epoch_shared_ = *(volatile unsigned int *)&{g}epoch;
__syncthreads();
const unsigned int {p}tag_ = ({p}epoch_shared_ % 0x3fffffffu) + 1u;  // 30 bits, never 0 (a cleared flag)
if ({p}tiles_ == 0 && blockIdx.x == 0 && threadIdx.x == 0) {{
{indent_code(tail)}
}}
while (true) {{
    if (threadIdx.x == 0) {p}tile_shared_ = atomicAdd(&{g}ticket, 1u);
    __syncthreads();
    const long long {p}tile_ = {p}tile_shared_;
    if ({p}tile_ >= {p}tiles_) break;
    {value_type} {p}values_[{ITEMS}], {p}scanned_[{ITEMS}];
    {value_type} {p}running_ = ({value_type})0;
#pragma unroll
    for (int {p}k_ = 0; {p}k_ < {ITEMS}; ++{p}k_) {{
        const long long {p}pos_ = {p}lower_ + {p}tile_ * {TILE} + {p}k_ * {SCAN_BLOCK} + threadIdx.x;
        {value_type} {p}value_ = ({value_type})0;
        if ({p}pos_ < {p}upper_) {{
            const {var_type} {plan.var} = ({var_type}){p}pos_;
{indent_code(decls, 12)}
            {p}value_ = ({plan.contribution});
        }}
        {value_type} {p}sum_, {p}total_;
        {p}block_scan_({p}scan_temp_).{inclusive_scan}({p}value_, {p}sum_, {p}total_);
        __syncthreads();
        {p}values_[{p}k_] = {p}value_;
        {p}scanned_[{p}k_] = {p}running_ + {p}sum_;
        {p}running_ += {p}total_;
    }}
    if (threadIdx.x == 0) {{
        {value_type} {p}exclusive_ = ({value_type})0;
        if ({p}tile_ == 0) {{
            {g}inclusive[0] = {p}running_;
            __threadfence();
            atomicExch(&{g}flag[0], ({p}tag_ << 2) | 2u);
        }} else {{
            {g}aggregate[{p}tile_] = {p}running_;
            __threadfence();
            atomicExch(&{g}flag[{p}tile_], ({p}tag_ << 2) | 1u);
            for (long long {p}look_ = {p}tile_ - 1; ; --{p}look_) {{
                unsigned int {p}state_;
                do {{
                    {p}state_ = *(volatile unsigned int *)&{g}flag[{p}look_];
                }} while (({p}state_ >> 2) != {p}tag_);
                __threadfence();
                if (({p}state_ & 3u) == 2u) {{
                    {p}exclusive_ += *(volatile {value_type} *)&{g}inclusive[{p}look_];
                    break;
                }}
                {p}exclusive_ += *(volatile {value_type} *)&{g}aggregate[{p}look_];
            }}
            {g}inclusive[{p}tile_] = {p}exclusive_ + {p}running_;
            __threadfence();
            atomicExch(&{g}flag[{p}tile_], ({p}tag_ << 2) | 2u);
        }}
        {p}prefix_shared_ = {p}exclusive_;
    }}
    __syncthreads();
    const {value_type} {p}prefix_ = {p}start_ + {p}prefix_shared_;
#pragma unroll
    for (int {p}k_ = 0; {p}k_ < {ITEMS}; ++{p}k_) {{
        const long long {p}pos_ = {p}lower_ + {p}tile_ * {TILE} + {p}k_ * {SCAN_BLOCK} + threadIdx.x;
        if ({p}pos_ < {p}upper_) {{
            const {var_type} {plan.var} = ({var_type}){p}pos_;
{indent_code(plan.position_decls, 12)}
{indent_code(replaced, 12)}
        }}
    }}
    if ({p}tile_ == {p}tiles_ - 1 && threadIdx.x == 0) {{
        {x} = {p}prefix_ + {p}running_;
{indent_code(tail, 8)}
    }}
    __syncthreads();
}}
// The last block to finish readies the ticket for the next launch and advances the epoch.
if (threadIdx.x == 0) {{
    __threadfence();
    if (atomicAdd(&{g}finished, 1u) == gridDim.x - 1) {{
        {g}ticket = 0;
        {g}finished = 0;
        atomicAdd(&{g}epoch, 1u);
        __threadfence();
    }}
}}"""
    return "\n" + indent_code(code) + "\n"


def _names_of(node: object) -> set[str]:
    from tree_sitter import Node

    return identifiers_in(node) if isinstance(node, Node) else set()

