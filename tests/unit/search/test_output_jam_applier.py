"""JammedOutputs: multi-channel 3x3 convolutions, a 1x1 convolution and a bank of 1-D filters,
written differently, get K outputs per thread along the coordinate their big reads do not depend
on; near-misses (the coordinate from threadIdx, control flow steered by it, nothing to share,
an early return) are left alone; every rewrite compiles with nvcc and, run on the CPU under
AddressSanitizer, gives the original's bits without loading anything the original does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from cpu_emulation import assert_rewrites_match, needs_gxx
from nvcc_check import compile_ok, needs_nvcc

from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits
from regrapht.search.appliers.output_jam import JammedOutputs
from regrapht.spec.launch import LaunchConfig

MATCHES = {
    "conv3x3_mc_guarded": ("""
__global__ void conv_mc(const float *x, const float *wt, const float *b, float *y, int nin, int nout, int H, int W) {
    int col = threadIdx.x + blockIdx.x * blockDim.x;
    int row = threadIdx.y + blockIdx.y * blockDim.y;
    int o = blockIdx.z;
    if (col < W && row < H && o < nout) {
        float s = b[o];
        for (int c = 0; c < nin; c++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int r = row + dy, q = col + dx;
                    if (r >= 0 && r < H && q >= 0 && q < W)
                        s += wt[((o * nin + c) * 3 + dy + 1) * 3 + dx + 1] * x[(c * H + r) * W + q];
                }
        y[(o * H + row) * W + col] = s;
    }
}
""", LaunchConfig(("(W + 31) / 32", "(H + 7) / 8", "nout"), ("32", "8")), "o"),
    "pointwise_conv_1x1_double": ("""
__global__ void mix_channels(const double *in, const double *w, double *out, int cin, int cout, int pixels) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int oc = blockIdx.y;
    if (p >= pixels || oc >= cout) return;
    double acc = 0.0;
    for (int ic = 0; ic < cin; ++ic)
        acc += w[oc * cin + ic] * in[ic * pixels + p];
    out[oc * pixels + p] = acc;
}
""", LaunchConfig(("(pixels + 255) / 256", "cout"), ("256",)), "oc"),
    "filter_bank_1d": ("""
#define TAPS 7
__global__ void filter_bank(const float *signal, const float *taps, float *responses, int n, int filters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int f = blockIdx.y;
    if (i >= n - TAPS || f >= filters) return;
    float v = 0.0f;
    const int first = i;
    for (int k = 0; k < TAPS; ++k) {
        float t = taps[f * TAPS + k];
        v += t * signal[first + k];
    }
    responses[f * n + i] = v;
}
""", LaunchConfig(("(n + 127) / 128", "filters"), ("128",)), "f"),
}

NEAR_MISSES = {
    "channel_from_thread_index": ("""
__global__ void mix(const float *in, const float *w, float *out, int cin, int cout, int pixels) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int oc = blockIdx.y * blockDim.y + threadIdx.y;
    if (p >= pixels || oc >= cout) return;
    float acc = 0.0f;
    for (int ic = 0; ic < cin; ++ic) acc += w[oc * cin + ic] * in[ic * pixels + p];
    out[oc * pixels + p] = acc;
}
""", LaunchConfig(("(pixels + 31) / 32", "(cout + 3) / 4"), ("32", "4"))),
    "skip_steered_by_the_channel": ("""
__global__ void sparse_mix(const float *in, const float *w, float *out, int cin, int cout, int pixels) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int oc = blockIdx.y;
    if (p >= pixels || oc >= cout) return;
    float acc = 0.0f;
    for (int ic = 0; ic < cin; ++ic) {
        if (w[oc * cin + ic] == 0.0f) continue;
        acc += w[oc * cin + ic] * in[ic * pixels + p];
    }
    out[oc * pixels + p] = acc;
}
""", LaunchConfig(("(pixels + 255) / 256", "cout"), ("256",))),
    "nothing_shared": ("""
__global__ void per_channel_sum(const float *in, float *out, int n, int channels) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int ch = blockIdx.y;
    if (i >= n || ch >= channels) return;
    float s = 0.0f;
    for (int k = 0; k < 4; ++k) s += in[(ch * 4 + k) * n + i];
    out[ch * n + i] = s;
}
""", LaunchConfig(("(n + 255) / 256", "channels"), ("256",))),
    "in_place_scale": ("""
__global__ void scale_planes(float *x, const float *s, int n, int planes) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = blockIdx.y;
    if (i < n && p < planes) x[p * n + i] = x[p * n + i] * s[p];
}
""", LaunchConfig(("(n + 255) / 256", "planes"), ("256",))),
    "early_return_in_the_loop": ("""
__global__ void mix_stop(const float *in, const float *w, float *out, int cin, int cout, int pixels) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int oc = blockIdx.y;
    if (p >= pixels || oc >= cout) return;
    float acc = 0.0f;
    for (int ic = 0; ic < cin; ++ic) {
        if (in[ic * pixels + p] < 0.0f) return;
        acc += w[oc * cin + ic] * in[ic * pixels + p];
    }
    out[oc * pixels + p] = acc;
}
""", LaunchConfig(("(pixels + 255) / 256", "cout"), ("256",))),
}


def _name(source: str) -> str:
    return source.split("void ", 1)[1].split("(", 1)[0].strip()


def _rewrites(case: str) -> list:
    source, launch, _ = MATCHES[case]
    return JammedOutputs().apply(ApplierInput(source, _name(source), launch))


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_jams_outputs_written_differently(case: str) -> None:
    rewrites = _rewrites(case)
    jammed = MATCHES[case][2]
    # the hand-picked 4 and 8 first, then the rest of the grid: 2, 16
    assert [r.note.split(" ", 1)[0] for r in rewrites] == ["4", "8", "2", "16"]
    assert [r.params for r in rewrites] == [(("outputs_per_thread", c),) for c in (4, 8, 2, 16)]
    for rewrite, count in zip(rewrites, (4, 8, 2, 16), strict=True):
        assert f"along {jammed}," in rewrite.note
        assert f"{jammed}_{count - 1}_rg" in rewrite.source and f"{jammed}_{count}_rg" not in rewrite.source
        assert rewrite.launch.block == MATCHES[case][1].block


def test_the_conv_shares_each_input_load_and_keeps_each_outputs_order() -> None:
    rewrite = _rewrites("conv3x3_mc_guarded")[0]
    assert rewrite.launch.grid == ("(W + 31) / 32", "(H + 7) / 8", "(nout + 3) / 4")
    # the loops and the padding test run once; the accumulation is repeated per output channel
    assert rewrite.source.count("for (int c = 0; c < nin; c++)") == 1
    assert rewrite.source.count("if (r >= 0 && r < H && q >= 0 && q < W)") == 1
    for j in range(4):
        assert f"s_{j}_rg += wt[((o_{j}_rg * nin + c) * 3 + dy + 1) * 3 + dx + 1] * x[(c * H + r) * W + q];" \
            in rewrite.source
    # outputs past the bound are computed on the last valid channel and not stored
    assert "(o_first_rg + 3 < nout ? o_first_rg + 3 : nout - 1)" in rewrite.source
    assert "if (o_first_rg + 3 < nout) y[(o_3_rg * H + row) * W + col] = s_3_rg;" in rewrite.source


def test_locals_not_depending_on_the_output_stay_shared() -> None:
    rewrite = _rewrites("filter_bank_1d")[0]
    assert rewrite.source.count("float t_") == 4 and rewrite.source.count("const int first = i;") == 1
    assert rewrite.launch.grid == ("(n + 127) / 128", "(filters + 3) / 4")


def test_more_outputs_per_thread_are_offered_only_while_they_fill_the_device() -> None:
    source, launch, _ = MATCHES["conv3x3_mc_guarded"]
    # 32 x 8 blocks on 64 x 64 pixels: 16 blocks per plane; 64 output channels
    sizes = {"W": 64, "H": 64, "nout": 64}
    few_sms = DeviceLimits(4, 2048, 1024, 48 * 1024)  # 32 resident blocks: 16 channels a thread still fill it
    assert [r.params[0][1] for r in JammedOutputs().apply(ApplierInput(source, "conv_mc", launch, sizes, few_sms))] \
        == [4, 8, 2, 16]
    many_sms = DeviceLimits(132, 2048, 1024, 48 * 1024)  # 1056: only 4 per thread and 2 are offered
    assert [r.params[0][1] for r in JammedOutputs().apply(ApplierInput(source, "conv_mc", launch, sizes, many_sms))] \
        == [4, 2]


def test_is_registered() -> None:
    assert any(isinstance(a, JammedOutputs) for a in APPLIERS)


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_leaves_near_misses_alone(case: str) -> None:
    source, launch = NEAR_MISSES[case]
    assert JammedOutputs().apply(ApplierInput(source, _name(source), launch)) == []


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_compile(case: str, tmp_path: Path) -> None:
    for index, rewrite in enumerate(_rewrites(case)):
        compile_ok(rewrite.source, tmp_path, f"v{index}")


# Small sizes for the CPU emulation, with channel counts that are not multiples of 4 or 8
CPU_SIZES: dict[str, tuple[dict[str, float | int], dict[str, int]]] = {
    "conv3x3_mc_guarded": ({"nin": 5, "nout": 7, "H": 37, "W": 45},
                           {"x": 5 * 37 * 45, "wt": 7 * 5 * 9, "b": 7, "y": 7 * 37 * 45}),
    "pointwise_conv_1x1_double": ({"cin": 9, "cout": 13, "pixels": 1000}, {"in": 9000, "w": 9 * 13, "out": 13000}),
    "filter_bank_1d": ({"n": 2001, "filters": 6}, {"signal": 2001, "taps": 42, "responses": 6 * 2001}),
}


@needs_gxx
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_give_the_same_bits_and_load_nothing_new_on_the_cpu(case: str, tmp_path: Path) -> None:
    source, launch, _ = MATCHES[case]
    scalars, counts = CPU_SIZES[case]
    assert_rewrites_match(source, _name(source), launch, _rewrites(case), scalars, counts, tmp_path)
