"""The device side of the differential check: CUDA kernels that compare on the GPU.

Owns CHECK_KERNELS (compiled by the parent with the candidates' compiler and arch, loaded by
the worker from the cubin) and the layout of their results. Each kernel adds a mismatch count
to `res[0]` and records the first mismatching index as `~index` with atomicMax in `res[1]`, so
one zeroed results buffer needs no other initialisation; `decode_first` undoes that.
`rg_hash_u8` adds a fingerprint of a buffer to `res[0]` (the worker's audit of its cached
inputs and reference outputs; FINGERPRINT_MULTIPLIER and `fingerprint` are its host twin). The rule
for floats is compare.summarize_output's, computed in double with explicit round-to-nearest
operations so that nvcc cannot contract it into an FMA and disagree with numpy.
"""

from __future__ import annotations

import numpy as np

CHECK_ENTRIES = ("rg_ne_fill_u8", "rg_ne_u8", "rg_ne_u16", "rg_ne_u32", "rg_ne_u64", "rg_cmp_f16", "rg_cmp_f32",
                 "rg_cmp_f64", "rg_hash_u8")
FLOAT_COMPARES = {2: "rg_cmp_f16", 4: "rg_cmp_f32", 8: "rg_cmp_f64"}  # a float buffer's element bytes -> its kernel
SLOTS_PER_BUFFER = 8  # uint64 words: guard before (count, ~first), guard after, nonfinite/input, bad
MASK64 = (1 << 64) - 1
THREADS = 256
FINGERPRINT_MULTIPLIER = 0x9E3779B97F4A7C15

CHECK_KERNELS = r"""
#include <cuda_fp16.h>
typedef unsigned long long u64;

__device__ __forceinline__ void rg_report(u64 *res, u64 count, u64 first)
{
    if (count) {
        atomicAdd(&res[0], count);
        atomicMax(&res[1], ~first);
    }
}

// elements of a that differ (bit-exactly) from b: inputs unchanged, integer outputs
template <typename T>
__device__ void rg_ne(const T *a, const T *b, u64 n, u64 *res)
{
    u64 count = 0, first = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        if (a[i] != b[i]) {
            if (!count) first = i;
            count++;
        }
    }
    rg_report(res, count, first);
}

extern "C" __global__ void rg_ne_u8(const unsigned char *a, const unsigned char *b, u64 n, u64 *res)
{ rg_ne<unsigned char>(a, b, n, res); }
extern "C" __global__ void rg_ne_u16(const unsigned short *a, const unsigned short *b, u64 n, u64 *res)
{ rg_ne<unsigned short>(a, b, n, res); }
extern "C" __global__ void rg_ne_u32(const unsigned int *a, const unsigned int *b, u64 n, u64 *res)
{ rg_ne<unsigned int>(a, b, n, res); }
extern "C" __global__ void rg_ne_u64(const u64 *a, const u64 *b, u64 n, u64 *res)
{ rg_ne<u64>(a, b, n, res); }

// bytes of a that are not `value`: guard canaries, never-initialised buffers
extern "C" __global__ void rg_ne_fill_u8(const unsigned char *a, unsigned int value, u64 n, u64 *res)
{
    u64 count = 0, first = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        if (a[i] != (unsigned char)value) {
            if (!count) first = i;
            count++;
        }
    }
    rg_report(res, count, first);
}

// res[0..1]: original finite, candidate not (unwritten/poisoned lands here);
// res[2..3]: any other mismatch (|got - ref| > atol + rtol*|ref|, or a different non-finite value)
template <typename T>
__device__ void rg_cmp(const T *ref, const T *got, u64 n, double atol, double rtol, u64 *res)
{
    u64 nf_count = 0, nf_first = 0, bad_count = 0, bad_first = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        double r = (double)ref[i], g = (double)got[i];
        bool rf = isfinite(r), gf = isfinite(g);
        bool nonfinite = rf && !gf, bad;
        if (rf) {
            bad = gf && fabs(__dsub_rn(g, r)) > __dadd_rn(atol, __dmul_rn(rtol, fabs(r)));
        } else {
            bad = !((isnan(r) && isnan(g)) || r == g);
        }
        if (nonfinite) {
            if (!nf_count) nf_first = i;
            nf_count++;
        }
        if (bad) {
            if (!bad_count) bad_first = i;
            bad_count++;
        }
    }
    rg_report(res, nf_count, nf_first);
    rg_report(res + 2, bad_count, bad_first);
}

extern "C" __global__ void rg_cmp_f16(const __half *ref, const __half *got, u64 n, double atol, double rtol, u64 *res)
{ rg_cmp<__half>(ref, got, n, atol, rtol, res); }
extern "C" __global__ void rg_cmp_f32(const float *ref, const float *got, u64 n, double atol, double rtol, u64 *res)
{ rg_cmp<float>(ref, got, n, atol, rtol, res); }
extern "C" __global__ void rg_cmp_f64(const double *ref, const double *got, u64 n, double atol, double rtol, u64 *res)
{ rg_cmp<double>(ref, got, n, atol, rtol, res); }

__device__ __forceinline__ u64 rg_mix(u64 x)  // splitmix64's finaliser
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// res[0] += the sum over the 4-byte words w_i of `a` (n bytes; a last partial word zero-padded)
// of rg_mix(i * 0x9e3779b97f4a7c15 + w_i + 1): order-independent, so one atomicAdd per warp.
// `a` comes from cuMemAlloc, so it is aligned for word reads. blockDim is a multiple of 32.
extern "C" __global__ void rg_hash_u8(const unsigned char *a, u64 n, u64 *res)
{
    const unsigned int *w = (const unsigned int *)a;
    u64 words = n / 4, sum = 0, tid = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    for (u64 i = tid; i < words; i += (u64)gridDim.x * blockDim.x)
        sum += rg_mix(i * 0x9e3779b97f4a7c15ULL + w[i] + 1);
    if (tid == 0 && n % 4) {
        unsigned int last = 0;
        for (u64 k = words * 4; k < n; k++)
            last |= (unsigned int)a[k] << (8 * (k - words * 4));
        sum += rg_mix(words * 0x9e3779b97f4a7c15ULL + last + 1);
    }
    for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if ((threadIdx.x & 31) == 0 && sum)
        atomicAdd(&res[0], sum);
}
"""


def decode_first(count: int, stored: int) -> int:
    """The first index from a (count, ~first) pair; -1 when nothing was found."""
    return (~int(stored)) & MASK64 if count else -1


def blocks_for(n: int, sms: int) -> int:
    """Grid size of a grid-stride check kernel over n elements: enough to fill the device."""
    return max(1, min((n + THREADS - 1) // THREADS, sms * 8))


def fingerprint(data: bytes | bytearray | memoryview) -> int:
    """What rg_hash_u8 computes for `data`, on the host (tests, the fake device)."""
    raw = np.frombuffer(bytes(data) + b"\0" * (-len(data) % 4), dtype="<u4").astype(np.uint64)
    with np.errstate(over="ignore"):
        x = np.arange(raw.size, dtype=np.uint64) * np.uint64(FINGERPRINT_MULTIPLIER) + raw + np.uint64(1)
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
        return int(x.sum(dtype=np.uint64))
