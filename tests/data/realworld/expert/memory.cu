// Expert-style memory access patterns written for the ReGraphT labelled corpus.
#include <cuda_runtime.h>
#include <cuda_fp16.h>

#define TILE 32

// Tiled transpose: the strided column walk happens in shared memory, global accesses coalesce.
__global__ void transpose_tiled(const float *__restrict__ in, float *__restrict__ out, int width, int height) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) {
        if (x < width && y + j < height) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) {
        if (x < height && y + j < width) {
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

// Naive transpose: the write walks a column of `out`.
__global__ void transpose_naive(const float *__restrict__ in, float *__restrict__ out, int width, int height) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[x * height + y] = in[y * width + x];
    }
}

// Vectorised copy: 16 bytes per thread, neighbouring threads on neighbouring float4s.
__global__ void copy_vec4(const float *__restrict__ src, float *__restrict__ dst, int n4) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
        const float4 v = reinterpret_cast<const float4 *>(src)[i];
        reinterpret_cast<float4 *>(dst)[i] = v;
    }
}

// Pairs of halves through a half2 load: two elements per thread, one 4-byte access.
__global__ void scale_half2(const __half *__restrict__ x, __half *__restrict__ y, __half s, int n2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        const __half2 v = *(const __half2 *) &x[2 * i];
        *(__half2 *) &y[2 * i] = __hmul2(v, __half2half2(s));
    }
}

// Interleaved complex numbers, re/im pairs read by one thread: 8 bytes apart, one sector per
// 4 threads: a hint at most.
__global__ void complex_magnitude(const float *__restrict__ z, float *__restrict__ mag, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float re = z[2 * i];
        const float im = z[2 * i + 1];
        mag[i] = sqrt(re * re + im * im);
    }
}

// Array of structures: each thread reads one field of a 64-byte record.
__global__ void gather_field(const float *__restrict__ records, float *__restrict__ field, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        field[i] = records[i * 16 + 3];
    }
}

// Strided tensor view: the innermost stride is a run-time argument (1 for contiguous tensors).
__global__ void copy_view(const float *__restrict__ src, float *__restrict__ dst, int ne0, int ne1,
                          long s00, long s01) {
    const int i0 = blockIdx.x * blockDim.x + threadIdx.x;
    const int i1 = blockIdx.y;
    if (i0 < ne0 && i1 < ne1) {
        dst[i1 * ne0 + i0] = src[i1 * s01 + i0 * s00];
    }
}

// A device helper reading a shared tile through a pointer argument.
__device__ float tile_dot(const float *tile_row, const float *vec, int k) {
    float s = 0.0f;
    for (int j = 0; j < k; ++j) {
        s += tile_row[threadIdx.x * (k + 1) + j] * vec[j];
    }
    return s;
}

__global__ void matvec_tiles(const float *__restrict__ a, const float *__restrict__ v, float *__restrict__ out) {
    __shared__ float tile[32 * 33];
    __shared__ float vs[32];
    for (int j = 0; j < 32; ++j) {
        tile[threadIdx.x * 33 + j] = a[(blockIdx.x * 32 + j) * 32 + threadIdx.x];
    }
    vs[threadIdx.x] = v[threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 32 + threadIdx.x] = tile_dot(tile, vs, 32);
}

// Element-wise with a scale: one float multiply, a literal the compiler narrows.
__global__ void halve(float *__restrict__ y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float zero = 0.0;
        y[i] = y[i] > zero ? y[i] * 0.5 : zero;
    }
}

// GELU with a polynomial in double: every operation runs in f64.
__global__ void gelu_tanh(const float *__restrict__ x, float *__restrict__ y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = 0.5 * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715 * v * v * v)));
    }
}

void launch_memory(const float *a, float *b, const __half *h, __half *g, int n, cudaStream_t stream) {
    dim3 block(TILE, 8);
    dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    transpose_tiled<<<grid, block, 0, stream>>>(a, b, n, n);
    dim3 block2(16, 16);
    transpose_naive<<<grid, block2, 0, stream>>>(a, b, n, n);
    copy_vec4<<<1024, 256, 0, stream>>>(a, b, n / 4);
    scale_half2<<<(n / 2 + 255) / 256, 256, 0, stream>>>(h, g, __float2half(2.0f), n / 2);
    complex_magnitude<<<(n + 255) / 256, 256, 0, stream>>>(a, b, n);
    gather_field<<<(n + 255) / 256, 256, 0, stream>>>(a, b, n);
    copy_view<<<dim3((n + 255) / 256, n), 256, 0, stream>>>(a, b, n, n, 1, n);
    matvec_tiles<<<n / 32, 32, 0, stream>>>(a, a, b);
    halve<<<(n + 255) / 256, 256, 0, stream>>>(b, n);
    gelu_tanh<<<(n + 255) / 256, 256, 0, stream>>>(a, b, n);
}
