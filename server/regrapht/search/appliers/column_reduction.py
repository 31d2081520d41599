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

A second form gives each thread K = 4 columns, W lanes apart (a tile of K * W columns): per row
step a thread has K independent loads in flight (4x the bytes of the first form, which is what a
bandwidth-bound column walk with a few thousand columns lacks), each of them still coalesced
across the W lanes, and the K loads of a row together cover whole 128-byte lines. It needs loop
bounds that do not depend on the column (the K columns share the row loop); the original's
statements are repeated per column with their locals renamed. No alignment is assumed.

Those come first; then the rest of a parameter grid (`Rewrite.params`: tile_columns,
columns_per_thread, threads_per_column) in lexicographic order: W of 8, 16 and 32 lanes, K of 1, 2
and 4 columns per thread (2 and 4 only where the columns can share the row loop), blocks of 256,
512 and 1024 threads (and 128 for K = 1), as far as the device, the kernel's `__launch_bounds__`
and shared memory allow.
"""

from __future__ import annotations

from tree_sitter import Node

from regrapht.idioms.access import identifiers
from regrapht.idioms.items import ELEMENT, Accumulator, ItemLoop, ItemProgram, ItemStatement, item_program
from regrapht.idioms.normal_form import normal_form
from regrapht.idioms.syntax import depends_on, kernel_syntax, text, walk
from regrapht.idioms.threads import ItemIndex
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_edits
from regrapht.search.appliers.cooperative import (
    PREFIX,
    Group,
    ItemEmitter,
    indent_code,
    item_count,
    original_covers,
    plain_type,
    resident_warps,
    value_of,
)
from regrapht.search.appliers.grid import grid_order, thread_limit
from regrapht.search.source import KernelText, find_kernel
from regrapht.spec.launch import LaunchConfig

WIDTHS = (32, 16, 8)
BLOCKS = (256, 512, 1024)
COLUMNS_PER_THREAD = 4
GRID_COLUMNS_PER_THREAD = (1, 2, 4)


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
        item, work, head = _parts(self)
        item_type = plain_type(item.type)
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


def _parts(emitter: _ColumnEmitter | _MultiColumnEmitter) -> tuple[ItemIndex, str, str]:
    """(the item, the emitted steps, the head: kept prelude and shared declarations)."""
    program = emitter.program
    item = program.item
    assert item is not None
    work = "\n".join(emitter.loop(s) if isinstance(s, ItemLoop) else emitter.statement(s) for s in program.steps)
    kept = "\n".join(text(d) for d in program.kept_prelude)
    return item, work, "\n".join(p for p in (kept, "\n".join(emitter.declarations)) if p)


def renamed(node: Node, names: dict[str, str]) -> str:
    """The code of `node` with the identifiers in `names` replaced (locals of one column copy)."""
    raw = node.text or b""
    pieces, at = [], node.start_byte
    for part in walk(node):
        if part.type == "identifier" and text(part) in names:
            pieces += [raw[at - node.start_byte:part.start_byte - node.start_byte].decode(), names[text(part)]]
            at = part.end_byte
    pieces.append(raw[at - node.start_byte:].decode())
    return "".join(pieces)


class _MultiColumnEmitter(ItemEmitter):
    """K columns per thread, W lanes apart; the row loop is shared by the K columns."""

    def __init__(self, program: ItemProgram, width: int, block: int, per_thread: int) -> None:
        super().__init__(program, Group("block", block))
        self.width, self.height, self.per_thread = width, block // width, per_thread
        item = program.item
        assert item is not None
        # Loop variables are shared by the copies (one row loop); a `while` loop's counter is an
        # item-level local declared before it.
        self.shared = {loop.var for loop in program.loops}
        own = sorted((program.locals | {item.name}) - self.shared)
        self.copies = [{name: f"{PREFIX}{name}_{k}_" for name in own} for k in range(per_thread)]

    def combine_all(self, accumulators: tuple[Accumulator, ...]) -> str:
        """The row shares of every column copy of every accumulator, combined in one shared tree."""
        lines, tree, after = [], [], []
        tile = self.width * self.per_thread
        for accumulator in accumulators:
            value_type = plain_type(accumulator.type)
            shared = f"{PREFIX}shares_{accumulator.name}_"
            self.declare_once(shared, f"__shared__ {value_type} {shared}[{self.height}][{tile}];")
            if accumulator.op == "sum":
                join = f"{PREFIX}a_ + {PREFIX}b_"
            else:
                join = f"{self.functor(accumulator)}()({PREFIX}a_, {PREFIX}b_)"
            for k, names in enumerate(self.copies):
                x = names[accumulator.name]
                slot = f"{k * self.width} + {PREFIX}w_"
                lines.append(f"{shared}[{PREFIX}h_][{slot}] = {x};")
                tree.append(f"{{ const {value_type} {PREFIX}a_ = {shared}[{PREFIX}h_][{slot}], "
                            f"{PREFIX}b_ = {shared}[{PREFIX}h_ + {PREFIX}half_][{slot}]; "
                            f"{shared}[{PREFIX}h_][{slot}] = {join}; }}")
                base = f"{PREFIX}init_{x} + " if accumulator.op == "sum" else ""
                after.append(f"{x} = {base}{shared}[0][{slot}];")
        return "\n".join([
            "// Combine the row shares of each column (a shared-memory tree).",
            *lines, "__syncthreads();",
            f"for (int {PREFIX}half_ = {self.height // 2}; {PREFIX}half_ > 0; {PREFIX}half_ >>= 1) {{",
            f"    if ({PREFIX}h_ < {PREFIX}half_) {{", indent_code("\n".join(tree), 8), "    }",
            "    __syncthreads();", "}", *after, "__syncthreads();"])

    def loop(self, loop: ItemLoop) -> str:
        before = []
        for accumulator in loop.accumulators:
            if accumulator.op == "sum":
                value_type = plain_type(accumulator.type)
                for names in self.copies:
                    x = names[accumulator.name]
                    before += [f"const {value_type} {PREFIX}init_{x} = {x};", f"{x} = ({value_type})0;"]
        body = "\n".join(renamed(s, names) for names in self.copies for s in loop.body)
        code = [*before, "#pragma unroll 4",  # with K columns: 4K loads in flight per thread
                f"for ({plain_type(loop.var_type)} {loop.var} = ({text(loop.lower)}) + {PREFIX}h_; "
                f"{loop.var} < ({loop.end}); {loop.var} += {self.height}) {{", indent_code(body), "}",
                self.combine_all(loop.accumulators)]
        return "{\n" + indent_code("\n".join(code)) + "\n}"

    def statement(self, statement: ItemStatement) -> str:
        if not statement.writes:
            if identifiers(statement.node) & self.shared:
                return text(statement.node)  # the declaration of a shared loop counter
            return "\n".join(renamed(statement.node, names) for names in self.copies)
        guarded = [f"if ({PREFIX}column_ + {k * self.width} < {PREFIX}columns_) {{\n"
                   f"{indent_code(renamed(statement.node, names))}\n}}" for k, names in enumerate(self.copies)]
        return f"if ({PREFIX}h_ == 0) {{\n{indent_code(chr(10).join(guarded))}\n}}"

    def column_body(self) -> str:
        item, work, head = _parts(self)
        item_type = plain_type(item.type)
        w, h, k = self.width, self.height, self.per_thread
        columns = "\n".join(
            f"const {item_type} {names[item.name]} = ({item_type})({PREFIX}column_ + {c * w} < {PREFIX}columns_ ? "
            f"{PREFIX}column_ + {c * w} : {PREFIX}columns_ - 1);" for c, names in enumerate(self.copies))
        return "\n" + indent_code(f"""// Tiles of {w * k} columns, {h} threads per column: each thread owns {k} columns {w} apart and
// sums a strided share of their rows ({k} coalesced loads in flight per row), the shares are combined in shared memory.
{head}
const int {PREFIX}w_ = threadIdx.x % {w}, {PREFIX}h_ = threadIdx.x / {w};
const long long {PREFIX}columns_ = (long long)({item.bound});
for (long long {PREFIX}tile_ = blockIdx.x; {PREFIX}tile_ * {w * k} < {PREFIX}columns_; {PREFIX}tile_ += gridDim.x) {{
    const long long {PREFIX}column_ = {PREFIX}tile_ * {w * k} + {PREFIX}w_;
    // Threads past the last column repeat it (every thread must reach the barriers) and write nothing.
{indent_code(columns)}
{indent_code(work)}
}}""") + "\n"


def multi_column_ready(program: ItemProgram) -> bool:
    """Whether the K column copies can share each row loop: its bounds use neither the column
    nor anything computed per column."""
    item = program.item
    assert item is not None
    counters = {loop.var for loop in program.loops}
    own = (program.locals | {item.name}) - counters
    for step in program.steps:
        # only a plain declaration of the counter (`int c = 0;`) may mention it at item level
        if isinstance(step, ItemStatement) and identifiers(step.node) & counters and \
                (step.node.type != "declaration" or identifiers(step.node) & own):
            return False
    return all(not (identifiers(loop.lower) | identifiers(loop.upper)) & own for loop in program.loops)


def no_clash(program: ItemProgram) -> bool:
    """No name of the kernel starts with the generated names' prefix."""
    return not any(text(n).startswith(PREFIX) for n in walk(program.kernel.function) if n.type == "identifier")


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


def multi_shapes(given: ApplierInput, columns: str) -> list[tuple[int, int]]:
    """(lanes across the tile, block size) pairs of the K-columns-per-thread form: 8 lanes (a
    tile of 32 columns: whole 128-byte lines of 4-byte values), then 4 lanes (twice the tiles,
    for matrices with too few columns to fill the device); each with the smallest block whose
    warps fill the device's resident warps (1024 when none does)."""
    count = value_of(columns, given)
    resident = resident_warps(given)
    shapes = []
    for width in (8, 4):
        chosen = 1024
        if count is not None and resident is not None:
            tiles = -(-count // (width * COLUMNS_PER_THREAD))
            chosen = next((b for b in BLOCKS if tiles * (b // 32) >= resident), 1024)
        shapes.append((width, chosen))
    return shapes


def shared_fits(given: ApplierInput, program: ItemProgram, cells: int) -> bool:
    """Whether `cells` shared values per accumulator fit the device's shared memory per block
    (8 bytes a value when the type is not a known scalar, e.g. a template parameter)."""
    sizes = {"float": 4, "int": 4, "unsigned int": 4, "unsigned": 4, "short": 2, "char": 1}
    total = sum(cells * sizes.get(plain_type(a.type), 8) for a in program.accumulators)
    limit = given.device.shared_bytes_per_block if given.device is not None else 48 * 1024
    return total <= limit


class ColumnSplitReduction:
    technique = "column_split_reduction"
    also: tuple[str, ...] = ("memory_coalescing",)

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        # Pointer walks (`p += n`) read as indexing, sums kept in `y[j]` as register sums (normal_form).
        kernel = kernel_syntax(normal_form(given.source, given.kernel), given.kernel)
        located = find_kernel(given.source, given.kernel)
        if kernel is None or located is None:
            return []
        program = item_program(kernel)
        if program is None or program.csr is not None or not column_layout(program):
            return []
        if not original_covers(given, program) or not no_clash(program):
            return []
        columns = item_count(given, program)
        if columns is None:
            return []
        largest = thread_limit(given)
        ready = multi_column_ready(program)
        # (lanes across the tile W, columns per thread K, block size): the current choices first
        first = [(width, COLUMNS_PER_THREAD, block) for width, block in (multi_shapes(given, columns) if ready else [])]
        first += [(width, 1, block) for width, block in shapes_for(given, columns)]
        grid = [(width, per_thread, block) for width in WIDTHS
                for per_thread in (GRID_COLUMNS_PER_THREAD if ready else (1,))
                for block in ((128, *BLOCKS) if per_thread == 1 else BLOCKS) if block <= largest]

        def rewrites(shapes: list[tuple[int, int, int]]) -> list[Rewrite]:
            return [self._rewrite(given, located, program, columns, width, per_thread, block)
                    for width, per_thread, block in shapes
                    if per_thread == 1 or shared_fits(given, program, block * per_thread)]

        return grid_order(rewrites(first), rewrites(grid))

    @staticmethod
    def _rewrite(given: ApplierInput, located: KernelText, program: ItemProgram, columns: str,
                 width: int, per_thread: int, block: int) -> Rewrite:
        tile = width * per_thread
        launch = LaunchConfig((f"({columns} + {tile - 1}) / {tile}",), (str(block),), given.launch.shared_bytes)
        params = shape_params(width, per_thread, block)
        if per_thread == 1:
            body = _ColumnEmitter(program, width, block).column_body()
            return Rewrite(given.source, launch,
                           f"column tiles of {width}, {block // width} threads per column, shared-memory combine", params, edits=body_edits(given, located, body))
        body = _MultiColumnEmitter(program, width, block, per_thread).column_body()
        return Rewrite(given.source, launch,
                       f"column tiles of {tile}, {per_thread} columns per thread, "
                       f"{block // width} threads per column, shared-memory combine", params, edits=body_edits(given, located, body))


def shape_params(width: int, per_thread: int, block: int) -> tuple[tuple[str, int], ...]:
    """A shape's coordinates in the grid (the block is width * threads per column)."""
    return (("tile_columns", width * per_thread), ("columns_per_thread", per_thread),
            ("threads_per_column", block // width))
