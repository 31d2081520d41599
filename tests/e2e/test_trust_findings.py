"""End-to-end (issue 27): the real server over stdio publishes R013 by what the host code does
(a warning for an avoidable wait, a hint for a timed loop, nothing for a wait that runs once or
a per-iteration timer) and no R004 on a warp-aggregated increment."""

from __future__ import annotations

from lsp_harness import open_document, wait_for_publication
from lsprotocol import types

TEXT = """#include <chrono>
__global__ void step(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
__global__ void append(const int *in, int *out, int *count, int n) {
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
}
void run(float *d, int n, int iters) {
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
  }
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
  }
  auto t1 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    if (i == 0) cudaDeviceSynchronize();
  }
}
"""
URI = "file:///work/trust.cu"


async def test_host_waits_and_atomics_are_judged_by_what_the_code_does(client):
    open_document(client, URI, TEXT)
    published = await wait_for_publication(client, URI, version=1)
    r013 = sorted((d.range.start.line + 1, d.severity) for d in published.diagnostics if d.code == "R013")
    assert r013 == [(18, types.DiagnosticSeverity.Warning), (23, types.DiagnosticSeverity.Hint)]
    assert not [d for d in published.diagnostics if d.code == "R004"]
