"""idioms/kept_loops.py: a loop around a kernel's whole work becomes a scalar parameter of a
derived kernel (one iteration), and goes back around a rewrite of it only when every thread runs
each rewritten iteration to its end."""

from __future__ import annotations

from regrapht.idioms.kept_loops import loop_around, loop_as_scalar
from regrapht.idioms.syntax import kernel_syntax

BATCHED = """#define AT(n, y, x) (((n) * H + (y)) * W + (x))
__global__ void blur_batch(const float *in, float *out, int N, int H, int W)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int last = W - 1;
    if (x < 1 || x >= last || y >= H) return;
    for (long n = 0; n <= N - 1; ++n) {
        out[AT(n, y, x)] = (in[AT(n, y, x - 1)] + in[AT(n, y, x)] + in[AT(n, y, x + 1)]) / 3.0f;
    }
}
"""


GUARD = "if (x < 1 || x >= last || y >= H) return;"


def _without_returns(derived: str) -> str:
    """A stand-in for a rewrite of the derived kernel: its guard around the work, no return."""
    head, work = derived.split(GUARD)
    return head + "if (!(x < 1 || x >= last || y >= H)) {" + work.rstrip().removesuffix("}") + "}\n}\n"


def test_the_loop_becomes_a_parameter_of_a_derived_kernel_and_comes_back_as_written() -> None:
    kept = loop_as_scalar(BATCHED, "blur_batch")
    assert kept is not None and (kept.variable, kept.type) == ("n", "long")
    assert kept.header == "for (long n = 0; n <= N - 1; ++n)"
    derived = kernel_syntax(kept.source, "blur_batch")
    assert derived is not None and [p.name for p in derived.params][-1] == "n"
    assert "for (" not in kept.source and GUARD in kept.source  # one iteration, the guard before it
    back = loop_around(_without_returns(kept.source), "blur_batch", kept)
    assert back is not None
    syntax = kernel_syntax(back, "blur_batch")
    assert syntax is not None and [p.name for p in syntax.params] == ["in", "out", "N", "H", "W"]
    assert back.count(kept.header) == 1 and "__syncthreads" not in back  # no shared memory, no barrier
    assert back.index(kept.header) < back.index("if (!(x < 1")  # the whole rewritten body in the loop


def test_a_rewrite_with_shared_memory_gets_a_barrier_before_the_next_iteration() -> None:
    kept = loop_as_scalar(BATCHED, "blur_batch")
    assert kept is not None
    tiled = _without_returns(kept.source).replace("int x = blockIdx.x", "__shared__ float t[64];\n    int x = blockIdx.x")
    back = loop_around(tiled, "blur_batch", kept)
    assert back is not None and "__syncthreads();  // the next iteration refills the shared memory" in back


def test_a_rewrite_that_can_leave_an_iteration_early_is_not_put_in_the_loop() -> None:
    """A thread that left one iteration early would skip that iteration's barriers while the
    others wait at them (and a return would end all its later iterations)."""
    kept = loop_as_scalar(BATCHED, "blur_batch")
    assert kept is not None
    assert loop_around(kept.source, "blur_batch", kept) is None  # the guard's `return`
    plain = _without_returns(kept.source)
    assert loop_around(plain, "blur_batch", kept) is not None
    assert loop_around(plain.replace("const int last", "if (y == 3) goto done;\n    const int last").replace(
        "\n}\n", "\ndone:;\n}\n"), "blur_batch", kept) is None
    inner_loop = plain.replace("const int last = W - 1;",
                               "const int last = W - 1;\n    for (int q = 0; q < 4; q++) { if (q == x) break; }")
    assert loop_around(inner_loop, "blur_batch", kept) is not None  # a break of its own loop stays inside


def test_loops_that_cannot_be_kept() -> None:
    cases = [
        BATCHED.replace("n <= N - 1", "n <= (int)in[0]"),  # the trip count read from memory
        BATCHED.replace("long n = 0", "long n = threadIdx.x"),  # the start depends on the thread
        BATCHED.replace("++n", "n += 2"),  # not a unit step
        BATCHED.replace("const int last = W - 1;", "const int last = W - 1;\n    out[0] = 0.f;"),  # a write before
        BATCHED.replace("const int last = W - 1;", "const float first = in[0];\n    const int last = W - 1;"),  # a load
        BATCHED.replace("int N, int H", "int N, long n, int H"),  # the counter is a parameter's name
        BATCHED.replace(") / 3.0f;", ") / 3.0f;\n        if (x == 2) break;"),  # leaves the loop
        BATCHED.replace("int H, int W)\n{", "int H, int W)\n{\n    float s = 0.f;").replace(
            ") / 3.0f;", ") / 3.0f + s;\n        s += 1.f;"),  # a value carried between iterations
    ]
    for source in cases:
        assert source != BATCHED
        assert loop_as_scalar(source, "blur_batch") is None, source
