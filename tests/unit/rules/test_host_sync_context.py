"""R013 that understands host code (issue 27, point 1): a warning only when the wait is proven
avoidable; timing harnesses, host reads of the synchronised data, code that runs once per loop
and deliberate sync/async pairs are silent or a hint. Three spellings per case and the near-misses
that must still warn."""

from __future__ import annotations

import pytest

from regrapht.rules import analyze_text

HEAD = """__global__ void step(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
"""


def r013(body: str) -> list[tuple[str, int]]:
    """(severity, line within `body`) of R013 findings of `void run(...) { body }`."""
    text = HEAD + "void run(float *d, float *h, float *d_err, int n, int iters, cudaStream_t s) {\n" + body + "\n}\n"
    offset = HEAD.count("\n") + 1
    return [(f.severity, f.span.start.line + 1 - offset) for f in analyze_text(text) if f.rule == "R013"]


TIMED_INSIDE = {
    "cuda events": """  cudaEvent_t a, b; float ms;
  for (int i = 0; i < iters; ++i) {
    cudaEventRecord(a, s);
    step<<<n / 256, 256, 0, s>>>(d, n);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b);
  }""",
    "sdk timer": """  StopWatchInterface *timer = 0;
  for (int i = 0; i < iters; ++i) {
    sdkStartTimer(&timer);
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
    sdkStopTimer(&timer);
  }""",
    "chrono": """  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::high_resolution_clock::now();
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
    auto t1 = std::chrono::high_resolution_clock::now();
  }""",
}


@pytest.mark.parametrize("spelling", sorted(TIMED_INSIDE))
def test_timers_inside_the_loop_need_the_wait(spelling: str) -> None:
    assert r013(TIMED_INSIDE[spelling]) == []


TIMED_AROUND = {
    "cuda events": """  cudaEvent_t a, b;
  cudaEventRecord(a, 0);
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
  }
  cudaEventRecord(b, 0);""",
    "chrono": """  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    cudaStreamSynchronize(s);
  }
  auto t1 = std::chrono::steady_clock::now();""",
    "timer object": """  Timer timer;
  timer.start();
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
  }
  timer.stop();""",
}


@pytest.mark.parametrize("spelling", sorted(TIMED_AROUND))
def test_a_timed_loop_gets_a_hint_at_most(spelling: str) -> None:
    found = r013(TIMED_AROUND[spelling])
    assert len(found) == 1 and found[0][0] == "hint"


HOST_READS = {
    "read back and break in one block": """  float h_err = 0.0f;
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    {
      cudaMemcpy(&h_err, d_err, sizeof(float), cudaMemcpyDeviceToHost);
      if (h_err < 1e-6f) break;
    }
  }""",
    "convergence": """  float h_err = 1.0f;
  while (h_err > 1e-6f) {
    step<<<n / 256, 256>>>(d, n);
    cudaMemcpy(&h_err, d_err, sizeof(float), cudaMemcpyDeviceToHost);
  }""",
    "managed flag": """  int *flag; cudaMallocManaged(&flag, sizeof(int));
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
    if (flag[0]) printf("done at %d\\n", i);
  }""",
    "user function on the copy": """  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    checkCudaErrors(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    write_frame(h, n, i);
  }""",
    "verification": """  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int j = 0; j < n; ++j) assert(h[j] >= 0.0f);
  }""",
}


@pytest.mark.parametrize("spelling", sorted(HOST_READS))
def test_host_reads_of_the_synchronised_data_get_a_hint(spelling: str) -> None:
    found = r013(HOST_READS[spelling])
    assert len(found) == 1 and found[0][0] == "hint"


ONCE = {
    "first iteration": """  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    if (i == 0) cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  }""",
    "break after": """  bool converged = false;
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    if (converged) { cudaDeviceSynchronize(); break; }
  }""",
    "every hundredth iteration, then break": """  float h_err = 0.0f;
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    if (i % 100 == 99) {
      cudaMemcpy(&h_err, d_err, sizeof(float), cudaMemcpyDeviceToHost);
      if (h_err < 1e-6f) break;
    }
  }""",
    "return after": """  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
    return;
  }""",
}


@pytest.mark.parametrize("spelling", sorted(ONCE))
def test_code_that_runs_once_or_every_kth_iteration_is_silent(spelling: str) -> None:
    assert r013(ONCE[spelling]) == []


PAIRED = {
    "if else": """  bool use_async = iters > 1;
  for (int i = 0; i < iters; ++i) {
    if (use_async) cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, s);
    else cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  }""",
    "braces": """  bool pinned = iters > 1;
  for (int i = 0; i < iters; ++i) {
    if (!pinned) {
      cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
    } else {
      cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s);
    }
  }""",
    "else if": """  for (int i = 0; i < iters; ++i) {
    if (n > 1024) {
      cudaMemcpy2DAsync(d, 4, h, 4, 4, n, cudaMemcpyHostToDevice, s);
    } else if (n > 0) {
      cudaMemcpy2D(d, 4, h, 4, 4, n, cudaMemcpyHostToDevice);
    }
  }""",
}


@pytest.mark.parametrize("spelling", sorted(PAIRED))
def test_deliberate_sync_and_async_variants_are_silent(spelling: str) -> None:
    assert r013(PAIRED[spelling]) == []


DRAIN = {
    "streams": """  cudaStream_t streams[4];
  for (int i = 0; i < 4; ++i) cudaStreamSynchronize(streams[i]);""",
    "events, checked": """  cudaEvent_t done[8];
  for (int i = 0; i < 8; ++i) {
    checkCudaErrors(cudaEventSynchronize(done[i]));
  }""",
    "while over a count": """  cudaStream_t streams[4]; int k = 0;
  while (k < 4) { cudaStreamSynchronize(streams[k]); ++k; }""",
}


@pytest.mark.parametrize("spelling", sorted(DRAIN))
def test_a_loop_that_only_waits_is_the_one_wait(spelling: str) -> None:
    assert r013(DRAIN[spelling]) == []


def test_a_synchronous_baseline_beside_its_asynchronous_loop_is_a_hint() -> None:
    """The CUDA samples' stream demos: one loop with blocking copies, one with the async variant."""
    found = r013("""  for (int i = 0; i < iters; ++i) {
    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  }
  for (int i = 0; i < iters; ++i) {
    cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, s);
  }
  cudaStreamSynchronize(s);""")
    assert found == [("hint", 2)]


AVOIDABLE = {
    "launch then wait per stream": """  cudaStream_t streams[4];
  for (int i = 0; i < 4; ++i) {
    step<<<n / 256, 256, 0, streams[i]>>>(d + i * n, n);
    cudaStreamSynchronize(streams[i]);
  }""",
    "sync after every launch": """  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
  }""",
    "unread read-back": """  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256, 0, s>>>(d, n);
    cudaMemcpy(h + (size_t)i * n, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  }""",
    "stream sync, checked": """  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256, 0, s>>>(d, n);
    checkCudaErrors(cudaStreamSynchronize(s));
  }""",
    "timer only before the loop": """  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
  }""",
    "every iteration but the first": """  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(d, n);
    if (i > 0) cudaDeviceSynchronize();
  }""",
    "ping-pong buffers": """  float *a = d, *b = d_err;
  for (int i = 0; i < iters; ++i) {
    step<<<n / 256, 256>>>(a, n);
    cudaDeviceSynchronize();
    std::swap(a, b);
  }""",
    "do while": """  int i = 0;
  do {
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
  } while (++i < iters);""",
    "break in another branch": """  for (int i = 0; i < iters; ++i) {
    if (i > n) break;
    step<<<n / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
  }""",
}


@pytest.mark.parametrize("spelling", sorted(AVOIDABLE))
def test_near_misses_an_avoidable_wait_still_warns(spelling: str) -> None:
    found = r013(AVOIDABLE[spelling])
    assert [severity for severity, _ in found] == ["warning"], found
