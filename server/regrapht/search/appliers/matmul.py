"""Dense matrix products (and batched ones) -> shared-memory tiles with 2-D register blocking.

Recognised on the source model (`idioms/gemm.py`): a point kernel over (row, col[, batch])
whose work zeroes a float accumulator, adds `A(row, k) * B(k, col)` over `k < K`, and stores
an expression of it into C (`alpha * acc + beta * C[i]` too). Either operand may be stored
either way (`A[r * lda + k]` or `A[k * lda + r]`, `B[k * ldb + c]` or `B[c * ldb + k]`) and
may have a base offset (a batch's matrix).

The replacement computes a BM x BN tile of C per block, TM x TN outputs per thread, staging
BK-deep slabs of A (stored k-major, padded) and B in shared memory. Global loads are float4
along whichever direction the operand is contiguous when its leading dimension is a multiple
of 4 and its (batch's) base is 16-byte aligned, checked at run time; otherwise, and at the
edges, elements load one by one and out-of-range ones read as zero, so any M, N, K give the
same result up to float reassociation. The kernel's own store statement runs per output with
the coordinates re-bound and the accumulator replaced by the thread's register. A batch
coordinate is strided over grid z (one tile of one matrix per block: for small matrices, one
block per matrix).

The tilings form a parameter grid (`Rewrite.params`: tile_m, tile_n, tile_k, thread_m, thread_n,
double_buffer): the hand-picked ones for the product's size first, then the rest of the grid for
that size class in lexicographic order, each within the device's shared memory per block and at
most 256 threads (any register count up to 255 can then launch).
"""

from __future__ import annotations

from collections.abc import Callable

from regrapht.cuda.affine import Poly
from regrapht.cuda.extract import node_text
from regrapht.idioms.gemm import DenseProduct, Operand, dense_product
from regrapht.idioms.pointwise import fresh
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_edits
from regrapht.search.appliers.grid import grid_order
from regrapht.search.appliers.points import (
    bind,
    ceil_div,
    detiled_read_as_naive,
    prelude,
    recognised,
    template_pins,
)
from regrapht.spec.launch import LaunchConfig

# (BM, BN, BK, TM, TN, double-buffered). 128x128 with 8x8 per thread is the classic
# register-blocked SGEMM shape; 128x64 with 8x8 (128 threads) twice the blocks at the same
# register reuse (fewer idle SMs on mid-size matrices); 64x64 (4x4) four times the blocks;
# 32x32 (4x4, 64 threads) is one block per matrix for small batched products. Double-buffered
# tiles issue the next slab's global loads before this slab's FMAs.
Tiling = tuple[int, int, int, int, int, bool]
LARGE_DB: Tiling = (128, 128, 8, 8, 8, True)
LARGE: Tiling = (128, 128, 8, 8, 8, False)
TALL_DB: Tiling = (128, 64, 8, 8, 8, True)
MEDIUM_DB: Tiling = (64, 64, 16, 4, 4, True)
MEDIUM: Tiling = (64, 64, 16, 4, 4, False)
SMALL: Tiling = (32, 32, 16, 4, 4, False)
MAX_GRID_Z = 65535
SHARED_DEFAULT = 48 * 1024  # static shared memory a block may have without opting in
MAX_THREADS = 256  # 255 registers per thread still launch; the 8x8 blocking needs ~130
MIN_THREADS = 64  # two warps: fewer leave the SM's schedulers idle
# The searched grid per size class: block tile and outputs per thread (bm, bn, tm, tn), times
# K slabs and double buffering. Large products: the register-blocked shapes at two block sizes
# (wide and tall for M or N that 128 tiles leave ragged); batched ones of unknown size also the
# 32x32 tile a small matrix fills; matrices of at most 64 or 32 the tiles that do not idle most
# threads (2x2 and 4x2 per thread give a 32x32 tile 256 or 128 threads).
Shape = tuple[int, int, int, int]
LARGE_SHAPES: tuple[Shape, ...] = ((128, 128, 8, 8), (128, 64, 8, 8), (64, 128, 8, 8), (64, 64, 4, 4))
BATCHED_SHAPES: tuple[Shape, ...] = ((128, 128, 8, 8), (128, 64, 8, 8), (64, 64, 4, 4), (32, 32, 4, 4))
UP_TO_64_SHAPES: tuple[Shape, ...] = ((64, 64, 4, 4), (64, 32, 4, 4), (32, 64, 4, 4), (32, 32, 4, 4), (32, 32, 2, 2))
UP_TO_32_SHAPES: tuple[Shape, ...] = ((32, 32, 4, 4), (32, 32, 4, 2), (32, 32, 2, 4), (32, 32, 2, 2))
K_SLABS = (8, 16, 32)


class MatmulTiling:
    technique = "shared_memory_tiling"
    also: tuple[str, ...] = ("register_blocking",)

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = recognised(given, dense_product)
        pins = ""
        if found is None:
            # a product already staged through shared tiles: read as the dot product it computes
            naive = detiled_read_as_naive(given)
            found = recognised(naive, dense_product, pinned=True) if naive is not None else None
            if naive is not None and found is not None:
                given, pins = naive, template_pins(naive)  # read for this instance's tile
        if found is None:
            return []
        kernel, product = found
        first = _tilings(given, product)

        def rewrite(tiling: Tiling) -> Rewrite:
            body, grid, block = _tiled_body(product, tiling)
            body = pins + body
            bm, bn, bk, tm, tn, double = tiling
            # the hand-picked tilings keep their notes; the grid's other points name their K slab
            note = (f"{bm}x{bn} shared tiles, {tm}x{tn} outputs per thread" + ("" if tiling in first else
                    f", K slabs of {bk}") + (", double-buffered" if double else ""))
            params = (("tile_m", bm), ("tile_n", bn), ("tile_k", bk), ("thread_m", tm), ("thread_n", tn),
                      ("double_buffer", int(double)))
            return Rewrite(given.source, LaunchConfig(grid, block, given.launch.shared_bytes),
                           note, params, edits=body_edits(given, kernel, body))

        return grid_order(map(rewrite, first), [rewrite(t) for t in _grid(given, product) if t not in first])


def _tilings(given: ApplierInput, product: DenseProduct) -> list[Tiling]:
    """Most promising first: the sizes the spec fixes decide when known (a tile much larger than
    the matrix wastes threads; too few blocks leave SMs idle)."""
    view = product.kernel
    m = given.constants.get(view.bounds[product.row].upper)
    n = given.constants.get(view.bounds[product.col].upper)
    if m is not None and n is not None and max(m, n) <= 32:
        return [SMALL, MEDIUM]
    if m is not None and n is not None and max(m, n) <= 64:
        return [MEDIUM_DB, SMALL]
    if product.batch is not None:
        return [MEDIUM_DB, LARGE_DB, SMALL]
    return [LARGE_DB, MEDIUM_DB, LARGE, TALL_DB, MEDIUM]


def _grid(given: ApplierInput, product: DenseProduct) -> list[Tiling]:
    """The size class's grid, less the points whose tiles do not fit the device's shared memory
    per block or whose thread count is out of range."""
    view = product.kernel
    m = given.constants.get(view.bounds[product.row].upper)
    n = given.constants.get(view.bounds[product.col].upper)
    if m is not None and n is not None and max(m, n) <= 32:
        shapes = UP_TO_32_SHAPES
    elif m is not None and n is not None and max(m, n) <= 64:
        shapes = UP_TO_64_SHAPES
    elif product.batch is not None:
        shapes = BATCHED_SHAPES
    else:
        shapes = LARGE_SHAPES
    shared = given.device.shared_bytes_per_block if given.device else SHARED_DEFAULT
    threads = min(MAX_THREADS, given.device.max_threads_per_block if given.device else MAX_THREADS)
    points = [(bm, bn, bk, tm, tn, double) for bm, bn, tm, tn in shapes for bk in K_SLABS for double in (False, True)]
    return [t for t in points if _shared_bytes(t) <= shared and MIN_THREADS <= _threads(t) <= threads]


def _threads(tiling: Tiling) -> int:
    bm, bn, _, tm, tn, _ = tiling
    return (bm // tm) * (bn // tn)


def _shared_bytes(tiling: Tiling) -> int:
    """The A and B slabs (padded by 4 floats a row), once or twice."""
    bm, bn, bk, _, _, double = tiling
    return (2 if double else 1) * bk * (bm + 4 + bn + 4) * 4


def _address(operand: Operand, outer: str, inner: str) -> str:
    def term(stride: Poly, index: str) -> str:
        return f"(long long)({index})" if stride.constant == 1 else f"(long long)({index}) * ({stride.text()})"

    parts = [term(operand.outer, outer), term(operand.inner, inner)]
    if operand.base.terms:
        parts.insert(0, f"(long long)({operand.base.text()})")
    return " + ".join(parts)


def _leading(operand: Operand) -> str:
    """The stride that is not 1 (the leading dimension)."""
    return (operand.outer if operand.k_contiguous else operand.inner).text()


def _tiled_body(product: DenseProduct, tiling: Tiling) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    view = product.kernel
    bm, bn, bk, tm, tn, double = tiling
    ty_count, tx_count = bm // tm, bn // tn
    threads = ty_count * tx_count
    names = {key: fresh(view, key) for key in ("As", "Bs", "acc", "tid", "tile_row", "tile_col", "a_vec", "b_vec",
                                               "k0", "e", "r", "c", "gr", "gc", "q", "kk", "a_frag", "b_frag",
                                               "i", "j", "batch", "a_pre", "b_pre", "buf", "more")}
    n = names
    m_dim, n_dim, k_dim = view.bounds[product.row].upper, view.bounds[product.col].upper, product.k_bound
    a, b = product.a, product.b
    batch_open = batch_close = ""
    grid_z: tuple[str, ...] = ()
    if product.batch is not None:
        batch_type = view.coordinate(product.batch).type.replace("const ", "")  # type: ignore[union-attr]
        upper = view.bounds[product.batch].upper
        batch_open = (f"    for ({batch_type} {product.batch} = blockIdx.z; {product.batch} < {upper}; "
                      f"{product.batch} += gridDim.z) {{\n")
        batch_close = "    __syncthreads();  // the tiles are reused for the next matrix\n    }\n"
        grid_z = (f"min({upper}, {MAX_GRID_Z})",)
    a_base = f"{a.array} + ({a.base.text()})" if a.base.terms else a.array
    b_base = f"{b.array} + ({b.base.text()})" if b.base.terms else b.array

    def halves(operand: Operand, tile: str, rows: int, contiguous_first: bool, vec: str,
               registers: str) -> tuple[Callable[[str], str], Callable[[str], str], int]:
        """(fetch, put, count): `fetch(k_next)` reads one BK-deep slab at `k_next` into `registers`
        (float4s), `put(buf_next)` writes them into that buffer of `tile`. For A the tile is [k][m] of (m, k),
        for B [k][n] of (k, n). `contiguous_first`: contiguous along m/n (A[k * lda + m])."""
        is_a = tile == n["As"]
        mn_bound = m_dim if is_a else n_dim
        origin = n["tile_row"] if is_a else n["tile_col"]
        total = rows * bk // 4
        count = -(-total // threads)
        guard_open = f"if ({n['e']} < {total}) " if total % threads else ""

        def addr(mn: str, kk: str) -> str:
            return _address(operand, mn, kk)

        e, r, c, gr, gc, q = n["e"], n["r"], n["c"], n["gr"], n["gc"], n["q"]
        if contiguous_first:  # four consecutive m (n) for one k: a float4 straight into the tile row
            split = f"const int {c} = {e} / {rows // 4}, {r} = ({e} % {rows // 4}) * 4;"
            def load(k_next: str) -> str:
                return f"""{{
                const int {gr} = {origin} + {r}, {gc} = {k_next} + {c};
                float4 {q} = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if ({vec} && {gc} < {k_dim} && {gr} + 3 < {mn_bound}) {{
                    {q} = *reinterpret_cast<const float4 *>(&{operand.array}[{addr(gr, gc)}]);
                }} else if ({gc} < {k_dim}) {{
                    if ({gr} < {mn_bound}) {q}.x = {operand.array}[{addr(gr, gc)}];
                    if ({gr} + 1 < {mn_bound}) {q}.y = {operand.array}[{addr(gr + ' + 1', gc)}];
                    if ({gr} + 2 < {mn_bound}) {q}.z = {operand.array}[{addr(gr + ' + 2', gc)}];
                    if ({gr} + 3 < {mn_bound}) {q}.w = {operand.array}[{addr(gr + ' + 3', gc)}];
                }}
                {registers}[u_rg] = {q};
            }}"""
            def store(buf_next: str) -> str:
                return f"*reinterpret_cast<float4 *>(&{tile}[{buf_next}][{c}][{r}]) = {registers}[u_rg];"
        else:  # four consecutive k for one m (n): stored down a tile column
            split = f"const int {r} = {e} / {bk // 4}, {c} = ({e} % {bk // 4}) * 4;"
            def load(k_next: str) -> str:
                return f"""{{
                const int {gr} = {origin} + {r}, {gc} = {k_next} + {c};
                float4 {q} = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if ({vec} && {gr} < {mn_bound} && {gc} + 3 < {k_dim}) {{
                    {q} = *reinterpret_cast<const float4 *>(&{operand.array}[{addr(gr, gc)}]);
                }} else if ({gr} < {mn_bound}) {{
                    if ({gc} < {k_dim}) {q}.x = {operand.array}[{addr(gr, gc)}];
                    if ({gc} + 1 < {k_dim}) {q}.y = {operand.array}[{addr(gr, gc + ' + 1')}];
                    if ({gc} + 2 < {k_dim}) {q}.z = {operand.array}[{addr(gr, gc + ' + 2')}];
                    if ({gc} + 3 < {k_dim}) {q}.w = {operand.array}[{addr(gr, gc + ' + 3')}];
                }}
                {registers}[u_rg] = {q};
            }}"""
            def store(buf_next: str) -> str:
                return (f"{{ {tile}[{buf_next}][{c}][{r}] = {registers}[u_rg].x; {tile}[{buf_next}][{c} + 1][{r}] = "
                        f"{registers}[u_rg].y; {tile}[{buf_next}][{c} + 2][{r}] = {registers}[u_rg].z; "
                        f"{tile}[{buf_next}][{c} + 3][{r}] = {registers}[u_rg].w; }}")
        def loop(body: str) -> str:
            return f"""
#pragma unroll
        for (int u_rg = 0; u_rg < {count}; u_rg++) {{
            const int {e} = {n['tid']} + u_rg * {threads};
            {split}
            {guard_open}{body}
        }}"""

        return (lambda k_next: loop(load(k_next))), (lambda buf_next: loop(store(buf_next))), count

    a_fetch, a_put, a_count = halves(a, n["As"], bm, not a.k_contiguous, n["a_vec"], n["a_pre"])
    b_fetch, b_put, b_count = halves(b, n["Bs"], bn, not b.k_contiguous, n["b_vec"], n["b_pre"])
    # A thread's outputs are groups of `vm` (`vn`) consecutive rows (columns) a block's rows of
    # threads apart: one float4 (float2 for 2 per thread) shared read per group, conflict-free.
    vm, vn = (4 if tm % 4 == 0 else 2), (4 if tn % 4 == 0 else 2)
    a_groups = "\n".join(
        f"            *reinterpret_cast<float{vm} *>(&{n['a_frag']}[{vm * g}]) = *reinterpret_cast<const float{vm} *>"
        f"(&{n['As']}[{n['buf']}][{n['kk']}][threadIdx.y * {vm} + {vm * g * ty_count}]);"
        for g in range(tm // vm))
    b_groups = "\n".join(
        f"            *reinterpret_cast<float{vn} *>(&{n['b_frag']}[{vn * g}]) = *reinterpret_cast<const float{vn} *>"
        f"(&{n['Bs']}[{n['buf']}][{n['kk']}][threadIdx.x * {vn} + {vn * g * tx_count}]);"
        for g in range(tn // vn))
    store = _store_with(product, f"{n['acc']}[{n['i']}][{n['j']}]")

    def step(fetch: Callable[[str], str], put: Callable[[str], str], k_next: str, buf_next: str) -> str:
        return fetch(f"({k_next})") + put(buf_next)

    compute = f"""
#pragma unroll
        for (int {n['kk']} = 0; {n['kk']} < {bk}; {n['kk']}++) {{
            float {n['a_frag']}[{tm}], {n['b_frag']}[{tn}];
{a_groups}
{b_groups}
#pragma unroll
            for (int {n['i']} = 0; {n['i']} < {tm}; {n['i']}++)
#pragma unroll
                for (int {n['j']} = 0; {n['j']} < {tn}; {n['j']}++)
                    {n['acc']}[{n['i']}][{n['j']}] += {n['a_frag']}[{n['i']}] * {n['b_frag']}[{n['j']}];
        }}"""
    if double:
        # Double buffer: the next slab's global loads are issued into registers before this
        # slab's FMAs and written to the other buffer after them, one barrier per slab.
        main_loop = f"""{step(a_fetch, a_put, "0", "0")}{step(b_fetch, b_put, "0", "0")}
    __syncthreads();
    int {n['buf']} = 0;
    for (int {n['k0']} = 0; {n['k0']} < {k_dim}; {n['k0']} += {bk}) {{
        const bool {n['more']} = {n['k0']} + {bk} < {k_dim};
        if ({n['more']}) {{{a_fetch(f"({n['k0']} + {bk})")}{b_fetch(f"({n['k0']} + {bk})")}
        }}{compute}
        if ({n['more']}) {{{a_put(f"{n['buf']} ^ 1")}{b_put(f"{n['buf']} ^ 1")}
        }}
        __syncthreads();
        {n['buf']} ^= 1;
    }}"""
    else:
        main_loop = f"""
    const int {n['buf']} = 0;
    for (int {n['k0']} = 0; {n['k0']} < {k_dim}; {n['k0']} += {bk}) {{{step(a_fetch, a_put, n['k0'], "0")}{step(b_fetch, b_put, n['k0'], "0")}
        __syncthreads();{compute}
        __syncthreads();
    }}"""
    buffers = 2 if double else 1
    body = f"""
    // {bm}x{bn} tile of {product.output} per block, {tm}x{tn} per thread; K in slabs of {bk}{", double-buffered" if double else ""}.
    // A's slab is stored k-major and padded by 4 (float4 fragment reads stay aligned); global
    // loads are float4 along the contiguous direction when the leading dimension is a multiple
    // of 4 and the base is 16-byte aligned, else element by element; out-of-range ones read 0.
    __shared__ __align__(16) float {n['As']}[{buffers}][{bk}][{bm} + 4];
    __shared__ __align__(16) float {n['Bs']}[{buffers}][{bk}][{bn} + 4];
    const int {n['tid']} = threadIdx.y * {tx_count} + threadIdx.x;
    const int {n['tile_row']} = blockIdx.y * {bm};
    const int {n['tile_col']} = blockIdx.x * {bn};
{batch_open}    const bool {n['a_vec']} = (({_leading(a)}) & 3) == 0 && (reinterpret_cast<unsigned long long>({a_base}) & 15) == 0;
    const bool {n['b_vec']} = (({_leading(b)}) & 3) == 0 && (reinterpret_cast<unsigned long long>({b_base}) & 15) == 0;
    float {n['acc']}[{tm}][{tn}];
    float4 {n['a_pre']}[{a_count}], {n['b_pre']}[{b_count}];
#pragma unroll
    for (int {n['i']} = 0; {n['i']} < {tm}; {n['i']}++)
#pragma unroll
        for (int {n['j']} = 0; {n['j']} < {tn}; {n['j']}++)
            {n['acc']}[{n['i']}][{n['j']}] = 0.0f;{main_loop}
#pragma unroll
    for (int {n['i']} = 0; {n['i']} < {tm}; {n['i']}++) {{
#pragma unroll
        for (int {n['j']} = 0; {n['j']} < {tn}; {n['j']}++) {{
            {bind(view, {product.row: _output(n['tile_row'], "y", n['i'], vm, ty_count),
                         product.col: _output(n['tile_col'], "x", n['j'], vn, tx_count)})} {prelude(view)}
            if ({product.row} < {m_dim} && {product.col} < {n_dim}) {{
                {store}
            }}
        }}
    }}
{batch_close}"""
    grid = (ceil_div(n_dim, bn), ceil_div(m_dim, bm), *grid_z)
    return body, grid, (str(tx_count), str(ty_count))


def _output(origin: str, axis: str, index: str, width: int, threads: int) -> str:
    """The row (column) of a thread's `index`-th output: groups of `width` consecutive ones,
    `threads` (the block's threads along the axis) groups apart."""
    shift = width.bit_length() - 1
    return f"{origin} + threadIdx.{axis} * {width} + ({index} & {width - 1}) + ({index} >> {shift}) * {width * threads}"


def _store_with(product: DenseProduct, register: str) -> str:
    """The kernel's store statement with its accumulator replaced by `register`."""
    node = product.kernel.work_nodes[2]
    start = node.start_byte
    text = node.text or b""
    pieces = []
    cursor = 0
    stack = [node]
    spans = []
    while stack:
        current = stack.pop()
        if current.type == "identifier" and node_text(current) == product.acc:
            spans.append((current.start_byte - start, current.end_byte - start))
        stack.extend(current.children)
    for begin, end in sorted(spans):
        pieces.append(text[cursor:begin].decode())
        pieces.append(register)
        cursor = end
    pieces.append(text[cursor:].decode())
    return "".join(pieces)
