// Expert-style reductions written for the ReGraphT labelled corpus (tests/data/realworld/labels.tsv).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(0xffffffff, v, offset);
    }
    return v;
}

// Grid-stride sum: one atomic per warp, issued by its leader lane.
__global__ void sum_leader_lane(const float *__restrict__ x, float *__restrict__ total, int n) {
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        acc += x[i];
    }
    acc = warp_sum(acc);
    const int lane = threadIdx.x % 32;
    if (lane == 0) {
        atomicAdd(total, acc);
    }
}

// The same with cooperative groups: the tile's rank-0 thread issues the atomic.
__global__ void sum_cg(const float *__restrict__ x, float *__restrict__ total, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        acc += x[i];
    }
    acc = cg::reduce(tile, acc, cg::plus<float>());
    if (tile.thread_rank() == 0) {
        atomicAdd(total, acc);
    }
}

// Row softmax, one block per row: the barrier sits in a loop whose trip count is the same in
// every thread (the thread index cancels between the start and the bound).
template <int BLOCK>
__global__ void softmax_rows(const float *__restrict__ x, float *__restrict__ y, int ncols) {
    __shared__ float partial[BLOCK / 32];
    const int row = blockIdx.x;
    const int tid = threadIdx.x;
    const float *xr = x + (size_t)row * ncols;
    float *yr = y + (size_t)row * ncols;
    float m = -INFINITY;
    for (int c = tid; c < ncols; c += BLOCK) {
        m = fmaxf(m, xr[c]);
    }
    float s = 0.0f;
    for (int c = tid; c < ncols; c += BLOCK) {
        s += exp(xr[c] - m);
    }
    s = warp_sum(s);
    if (tid % 32 == 0) {
        partial[tid / 32] = s;
    }
    __syncthreads();
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < BLOCK / 32; ++w) {
        total += partial[w];
    }
    const float inv = 1.0f / total;
    for (int c = tid; c < ncols; c += BLOCK) {
        yr[c] = exp(xr[c] - m) * inv;
    }
}

// Chunked scan over a sequence: each chunk is staged in shared memory between two barriers.
__global__ void chunked_decay(const float *__restrict__ k, float *__restrict__ out, int T, int C) {
    __shared__ float kk[128];
    const int tid = threadIdx.x;
    const int base = blockIdx.x * 128;
    float state = 0.0f;
    for (int t = base + tid; t < base + T * C + tid; t += C) {
        __syncthreads();
        kk[tid] = k[t];
        __syncthreads();
        float sum = 0.0f;
#pragma unroll 4
        for (int j = 0; j < 128; ++j) {
            sum += kk[j];
        }
        state = state * 0.9f + sum;
        out[t] = state;
    }
}

// Naive norm: each thread sums its own row, then a double-precision scale creeps in.
__global__ void row_norms(const float *__restrict__ a, float *__restrict__ norms, int rows, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) {
        return;
    }
    float s = 0.0f;
    for (int k = 0; k < N; ++k) {
        const float v = a[row * N + k];
        s += v * v;
    }
    norms[row] = sqrt(s) * (1.0 / N);
}

// A barrier under the bounds check: in the tail block the threads past n skip it (a real bug).
__global__ void stage_tail(const float *__restrict__ in, float *__restrict__ out, int n) {
    __shared__ float buf[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        buf[threadIdx.x] = in[i];
        __syncthreads();
        out[i] = buf[(threadIdx.x + 1) % blockDim.x];
    }
}

// A mean over a counter: the division runs once in a one-thread kernel.
__global__ void divide_by_count(float *result, int count) {
    *result /= static_cast<float>(count);
}

void launch_all(const float *x, float *y, float *total, float *norms, int rows, int ncols, cudaStream_t stream) {
    sum_leader_lane<<<256, 256, 0, stream>>>(x, total, rows * ncols);
    sum_cg<<<256, 256, 0, stream>>>(x, total, rows * ncols);
    softmax_rows<256><<<rows, 256, 0, stream>>>(x, y, ncols);
    chunked_decay<<<rows / 128, 128, 0, stream>>>(x, y, rows / 128, ncols);
    row_norms<<<(rows + 255) / 256, 256, 0, stream>>>(x, norms, rows, ncols);
    stage_tail<<<(rows + 255) / 256, 256, 0, stream>>>(x, y, rows);
    divide_by_count<<<1, 1, 0, stream>>>(total, rows * ncols);
}
