"""idioms.block_sim: a block's combine step run in lock step on stand-in chunk totals."""

from __future__ import annotations

from regrapht.idioms.block_sim import prefix_of_totals
from regrapht.idioms.syntax import kernel_syntax, named_statements


def _combines(combine: str, threads: int = 64, shared: str = "__shared__ int part[64];") -> bool:
    source = f"""__global__ void k(int n) {{
    {shared}
    int tid = threadIdx.x;
    int s = 0;
    part[tid] = s;
    {combine}
}}"""
    kernel = kernel_syntax(source, "k")
    assert kernel is not None
    statements = named_statements(kernel.body)
    store = statements[3].named_children[0].child_by_field_name("left")
    stored_at = store.child_by_field_name("indices").named_children[0]
    sizes = {"part": 64, "offs": 65}
    return prefix_of_totals(statements[1:3], "s", "part", stored_at, statements[4:], "run", threads, {}, sizes)


def test_the_usual_combines_give_the_sum_of_the_totals_before_each_thread() -> None:
    assert _combines("int run = 0; for (int k = 0; k < tid; ++k) run += part[k];")
    assert _combines("__shared__ int offs[65]; if (tid == 0) { offs[0] = 0; "
                     "for (int k = 0; k < blockDim.x; k++) offs[k + 1] = offs[k] + part[k]; } "
                     "__syncthreads(); int run = offs[tid];")
    assert _combines("for (int d = 1; d < blockDim.x; d <<= 1) { int v = tid >= d ? part[tid - d] : 0; "
                     "__syncthreads(); part[tid] += v; __syncthreads(); } int run = part[tid] - s;")


def test_wrong_or_racy_combines_are_refused() -> None:
    assert not _combines("int run = 0; for (int k = 0; k <= tid; ++k) run += part[k];")  # includes its own
    # a serial chain within one phase: right in thread order, a race on the GPU
    assert not _combines("if (tid > 0) part[tid] += part[tid - 1]; __syncthreads(); int run = part[tid] - s;")
    # threads that skip a barrier the others wait at
    assert not _combines("if (tid == 0) { __syncthreads(); } int run = 0;")
    assert not _combines("int run = 0; for (int k = 0; k < tid; ++k) run += part[k + 1];")  # out of bounds too
