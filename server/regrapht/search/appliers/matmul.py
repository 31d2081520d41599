"""Naive matrix multiply -> shared-memory tiling with register blocking.

Matches the textbook kernel: one thread per output, `row`/`col` from the 2-D global id, a guard
`row < M && col < N`, an inner product `sum += A[row * K + k] * B[k * N + col]` over k, and one
store of an expression of `sum` into `C[row * N + col]` (so `alpha * sum + beta * C[...]` works
too). The replacement computes a BM x BN tile of C per block, TM x TN outputs per thread, staging
BK-wide slabs of A (transposed, padded) and B in shared memory with float4 loads where aligned;
out-of-range elements load as zero and stores are guarded, so any M, N, K give the same result up to float reassociation.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import (
    ApplierInput,
    KernelApplier,
    Rewrite,
    norm,
    pointer_params,
    with_body,
)
from regrapht.search.source import KernelText
from regrapht.spec.launch import LaunchConfig

# (BM, BN, BK, TM, TN), 256 threads each: the 128x128 tile with 8x8 per thread is the classic
# register-blocked SGEMM shape (2048^2 gives 256 blocks, about two per SM of an H200); 128x64
# doubles the block count and 64x64 (4x4 per thread) quadruples it for smaller matrices (1024^2
# gives 64 blocks of 128x128 but 256 of 64x64), so the measurement picks per size.
TILINGS = ((128, 128, 8, 8, 8), (64, 64, 16, 4, 4), (128, 64, 8, 8, 4))

_ROW = r"(?:blockIdx\.y \* blockDim\.y \+ threadIdx\.y|threadIdx\.y \+ blockIdx\.y \* blockDim\.y|blockDim\.y \* blockIdx\.y \+ threadIdx\.y)"
_COL = r"(?:blockIdx\.x \* blockDim\.x \+ threadIdx\.x|threadIdx\.x \+ blockIdx\.x \* blockDim\.x|blockDim\.x \* blockIdx\.x \+ threadIdx\.x)"
_ID = r"[A-Za-z_]\w*"


class MatmulTiling(KernelApplier):
    technique = "shared_memory_tiling"
    also: tuple[str, ...] = ("register_blocking",)

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
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
        if names & {"As", "Bs", "acc_", "a_frag", "b_frag", "tile_row", "tile_col", "tid", "k0",
                     "a_vec", "b_vec", "q", "e", "r", "c", "gr", "gc", "i", "j", "kk"}:
            return []
        rewrites = []
        for tiling in TILINGS:
            new_body = _tiled_body(tiling, row, col, acc, a, b, m_dim, n_dim, k_dim, store)
            source = with_body(given, kernel, new_body)
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
    # A thread's outputs are groups of 4 consecutive rows (columns) spaced by 4 * ty_count
    # (4 * tx_count), so its fragments are float4 reads from shared memory and a warp's reads
    # of one group cover a contiguous span (no bank conflicts beyond the broadcast).
    a_groups = "\n".join(
        f"            *reinterpret_cast<float4 *>(&a_frag[{4 * g}]) = *reinterpret_cast<const float4 *>(&As[kk][threadIdx.y * 4 + {4 * g * ty_count}]);"
        for g in range(tm // 4))
    b_groups = "\n".join(
        f"            *reinterpret_cast<float4 *>(&b_frag[{4 * g}]) = *reinterpret_cast<const float4 *>(&Bs[kk][threadIdx.x * 4 + {4 * g * tx_count}]);"
        for g in range(tn // 4))
    return f"""
    // {bm}x{bn} tile of the result per block, {tm}x{tn} per thread; K in slabs of {bk}.
    // A's slab is stored transposed (As[k][m]) and padded by 4 (keeps float4 alignment, spreads
    // the transposing stores over the banks). Global loads are float4 when the rows are 16-byte
    // aligned (K, N multiples of 4 and aligned bases); otherwise, and at the edges, each element
    // is loaded on its own and out-of-range ones read as zero, so any M, N, K are exact.
    __shared__ __align__(16) float As[{bk}][{bm} + 4];
    __shared__ __align__(16) float Bs[{bk}][{bn}];
    const int tid = threadIdx.y * {tx_count} + threadIdx.x;
    const int tile_row = blockIdx.y * {bm};
    const int tile_col = blockIdx.x * {bn};
    const bool a_vec = (({k_dim}) & 3) == 0 && (reinterpret_cast<unsigned long long>({a}) & 15) == 0;
    const bool b_vec = (({n_dim}) & 3) == 0 && (reinterpret_cast<unsigned long long>({b}) & 15) == 0;
    float acc_[{tm}][{tn}];
#pragma unroll
    for (int i = 0; i < {tm}; i++)
#pragma unroll
        for (int j = 0; j < {tn}; j++)
            acc_[i][j] = 0.0f;
    for (int k0 = 0; k0 < {k_dim}; k0 += {bk}) {{
#pragma unroll
        for (int e = tid; e < {bm * bk // 4}; e += {threads}) {{
            const int r = e / {bk // 4}, c = (e % {bk // 4}) * 4;
            const int gr = tile_row + r, gc = k0 + c;
            float4 q = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (a_vec && gr < {m_dim} && gc + 3 < {k_dim}) {{
                q = *reinterpret_cast<const float4 *>(&{a}[(long long)gr * {k_dim} + gc]);
            }} else if (gr < {m_dim}) {{
                if (gc < {k_dim}) q.x = {a}[(long long)gr * {k_dim} + gc];
                if (gc + 1 < {k_dim}) q.y = {a}[(long long)gr * {k_dim} + gc + 1];
                if (gc + 2 < {k_dim}) q.z = {a}[(long long)gr * {k_dim} + gc + 2];
                if (gc + 3 < {k_dim}) q.w = {a}[(long long)gr * {k_dim} + gc + 3];
            }}
            As[c][r] = q.x;
            As[c + 1][r] = q.y;
            As[c + 2][r] = q.z;
            As[c + 3][r] = q.w;
        }}
#pragma unroll
        for (int e = tid; e < {bk * bn // 4}; e += {threads}) {{
            const int r = e / {bn // 4}, c = (e % {bn // 4}) * 4;
            const int gr = k0 + r, gc = tile_col + c;
            float4 q = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (b_vec && gr < {k_dim} && gc + 3 < {n_dim}) {{
                q = *reinterpret_cast<const float4 *>(&{b}[(long long)gr * {n_dim} + gc]);
            }} else if (gr < {k_dim}) {{
                if (gc < {n_dim}) q.x = {b}[(long long)gr * {n_dim} + gc];
                if (gc + 1 < {n_dim}) q.y = {b}[(long long)gr * {n_dim} + gc + 1];
                if (gc + 2 < {n_dim}) q.z = {b}[(long long)gr * {n_dim} + gc + 2];
                if (gc + 3 < {n_dim}) q.w = {b}[(long long)gr * {n_dim} + gc + 3];
            }}
            *reinterpret_cast<float4 *>(&Bs[r][c]) = q;
        }}
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < {bk}; kk++) {{
            float a_frag[{tm}], b_frag[{tn}];
{a_groups}
{b_groups}
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
            int {row} = tile_row + threadIdx.y * 4 + (i & 3) + (i >> 2) * {4 * ty_count};
            int {col} = tile_col + threadIdx.x * 4 + (j & 3) + (j >> 2) * {4 * tx_count};
            if ({row} < {m_dim} && {col} < {n_dim}) {{
                {store_code}
            }}
        }}
    }}
"""
