"""Column reductions with one thread per column -> column tiles with many threads per column.

Matches (through `idioms.items.item_program`) kernels where each thread owns a column `c` and
loops over the rows with a stride of the row length (`a[r * cols + c]`): column sums, maxima and
minima, means, and the transposed GEMV `y[c] = sum_r A[r, c] * x[r]`. The original is coalesced
across columns, but it has one thread per column: a matrix with a few thousand columns keeps
only a few warps per SM busy, each waiting for one load per row.

The rewrite gives each block a tile of W adjacent columns and B / W threads per column (B up to 1024): a warp
reads 32 / W rows of W adjacent columns per step (whole 32-byte sectors even for W = 8), each
thread sums a strided share of the rows, and the shares of one column are combined in shared
memory with the original's operator; thread row 0 writes the result. W and B come from the device:
the widest tile (32, 16, 8) and smallest block whose warps fill the device's resident warps.
Column tiles are visited by a block-stride loop, so any grid is correct.
"""

from __future__ import annotations

from regrapht.idioms.items import ELEMENT, Accumulator, ItemLoop, ItemProgram, ItemStatement, item_program
from regrapht.idioms.syntax import depends_on, kernel_syntax, text
from regrapht.search.appliers.common import ApplierInput, Rewrite, with_body
from regrapht.search.appliers.cooperative import (
    PREFIX,
    Group,
    ItemEmitter,
    indent_code,
    item_count,
    original_covers,
    plain_type,
    resident_warps,
    usable,
    value_of,
)
from regrapht.search.source import find_kernel
from regrapht.spec.launch import LaunchConfig

WIDTHS = (32, 16, 8)
BLOCKS = (256, 512, 1024)


def column_layout(program: ItemProgram) -> bool:
    """Only reduction loops, and each reads an item-dependent array with a non-unit stride in
    the loop index (down a column) and unit stride in the item (adjacent columns)."""
    item = program.item
    if item is None or not program.loops:
        return False
    for loop in program.loops:
        if loop.writes or loop.scan is not None or not loop.accumulators:
            return False
        if any(a.op in ("argmax", "argmin") for a in loop.accumulators):
            return False
        down = False
        for access in loop.reads:
            if access.index is None:
                return False
            if depends_on(access.index, item.name):
                step = access.index.coefficient(ELEMENT)
                if step.kind not in ("runtime", "constant") or access.index.coefficient(item.name).kind != "unit":
                    return False
                down = True
        if not down:
            return False
    return True


class _ColumnEmitter(ItemEmitter):
    def __init__(self, program: ItemProgram, width: int, block: int) -> None:
        super().__init__(program, Group("block", block))
        self.width = width
        self.height = block // width

    def combine(self, accumulator: Accumulator) -> str:
        value_type = plain_type(accumulator.type)
        tid = value_type.replace(" ", "_")
        shared = f"{PREFIX}shares_{tid}_"
        self.declare_once(shared, f"__shared__ {value_type} {shared}[{self.height}][{self.width}];")
        x = accumulator.name
        if accumulator.op == "sum":
            join = f"{PREFIX}a_ + {PREFIX}b_"
        else:
            join = f"{self.functor(accumulator)}()({PREFIX}a_, {PREFIX}b_)"
        base = f"{PREFIX}init_{x}_ + " if accumulator.op == "sum" else ""
        return f"""{{
    // Combine the {self.height} row shares of each column (a shared-memory tree).
    {shared}[{PREFIX}h_][{PREFIX}w_] = {x};
    __syncthreads();
    for (int {PREFIX}half_ = {self.height // 2}; {PREFIX}half_ > 0; {PREFIX}half_ >>= 1) {{
        if ({PREFIX}h_ < {PREFIX}half_) {{
            const {value_type} {PREFIX}a_ = {shared}[{PREFIX}h_][{PREFIX}w_], {PREFIX}b_ = {shared}[{PREFIX}h_ + {PREFIX}half_][{PREFIX}w_];
            {shared}[{PREFIX}h_][{PREFIX}w_] = {join};
        }}
        __syncthreads();
    }}
    {x} = {base}{shared}[0][{PREFIX}w_];
    __syncthreads();
}}"""

    def loop(self, loop: ItemLoop) -> str:
        before = []
        for accumulator in loop.accumulators:
            if accumulator.op == "sum":
                value_type = plain_type(accumulator.type)
                before.append(f"const {value_type} {PREFIX}init_{accumulator.name}_ = {accumulator.name};")
                before.append(f"{accumulator.name} = ({value_type})0;")
        body = "\n".join(text(s) for s in loop.body)
        code = [*before, "#pragma unroll 4",  # several rows' loads in flight per thread
                f"for ({plain_type(loop.var_type)} {loop.var} = ({text(loop.lower)}) + {PREFIX}h_; "
                f"{loop.var} < ({loop.end}); {loop.var} += {self.height}) {{", indent_code(body), "}"]
        code += [self.combine(a) for a in loop.accumulators]
        return "{\n" + indent_code("\n".join(code)) + "\n}"

    def statement(self, statement: ItemStatement) -> str:
        code = text(statement.node)
        if statement.writes:
            return f"if ({PREFIX}h_ == 0 && {PREFIX}column_ < {PREFIX}columns_) {{\n{indent_code(code)}\n}}"
        return code

    def column_body(self) -> str:
        program = self.program
        item = program.item
        assert item is not None
        work = "\n".join(self.loop(s) if isinstance(s, ItemLoop) else self.statement(s) for s in program.steps)
        item_type = plain_type(item.type)
        kept = "\n".join(text(d) for d in program.kept_prelude)
        head = "\n".join(p for p in (kept, "\n".join(self.declarations)) if p)
        w, h = self.width, self.height
        return "\n" + indent_code(f"""// Tiles of {w} adjacent columns, {h} threads per column: each thread sums a strided share
// of the rows (a warp reads {w} adjacent columns of {32 // w} rows per step), the shares are combined in shared memory.
{head}
const int {PREFIX}w_ = threadIdx.x % {w}, {PREFIX}h_ = threadIdx.x / {w};
const long long {PREFIX}columns_ = (long long)({item.bound});
for (long long {PREFIX}tile_ = blockIdx.x; {PREFIX}tile_ * {w} < {PREFIX}columns_; {PREFIX}tile_ += gridDim.x) {{
    const long long {PREFIX}column_ = {PREFIX}tile_ * {w} + {PREFIX}w_;
    // Threads past the last column repeat it (every thread must reach the barriers) and write nothing.
    const {item_type} {item.name} = ({item_type})({PREFIX}column_ < {PREFIX}columns_ ? {PREFIX}column_ : {PREFIX}columns_ - 1);
{indent_code(work)}
}}""") + "\n"


def shapes_for(given: ApplierInput, columns: str) -> list[tuple[int, int]]:
    """(tile width, block size) pairs to try, most promising first: the widest tile, then the
    smallest block, whose warps fill the device's resident warps."""
    count = value_of(columns, given)
    resident = resident_warps(given)
    if count is None or resident is None:
        return [(32, 256), (8, 1024)]
    for width in WIDTHS:
        for block in BLOCKS:
            if -(-count // width) * (block // 32) >= resident:
                return [(width, block)] + ([(32, 256)] if (width, block) != (32, 256) else [(8, 1024)])
    return [(8, 1024), (32, 256)]


class ColumnSplitReduction:
    technique = "column_split_reduction"
    also: tuple[str, ...] = ("memory_coalescing",)

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        kernel = kernel_syntax(given.source, given.kernel)
        located = find_kernel(given.source, given.kernel)
        if kernel is None or located is None:
            return []
        program = item_program(kernel)
        if program is None or program.csr is not None or not column_layout(program):
            return []
        if not original_covers(given, program) or not usable(program, Group("block", 256)):
            return []
        columns = item_count(given, program)
        if columns is None:
            return []
        rewrites = []
        for width, block in shapes_for(given, columns):
            body = _ColumnEmitter(program, width, block).column_body()
            launch = LaunchConfig((f"({columns} + {width - 1}) / {width}",), (str(block),), given.launch.shared_bytes)
            rewrites.append(Rewrite(with_body(given, located, body), launch,
                                    f"column tiles of {width}, {block // width} threads per column, shared-memory combine"))
        return rewrites
