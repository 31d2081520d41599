"""R004/R005 only where their rewrite applies (issue 27, point 3): atomics are judged by what the
code does with them. A leader-only atomic of a warp-aggregated update (three spellings) is the
fix already; atomicExch/atomicCAS/atomicInc have no reduction; a used old value is a ticket
(R004 then advises a warp-aggregated increment, R005 stays silent: an arrival count is not a
histogram); `_block`-scoped atomics on global memory are already private to the block. Each
case has its near-miss that must still be reported."""

from __future__ import annotations

from regrapht.rules import analyze_text

HEAD = """#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ __forceinline__ unsigned lanemask_lt() { unsigned m; asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m)); return m; }
"""


def found(text: str, rule: str) -> list[tuple[str, int, str]]:
    """(severity, line within `text` after HEAD, message) of `rule`'s findings."""
    offset = HEAD.count("\n")
    return [(f.severity, f.span.start.line + 1 - offset, f.message) for f in analyze_text(HEAD + text)
            if f.rule == rule]


def test_warp_aggregated_increment_with_ffs_leader_is_silent() -> None:
    text = """__global__ void k(const int *in, int *out, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] > 0) {
    unsigned mask = __activemask();
    int leader = __ffs(mask) - 1;
    int lane = threadIdx.x & 31;
    int base;
    if (lane == leader) base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(mask, base, leader);
    out[base + __popc(mask & ((1u << lane) - 1))] = in[i];
  }
}"""
    assert found(text, "R004") == []


def test_warp_aggregated_increment_with_lanemask_rank_is_silent() -> None:
    text = """__global__ void k(const int *in, int *out, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned active = __activemask();
  unsigned rank = __popc(active & lanemask_lt());
  int warp_res;
  if (rank == 0) warp_res = atomicAdd(count, __popc(active));
  warp_res = __shfl_sync(active, warp_res, __ffs(active) - 1);
  if (i < n) out[warp_res + rank] = in[i];
}"""
    assert found(text, "R004") == []


def test_warp_aggregated_increment_with_coalesced_group_is_silent() -> None:
    text = """__global__ void k(const int *in, int *out, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] > 0) {
    cg::coalesced_group active = cg::coalesced_threads();
    int res;
    if (active.thread_rank() == 0) res = atomicAdd(count, active.size());
    res = active.shfl(res, 0);
    out[res + active.thread_rank()] = in[i];
  }
}"""
    assert found(text, "R004") == []


def test_near_miss_every_thread_takes_a_ticket_gets_the_aggregation_advice() -> None:
    text = """__global__ void k(const int *in, int *out, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] > 0) out[atomicAdd(count, 1)] = in[i];
}"""
    [(severity, line, message)] = found(text, "R004")
    assert (severity, line) == ("warning", 3)
    assert "warp-aggregated" in message and "uses the old value" in message


def test_near_miss_equality_on_data_is_no_leader() -> None:
    """`if (x[i] == 0)` selects by data, not one lane: every matching thread adds."""
    text = """__global__ void k(const int *x, int *zeros, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned m = __ballot_sync(0xffffffffu, i < n);
  if (i < n && x[i] == 0) atomicAdd(zeros, 1);
}"""
    assert [(s, line) for s, line, _ in found(text, "R004")] == [("warning", 4)]


def test_exchange_and_compare_and_swap_have_no_reduction() -> None:
    text = """__global__ void lock_demo(int *lock, float *sum, const float *x) {
  while (atomicCAS(lock, 0, 1) != 0) {}
  *sum += x[threadIdx.x];
  atomicExch(lock, 0);
}
__global__ void flag(int *f) { atomicExch(f, 1); }
__global__ void wrap(unsigned *c) { atomicInc(c, 1023u); }"""
    assert found(text, "R004") == []


def test_near_miss_sum_and_max_into_one_address_still_warn() -> None:
    text = """__global__ void total(const float *x, float *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(sum, x[i]);
}
__global__ void top(const int *x, int *m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicMax(m, x[i]);
}"""
    got = found(text, "R004")
    assert [(s, line) for s, line, _ in got] == [("warning", 3), ("warning", 7)]
    assert all("reduce within the warp" in message for _, _, message in got)


def test_value_already_reduced_across_the_warp_is_silent() -> None:
    text = """__global__ void k(const float *x, float *sum) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  atomicAdd(sum, __shfl_sync(0xffffffffu, v, 0) / 32.0f);
}"""
    assert found(text, "R004") == []


def test_block_scoped_atomics_on_a_block_private_global_histogram_are_silent() -> None:
    """LightGBM's fallback for histograms too large for shared memory: one global copy per block."""
    text = """__global__ void hist_global(const int *bins, const float *g, float *buffer, int nbins, int n) {
  float *mine = buffer + blockIdx.x * nbins;
  for (int i = threadIdx.x; i < nbins; i += blockDim.x) mine[i] = 0.0f;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd_block(mine + bins[i], g[i]);
}"""
    assert found(text, "R005") == []


def test_near_miss_device_wide_histogram_still_warns() -> None:
    text = """__global__ void hist(const int *bins, const float *g, float *hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[bins[i]], g[i]);
}"""
    assert [(s, line) for s, line, _ in found(text, "R005")] == [("warning", 3)]


def test_arrival_counter_whose_old_value_decides_is_no_histogram() -> None:
    """Warp's BVH refit: the second child to arrive refits the parent (`finished == 1`)."""
    text = """__global__ void refit(const int *parents, int *child_count, float *bounds, int n) {
  int index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index >= n) return;
  for (;;) {
    int parent = parents[index];
    if (parent == -1) return;
    __threadfence();
    int finished = atomicAdd(&child_count[parent], 1);
    if (finished == 1) { bounds[parent] += bounds[index]; index = parent; } else break;
  }
}"""
    assert found(text, "R005") == []

