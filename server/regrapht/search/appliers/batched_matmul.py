"""Batched products of small matrices -> several matrices per block staged in shared memory.

Recognised on the source model (`idioms/batched_gemm.py`): any thread mapping that computes each
`C[b](i, j) = f(sum_k A[b](i, k) * B[b](k, j))` once (one block per matrix with threadIdx as
(row, col), a flat id divided by M*N, a batch loop, blockIdx.z), fixed (template, `#define`) or
runtime sizes, float or double, either operand transposed, alpha/beta epilogues. Products are
formed in the type the original forms them in (`(double)A[..] * (double)B[..]` on float data:
double, from the source model's `product_type`) and summed in its accumulator's type, so each
rounding is the original's.

The replacement is a 1-D grid-stride loop over *groups* of matrices. A block loads a group's
A and B with coalesced loads along whichever direction each operand is contiguous into padded
shared tiles (row pitch K+1 and N+1: a column walk and a row walk are both free of bank
conflicts), then each thread computes R x C outputs (rows r, r + M/R, ..., columns c, c + N/C,
...: R * C FMAs per R + C shared reads), and the kernel's own epilogue stores them, consecutive
threads on consecutive columns. The group holds enough matrices to give every thread R outputs (capped by
the shared-memory budget the device allows a block), so 4x4 .. 64x64 matrices all keep a full
block busy. Sizes that are compile-time (template parameters) fold into constants; runtime
sizes are read at run time, and a matrix too large for the budget is computed straight from
global memory (correct for any size, only slow). The grid is one block per group, at most eight
waves of the device the worker reports (resident blocks of this size), so a block that started
late does not leave SMs idle at the end.

The variants form a parameter grid (`Rewrite.params`: thread_m x thread_n outputs per thread,
passes: how many times over each thread's outputs a group holds, i.e. matrices per block): the
hand-picked blockings first, then R in {1, 2, 4, 8} x C in {1, 2, 4} (R * C <= 16, R <= M,
C <= N) x passes {1, 2} in lexicographic order; a block that holds one matrix has passes 1.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from regrapht.cuda.affine import Poly
from regrapht.idioms.batched_gemm import BatchedOperand, BatchedProduct, batched_product, substitute
from regrapht.idioms.pointer_walks import indexed_pointer_walks
from regrapht.idioms.pointwise import coefficient_of
from regrapht.idioms.spelling import plain_spelling
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_edits
from regrapht.search.appliers.grid import grid_order
from regrapht.search.source import KernelText, find_kernel
from regrapht.spec.launch import LaunchConfig

THREADS = 256
SHARED_BUDGET = 32 * 1024  # bytes per block for runtime sizes: several blocks still fit on one SM
SHARED_LIMIT = 48 * 1024  # static shared memory a block may have without opting in
# Tiles of at most this size never make shared memory, rather than threads, bound residency: eight
# such blocks (2048 threads of 256) take 64 KB, below every SM's shared memory since sm_70.
SHARED_FLOOR = 8 * 1024
WAVES = 8
# The searched grid: outputs per thread (rows, cols) and passes (matrices per block: each thread
# computes its R x C outputs in that many matrices of the group)
GRID_BLOCKINGS = tuple((r, c) for r in (1, 2, 4, 8) for c in (1, 2, 4) if r * c <= 16)
PASSES = (1, 2)


def _blockings(m: int | None, n: int | None) -> list[tuple[int, int]]:
    """(rows, cols) of outputs per thread, most promising first: 4x1 reuses each B element four
    times; 4x4 (first from 64x64 up, where it still gives every thread a block) loads 8 values
    per 16 FMAs; 1x1 spreads the most parallelism over tiny matrices."""
    if m is not None and n is not None and m * n >= 4096:
        return [(4, 4), (4, 1), (2, 2)]
    if m is not None and n is not None and m >= 32 and n >= 32:
        return [(4, 1), (4, 4), (2, 2)]
    if m is not None and m < 8:
        return [(2, 1), (1, 1)] if m >= 4 else [(1, 1)]
    return [(4, 1), (2, 1), (1, 1)]
NAMES = {"b": "b_bg", "i": "i_bg", "j": "j_bg"}


class BatchedSmallMatmul:
    technique = "shared_memory_tiling"
    also: tuple[str, ...] = ("register_blocking",)

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        kernel = find_kernel(given.source, given.kernel)
        if kernel is None:
            return []
        product = batched_product(given.source, given.kernel, given.launch.grid, given.launch.block, given.constants)
        walked = indexed_pointer_walks(given.source, given.kernel)
        if product is None and walked != given.source:
            # `acc += *pa++ * *pb; pb += N;`: the walks read as the subscripts they are (the body
            # is replaced whole, so which reading found the product does not matter)
            product = batched_product(plain_spelling(walked, given.kernel), given.kernel, given.launch.grid,
                                      given.launch.block, given.constants)
        if product is None:
            return []
        size = 8 if product.element == "double" else 4
        limit = min(SHARED_LIMIT, given.device.shared_bytes_per_block if given.device else SHARED_LIMIT) // size
        m, n, k = (product.value(x, given.constants) for x in (product.m, product.n, product.k))
        per = m * (k + 1) + k * (n + 1) if m is not None and n is not None and k is not None else None
        if per is not None and per > limit:
            return []  # large matrices: MatmulTiling's tiles serve them
        threads = min(THREADS, given.device.max_threads_per_block if given.device else THREADS)
        if product.batch_axis is not None:
            return _block_per_matrix(given, kernel, product, m, n, per, limit, threads)
        rewrites = []
        groups = set()
        points = _points(m, n, (1, 2))
        for rows, cols, passes in points:
            group = None
            capacity = SHARED_BUDGET // size
            if per is not None and m is not None and n is not None:
                group = max(1, min(limit // per, -(-threads * rows * cols * passes // (m * n))))
                if (rows, cols, group) in groups:
                    continue  # more passes than shared memory holds matrices for: the same group
                groups.add((rows, cols, group))
                # the group at the spec's sizes, with headroom up to SHARED_FLOOR for runtime
                # sizes (a larger run takes smaller groups); not the whole budget: shared memory
                # would then hold residency below the thread limit the grid is sized by
                capacity = max(group * per, SHARED_FLOOR // size)
            grid = _grid(product, given, group, threads)
            if grid is None:
                return []
            body = _body(product, rows, cols, threads, capacity, passes=passes)
            shape = f"{m}x{n}" if m is not None and n is not None else "small"
            held = (f"{group} matri{'x' if group == 1 else 'ces'}" if group is not None else "a group of matrices")
            rewrites.append(Rewrite(given.source, LaunchConfig((grid,), (str(threads),)),
                                    f"{held} of {shape} per block in shared memory, {rows}x{cols} outputs per thread"
                                    + (f", {passes} passes" if passes > 1 else ""),
                                    (("thread_m", rows), ("thread_n", cols), ("passes", passes)), edits=body_edits(given, kernel, body)))
        first = len(_blockings(m, n))
        return grid_order(rewrites[:first], rewrites[first:])


def _points(m: int | None, n: int | None, passes: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(rows, cols, passes): the hand-picked blockings (one pass) first, then the rest of the grid;
    no more rows (columns) per thread than a matrix has."""
    first = [(rows, cols, 1) for rows, cols in _blockings(m, n)]
    return first + [(rows, cols, p) for rows, cols in GRID_BLOCKINGS for p in passes
                    if (m is None or rows <= m) and (n is None or cols <= n) and (rows, cols, p) not in first]


def _block_per_matrix(given: ApplierInput, kernel: KernelText, product: BatchedProduct, m: int | None,
                      n: int | None, per: int | None, limit: int, threads: int) -> list[Rewrite]:
    """The batch count exists only in the launch (a block per matrix along a grid axis the kernel
    never bounds, e.g. `grid.z = batch` with `batch` not a parameter): keep that axis of the
    grid, drop the others to 1 and give each block `threads` threads for its matrix."""
    axis = product.batch_axis
    assert axis is not None
    index = "xyz".index(axis)
    original = (list(given.launch.grid) + ["1"] * 3)[:3]
    grid = tuple(original[i] if i == index else "1" for i in range(index + 1))
    floor = SHARED_FLOOR // (8 if product.element == "double" else 4)
    capacity = max(per, floor) if per is not None else SHARED_BUDGET // (8 if product.element == "double" else 4)
    rewrites = []
    for rows, cols, passes in _points(m, n, (1,)):
        body = _body(product, rows, cols, 0, min(capacity, limit), axis=axis)
        size = _block_for(m, n, rows, cols, threads)
        rewrites.append(Rewrite(given.source, LaunchConfig(grid, (str(size),)),
                                f"a matrix per block (grid {axis}) in shared memory, {size} threads, "
                                f"{rows}x{cols} outputs per thread",
                                (("thread_m", rows), ("thread_n", cols), ("passes", passes)), edits=body_edits(given, kernel, body)))
    first = len(_blockings(m, n))
    return grid_order(rewrites[:first], rewrites[first:])


def _block_for(m: int | None, n: int | None, rows: int, cols: int, threads: int) -> int:
    """Threads for a block that holds one matrix: one per R x C outputs, in whole warps (a
    12x8 matrix at 2x1 needs 48: two warps, not 256 threads of which 208 would only load)."""
    if m is None or n is None:
        return threads
    work = -(-m // rows) * -(-n // cols)
    return max(32, min(threads, -(-work // 32) * 32))


def _grid(product: BatchedProduct, given: ApplierInput, group: int | None, threads: int) -> str | None:
    """Blocks for the grid-stride loop over groups: one per group, at most what fills the device."""
    batch = product.value(product.batch, given.constants)
    if batch is not None and group is not None:
        needed = str(-(-batch // group))
    elif batch is not None:
        needed = str(batch)  # a block per matrix at most (the group is the kernel's to work out)
    elif not product.batch.atoms() & set(product.template_values):
        text = product.batch.text()  # the kernel's scalars are the spec's names
        needed = f"({text} + {group - 1}) / {group}" if group is not None and group > 1 else text
    else:
        return None
    if given.device is None:
        return needed
    # Several waves of blocks, not one: the resident count is thread-limited (the worker does not
    # report shared memory per SM), so one "full" wave could leave a tail wave of a few blocks;
    # with eight the tail is small and the hardware scheduler balances the rest.
    resident = given.device.resident_blocks(threads) * WAVES
    if needed.isdigit():
        return str(min(int(needed), resident))
    return f"min({needed}, {resident})"


@functools.lru_cache(maxsize=1024)  # pure; each grid point's body names the same few polynomials
def _text(poly: Poly) -> str:
    named = substitute(poly, {key: Poly.atom(value) for key, value in NAMES.items()})
    assert named is not None
    return f"({named.text()})"


def _index(operand: BatchedOperand, outer: str, inner: str) -> str:
    return f"{_text(operand.base)} + {_text(operand.outer)} * {outer} + {_text(operand.inner)} * {inner}"


def _dense_stride(product: BatchedProduct, operand: BatchedOperand, extent: Poly) -> Poly | None:
    """The batch stride when the operand's matrices lie back to back, each dense (row- or
    column-major, stride `extent * K`): a group is then one contiguous run of memory."""
    stride = coefficient_of(operand.base, "b")
    size = extent * product.k
    if size is None or stride != size or operand.base.atoms() - {"b"} - set(product.template_values) - \
            _scalars(operand.base):
        return None
    if not ((operand.inner == Poly.const(1) and operand.outer == product.k) or
            (operand.outer == Poly.const(1) and operand.inner == extent)):
        return None
    return stride


def _scalars(poly: Poly) -> set[str]:
    return {a for a in poly.atoms() if a != "b"}


def _a_slot(row: str) -> str:
    """Where row `row` of A's matrix l_bg, column kk_bg, sits in the group's tile (pitch k + 1)."""
    return f"(l_bg * m_bg + {row}) * (k_bg + 1) + kk_bg"


def _b_slot(column: str) -> str:
    """Where row kk_bg, column `column` of B's matrix l_bg sits in the group's tile (pitch n + 1)."""
    return f"(l_bg * k_bg + kk_bg) * (n_bg + 1) + {column}"


def _load(product: BatchedProduct, operand: BatchedOperand, tile: str, extent_name: str, coordinate: str,
          decode: str, slot: Callable[[str], str], th: _Threads) -> str:
    """Copy the group's part of one operand into its tile, in the operand's memory order: with
    16-byte vectors when the group is one contiguous, aligned run, else element by element."""
    extent = product.m if tile == "as_bg" else product.n
    where = slot(coordinate)
    address = _index(operand, coordinate, "kk_bg")
    generic = f"""
#pragma unroll 4
        for (int e_bg = {th.tid}; e_bg < count_bg * {extent_name} * k_bg; e_bg += {th.count}) {{
            const int l_bg = e_bg / ({extent_name} * k_bg), r_bg = e_bg % ({extent_name} * k_bg);
            {decode}
            const long long {NAMES['b']} = g_bg + l_bg;  // 64-bit: batch offsets may pass 2^31
            {tile}[{where}] = {operand.array}[{address}];
        }}"""
    stride = _dense_stride(product, operand, extent)
    if stride is None or product.element_text != product.element:
        return generic  # not one run, or a template's element type: the vector type would be fixed
    t = product.element
    vector, width = {"float": ("float4", 4), "double": ("double2", 2), "int": ("int4", 4)}[t]
    lanes = ("x", "y", "z", "w")[:width]
    offset = operand.base - coefficient_of(operand.base, "b") * Poly.atom("b")  # type: ignore[operator]
    puts = "\n".join(f"                    put_bg(v_bg * {width} + {n}, q_bg.{lane});" for n, lane in enumerate(lanes))
    return f"""
        {{  // the group's {operand.array} is one contiguous run: {vector} loads when it is aligned
            const {t} *const run_bg = {operand.array} + g_bg * {_text(stride)}{f" + {_text(offset)}" if offset.terms else ""};
            const int total_bg = count_bg * {extent_name} * k_bg;
            auto put_bg = [&](int e_bg, {t} value_bg) {{
                const int l_bg = e_bg / ({extent_name} * k_bg), r_bg = e_bg % ({extent_name} * k_bg);
                {decode}
                {tile}[{where}] = value_bg;
            }};
            int e0_bg = 0;
            if ((reinterpret_cast<unsigned long long>(run_bg) & 15) == 0) {{
#pragma unroll 4
                for (int v_bg = {th.tid}; v_bg < total_bg / {width}; v_bg += {th.count}) {{
                    const {vector} q_bg = reinterpret_cast<const {vector} *>(run_bg)[v_bg];
{puts}
                }}
                e0_bg = total_bg / {width} * {width};
            }}
            for (int e_bg = e0_bg + {th.tid}; e_bg < total_bg; e_bg += {th.count})
                put_bg(e_bg, run_bg[e_bg]);
        }}"""


@dataclass(frozen=True)
class _Threads:
    """How the generated body names a block's threads: x of a 1-D block (the batch on grid x,
    `count` threads a block as the loops step), or a flat index over any block shape with the
    batch on grid `axis` (the original launch kept)."""

    count: str
    tid: str = "threadIdx.x"
    block: str = "blockIdx.x"
    grid: str = "gridDim.x"
    size: str = "blockDim.x"
    preamble: str = ""  # declarations the names need

    @staticmethod
    def on_axis(axis: str) -> _Threads:
        flat = "(int)((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x)"
        return _Threads("threads_bg", "tid_bg", f"blockIdx.{axis}", f"gridDim.{axis}", "threads_bg",
                        f"    const int threads_bg = (int)(blockDim.x * blockDim.y * blockDim.z), tid_bg = {flat};\n")


def _body(product: BatchedProduct, rows: int, cols: int, threads: int, capacity: int, axis: str | None = None,
          passes: int = 1) -> str:
    """The kernel body; `threads` 0 with `axis`: the original launch is kept (any block shape,
    the batch is grid `axis`, one matrix per block). `passes`: a group holds the matrices for
    that many rounds of every thread's outputs."""
    th = _Threads(str(threads)) if axis is None else _Threads.on_axis(axis)
    return _body_1d(product, rows, cols, threads or 1, capacity, axis is not None, th, passes)


def _body_1d(product: BatchedProduct, rows: int, cols: int, threads: int, capacity: int, one: bool,
             th: _Threads, passes: int = 1) -> str:
    t, acc_t = product.element_text, product.acc_text  # as written: a template stays generic
    # the products are formed where the original forms them (`(double)a * (double)b` on float
    # data: in double), so each rounds as it did there
    p_t = product.product_text
    widen = "" if product.product_type == product.element else f"({p_t})"
    fixed = (product.m.atoms() | product.n.atoms() | product.k.atoms()) <= product.compile_time
    const = "constexpr int" if fixed else "const int"
    a, b = product.a, product.b
    b_, i_, j_ = NAMES["b"], NAMES["i"], NAMES["j"]
    c_index = f"{_text(product.c_base)} + {_text(product.c_row)} * {i_} + {_text(product.c_col)} * {j_}"
    stored = f"{product.output}[{c_index}]"
    # A is loaded along k when k is its contiguous direction, else along its rows; B likewise.
    a_along_k = a.inner.constant == 1 or a.outer.constant != 1
    b_along_n = b.outer.constant == 1 or b.inner.constant != 1
    if a_along_k:
        a_decode = f"const int {i_} = r_bg / k_bg, kk_bg = r_bg % k_bg;"
    else:
        a_decode = f"const int kk_bg = r_bg / m_bg, {i_} = r_bg % m_bg;"
    if b_along_n:
        b_decode = f"const int kk_bg = r_bg / n_bg, {j_} = r_bg % n_bg;"
    else:
        b_decode = f"const int {j_} = r_bg / k_bg, kk_bg = r_bg % k_bg;"
    a_load = _load(product, a, "as_bg", "m_bg", i_, a_decode, _a_slot, th)
    b_load = _load(product, b, "bs_bg", "n_bg", j_, b_decode, _b_slot, th)
    direct_store = product.epilogue.written("sum_bg", stored)
    group_store = product.epilogue.written("acc_bg[q_bg][p_bg]", stored)
    return f"""
    // Batched {_text(product.m)}x{_text(product.n)}x{_text(product.k)} products, a group of matrices per block: the group's A and B
    // are staged in shared memory (row pitch k+1 and n+1: no bank conflicts either way), each
    // thread computes {rows}x{cols} outputs (rows i0 + q * mr, columns j0 + p * nc: consecutive
    // threads on consecutive columns).
    {const} m_bg = {_text(product.m)}, n_bg = {_text(product.n)}, k_bg = {_text(product.k)};
    {const} rows_bg = {rows}, cols_bg = {cols};
    {const} mr_bg = (m_bg + rows_bg - 1) / rows_bg, nc_bg = (n_bg + cols_bg - 1) / cols_bg;
    {const} per_bg = m_bg * (k_bg + 1) + k_bg * (n_bg + 1);
    {const} fit_bg = {capacity} / per_bg;
    {const} want_bg = {"1" if one else f"({threads} * rows_bg * cols_bg{f' * {passes}' if passes > 1 else ''} + m_bg * n_bg - 1) / (m_bg * n_bg)"};
    {const} group_bg = fit_bg < want_bg ? fit_bg : want_bg;
{th.preamble}    const long long batch_bg = {th.grid if one else _text(product.batch)};
    __shared__ __align__(16) {t} tiles_bg[{"group_bg * per_bg > 0 ? group_bg * per_bg : 1" if fixed else capacity}];
    if (group_bg == 0) {{  // a matrix larger than the shared budget: straight from global memory
        for (long long o_bg = (long long){th.block} * {th.size} + {th.tid}; o_bg < batch_bg * m_bg * n_bg;
             o_bg += (long long){th.grid} * {th.size}) {{
            const long long {b_} = o_bg / (m_bg * n_bg);
            const int {i_} = (int)(o_bg / n_bg % m_bg), {j_} = (int)(o_bg % n_bg);
            {acc_t} sum_bg = 0;
            for (int kk_bg = 0; kk_bg < k_bg; kk_bg++)
                sum_bg += {widen}{a.array}[{_index(a, i_, "kk_bg")}] * {widen}{b.array}[{_index(b, j_, "kk_bg")}];
            {product.output}[{c_index}] = {direct_store};
        }}
        return;
    }}
    {t} *const as_bg = tiles_bg;
    {t} *const bs_bg = tiles_bg + group_bg * m_bg * (k_bg + 1);
    for (long long g_bg = (long long){th.block} * group_bg; g_bg < batch_bg; g_bg += (long long){th.grid} * group_bg) {{
        const int count_bg = (int)(batch_bg - g_bg < group_bg ? batch_bg - g_bg : group_bg);
{a_load}{b_load}        __syncthreads();
        for (int e_bg = {th.tid}; e_bg < count_bg * mr_bg * nc_bg; e_bg += {th.count}) {{
            const int l_bg = e_bg / (mr_bg * nc_bg), r_bg = e_bg % (mr_bg * nc_bg);
            const int i0_bg = r_bg / nc_bg, j0_bg = r_bg % nc_bg;
            const {t} *const arow_bg = as_bg + (l_bg * m_bg) * (k_bg + 1);
            const {t} *const bcol_bg = bs_bg + (l_bg * k_bg) * (n_bg + 1);
            {acc_t} acc_bg[rows_bg][cols_bg];
            int at_bg[rows_bg], bt_bg[cols_bg];
#pragma unroll
            for (int q_bg = 0; q_bg < rows_bg; q_bg++) {{
                const int row_bg = i0_bg + q_bg * mr_bg;
                at_bg[q_bg] = (row_bg < m_bg ? row_bg : m_bg - 1) * (k_bg + 1);  // past the last row: re-read it, never store it
#pragma unroll
                for (int p_bg = 0; p_bg < cols_bg; p_bg++)
                    acc_bg[q_bg][p_bg] = 0;
            }}
#pragma unroll
            for (int p_bg = 0; p_bg < cols_bg; p_bg++) {{
                const int col_bg = j0_bg + p_bg * nc_bg;
                bt_bg[p_bg] = col_bg < n_bg ? col_bg : n_bg - 1;
            }}
#pragma unroll 4
            for (int kk_bg = 0; kk_bg < k_bg; kk_bg++) {{
                {p_t} av_bg[rows_bg], bv_bg[cols_bg];
#pragma unroll
                for (int q_bg = 0; q_bg < rows_bg; q_bg++)
                    av_bg[q_bg] = arow_bg[at_bg[q_bg] + kk_bg];
#pragma unroll
                for (int p_bg = 0; p_bg < cols_bg; p_bg++)
                    bv_bg[p_bg] = bcol_bg[kk_bg * (n_bg + 1) + bt_bg[p_bg]];
#pragma unroll
                for (int q_bg = 0; q_bg < rows_bg; q_bg++)
#pragma unroll
                    for (int p_bg = 0; p_bg < cols_bg; p_bg++)
                        acc_bg[q_bg][p_bg] += av_bg[q_bg] * bv_bg[p_bg];
            }}
            const long long {b_} = g_bg + l_bg;  // 64-bit: batch offsets may pass 2^31
#pragma unroll
            for (int q_bg = 0; q_bg < rows_bg; q_bg++) {{
#pragma unroll
                for (int p_bg = 0; p_bg < cols_bg; p_bg++) {{
                    const int {i_} = i0_bg + q_bg * mr_bg, {j_} = j0_bg + p_bg * nc_bg;
                    if ({i_} < m_bg && {j_} < n_bg)
                        {product.output}[{c_index}] = {group_store};
                }}
            }}
        }}
        __syncthreads();  // the tiles are refilled for the next group
    }}
"""
