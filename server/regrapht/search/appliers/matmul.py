"""Naive matrix multiply -> shared-memory tiling with register blocking.

Matches the textbook kernel: one thread per output, `row`/`col` from the 2-D global id, a guard
`row < M && col < N`, an inner product `sum += A[row * K + k] * B[k * N + col]` over k, and one
store of an expression of `sum` into `C[row * N + col]` (so `alpha * sum + beta * C[...]` works
too). The replacement computes a BM x BN tile of C per block, TM x TN outputs per thread, staging
BK-wide slabs of A (transposed, padded) and B in shared memory; out-of-range elements load as
zero and stores are guarded, so any M, N, K give the same result up to float reassociation.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import ApplierInput, Rewrite, located, norm, pointer_params
from regrapht.validate.types import LaunchConfig

# (BM, BN, BK, TM, TN): the 128x128 tile with 8x8 per thread is the classic register-blocked
# SGEMM shape; the 64x64 one uses less shared memory and suits small matrices.
TILINGS = ((128, 128, 8, 8, 8), (64, 64, 16, 4, 4))

_ROW = r"(?:blockIdx\.y \* blockDim\.y \+ threadIdx\.y|threadIdx\.y \+ blockIdx\.y \* blockDim\.y|blockDim\.y \* blockIdx\.y \+ threadIdx\.y)"
_COL = r"(?:blockIdx\.x \* blockDim\.x \+ threadIdx\.x|threadIdx\.x \+ blockIdx\.x \* blockDim\.x|blockDim\.x \* blockIdx\.x \+ threadIdx\.x)"
_ID = r"[A-Za-z_]\w*"


class MatmulTiling:
    technique = "shared_memory_tiling"
    also: tuple[str, ...] = ("register_blocking",)

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = located(given)
        if found is None:
            return []
        kernel, body = found
        text = norm(body)
        m = re.fullmatch(
            rf"(?:const )?int ({_ID}) = \(?({_ROW}|{_COL})\)?; (?:const )?int ({_ID}) = \(?({_ROW}|{_COL})\)?; "
            rf"if \( ?(.+?) ?\) \{{ (.*) \}}",
            text,
        )
        if m is None:
            return []
        first, first_expr, second, _, guard, inner = m.groups()
        row, col = (first, second) if "blockIdx.y" in first_expr else (second, first)
        if "blockIdx.y" in first_expr and "blockIdx.y" in m.group(4):
            return []
        bounds = {}
        for cond in guard.split(" && "):
            cm = re.fullmatch(rf"\(?({_ID}) < ({_ID})\)?", cond.strip())
            if cm is None:
                return []
            bounds[cm.group(1)] = cm.group(2)
        if set(bounds) != {row, col}:
            return []
        m_dim, n_dim = bounds[row], bounds[col]
        im = re.fullmatch(
            rf"float ({_ID}) = 0(?:\.0?f?|\.0|f)?; for \( ?int ({_ID}) = 0; \2 < ({_ID}); (?:\2\+\+|\+\+\2|\2 \+= 1) ?\) "
            rf"\{{? ?\1 \+= ({_ID})\[ ?(.+?) ?\] \* ({_ID})\[ ?(.+?) ?\]; ?\}}? (.+;)",
            inner,
        )
        if im is None:
            return []
        acc, k, k_dim, a, a_idx, b, b_idx, store = im.groups()
        if a_idx.replace(" ", "") != f"{row}*{k_dim}+{k}" or b_idx.replace(" ", "") != f"{k}*{n_dim}+{col}":
            return []
        sm = re.fullmatch(rf"({_ID})\[ ?(.+?) ?\] = (.+);", store)
        if sm is None or sm.group(2).replace(" ", "") != f"{row}*{n_dim}+{col}" or ";" in sm.group(3):
            return []
        pointers = pointer_params(kernel)
        if any(pointers.get(p) != "float" for p in (a, b, sm.group(1))):
            return []
        names = {p.name for p in kernel.params}
        if names & {"As", "Bs", "acc_", "a_frag", "b_frag", "tile_row", "tile_col", "tid", "k0"}:
            return []
        rewrites = []
        for tiling in TILINGS:
            new_body = _tiled_body(tiling, row, col, acc, a, b, m_dim, n_dim, k_dim, store)
            source = given.source[: kernel.body_start] + new_body + given.source[kernel.body_end :]
            bm, bn, _, tm, tn = tiling
            launch = LaunchConfig(
                (f"({n_dim} + {bn - 1}) / {bn}", f"({m_dim} + {bm - 1}) / {bm}"),
                (str(bn // tn), str(bm // tm)), given.launch.shared_bytes,
            )
            rewrites.append(Rewrite(source, launch, f"{bm}x{bn} shared tiles, {tm}x{tn} outputs per thread"))
        return rewrites


def _tiled_body(tiling: tuple[int, int, int, int, int], row: str, col: str, acc: str, a: str, b: str,
                m_dim: str, n_dim: str, k_dim: str, store: str) -> str:
    bm, bn, bk, tm, tn = tiling
    ty_count, tx_count = bm // tm, bn // tn
    threads = ty_count * tx_count
    store_code = re.sub(rf"\b{acc}\b", "acc_[i][j]", store)
    store_code = re.sub(rf"\b{row}\b", row, store_code)
    return f"""
    // {bm}x{bn} tile of the result per block, {tm}x{tn} per thread; K in slabs of {bk}.
    // A's slab is stored transposed (As[k][m]) and padded so the stores spread over banks.
    __shared__ float As[{bk}][{bm} + 4];
    __shared__ float Bs[{bk}][{bn}];
    const int tid = threadIdx.y * {tx_count} + threadIdx.x;
    const int tile_row = blockIdx.y * {bm};
    const int tile_col = blockIdx.x * {bn};
    float acc_[{tm}][{tn}];
#pragma unroll
    for (int i = 0; i < {tm}; i++)
#pragma unroll
        for (int j = 0; j < {tn}; j++)
            acc_[i][j] = 0.0f;
    for (int k0 = 0; k0 < {k_dim}; k0 += {bk}) {{
        for (int e = tid; e < {bm * bk}; e += {threads}) {{
            int r = tile_row + e / {bk}, c = k0 + e % {bk};
            As[e % {bk}][e / {bk}] = (r < {m_dim} && c < {k_dim}) ? {a}[(long long)r * {k_dim} + c] : 0.0f;
        }}
        for (int e = tid; e < {bk * bn}; e += {threads}) {{
            int r = k0 + e / {bn}, c = tile_col + e % {bn};
            Bs[e / {bn}][e % {bn}] = (r < {k_dim} && c < {n_dim}) ? {b}[(long long)r * {n_dim} + c] : 0.0f;
        }}
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < {bk}; kk++) {{
            float a_frag[{tm}], b_frag[{tn}];
#pragma unroll
            for (int i = 0; i < {tm}; i++)
                a_frag[i] = As[kk][threadIdx.y + i * {ty_count}];
#pragma unroll
            for (int j = 0; j < {tn}; j++)
                b_frag[j] = Bs[kk][threadIdx.x + j * {tx_count}];
#pragma unroll
            for (int i = 0; i < {tm}; i++)
#pragma unroll
                for (int j = 0; j < {tn}; j++)
                    acc_[i][j] += a_frag[i] * b_frag[j];
        }}
        __syncthreads();
    }}
#pragma unroll
    for (int i = 0; i < {tm}; i++) {{
#pragma unroll
        for (int j = 0; j < {tn}; j++) {{
            int {row} = tile_row + threadIdx.y + i * {ty_count};
            int {col} = tile_col + threadIdx.x + j * {tx_count};
            if ({row} < {m_dim} && {col} < {n_dim}) {{
                {store_code}
            }}
        }}
    }}
"""
