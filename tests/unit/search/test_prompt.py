"""Prompt construction, code extraction, splicing and cheap rejection."""

from __future__ import annotations

from regrapht.graph.types import Example
from regrapht.search.prompt import (
    answer_prefill,
    choose_example,
    extract_code,
    extract_launch,
    rewrite_messages,
    splice_answer,
)
from regrapht.spec.launch import LaunchConfig

SOURCE = """#include <cuda_runtime.h>
__global__ void scale(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 2.0;
}
void host(float *x, int n) { scale<<<(n + 255) / 256, 256>>>(x, n); }
"""
LAUNCH = LaunchConfig(("(n + 255) / 256",), ("256",))


def test_choose_example_prefers_short_faster_examples() -> None:
    long_fast = Example("k", "r", "", "a" * 500, "b" * 500, 3.0)
    short_fast = Example("k", "r", "", "a", "b", 1.5)
    short_slow = Example("k", "r", "", "", "", 0.5)
    assert choose_example([long_fast, short_fast, short_slow]) == short_fast
    assert choose_example([short_slow]) == short_slow
    assert choose_example([]) is None


def test_prompt_holds_technique_example_and_kernel() -> None:
    example = Example("k", "reads become coalesced", "", "BEFORE_CODE", "AFTER_CODE", 2.0)
    messages = rewrite_messages("memory_coalescing", "Make warps read consecutive addresses.", example,
                                "__global__ void scale(float *x, int n) {}", LAUNCH)
    assert messages[0].role == "system" and "```cuda" in messages[0].content
    user = messages[1].content
    for text in ("memory coalescing", "BEFORE_CODE", "AFTER_CODE", "reads become coalesced",
                 "__global__ void scale", "grid=((n + 255) / 256) block=(256)"):
        assert text in user


def test_extract_code_and_launch() -> None:
    answer = "Sure!\n```cuda\n__global__ void scale(float *x, int n) { }\n```\nLAUNCH grid=((n + 511) / 512) block=(512)"
    assert extract_code(answer) == "__global__ void scale(float *x, int n) { }\n"
    assert extract_launch(answer, LAUNCH) == LaunchConfig(("(n + 511) / 512",), ("512",))
    assert extract_launch("no launch line", LAUNCH) == LAUNCH
    assert extract_code("no code at all") is None
    assert extract_code("```cuda\n__global__ void f() {}") is not None  # unterminated fence


def test_splice_replaces_only_the_kernel() -> None:
    code = "__global__ void scale(float *__restrict__ x, int n)\n{\n    x[0] = 1.0f;\n}\n"
    spliced = splice_answer(SOURCE, "scale", code)
    assert spliced.source is not None
    assert "x[0] = 1.0f;" in spliced.source and "void host(float *x, int n)" in spliced.source
    assert "2.0" not in spliced.source


def test_splice_rejects_renamed_kernel_or_changed_parameters() -> None:
    assert splice_answer(SOURCE, "scale", "__global__ void scale2(float *x, int n) {}").source is None
    changed = splice_answer(SOURCE, "scale", "__global__ void scale(float *x, long n) {}")
    assert changed.source is None and "parameter list" in changed.reason
    assert splice_answer(SOURCE, "scale", "int main() {}").reason == "answer holds no kernel"


def test_answer_prefill_is_a_fence_and_the_kernel_header() -> None:
    assert answer_prefill("__global__ void k(int n, float *y)\n{") == "```cuda\n__global__ void k(int n, float *y)\n{\n    "
