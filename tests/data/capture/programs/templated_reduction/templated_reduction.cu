// Templated reductions: chunked sums with an atomic per thread for float, int and double, and a
// shared-memory tree sum in two passes (blocks of 256, then of the partial sums). Prints the sums.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t status_ = (call);                                                    \
        if (status_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status_)); \
            std::exit(2);                                                                \
        }                                                                                \
    } while (0)

template <typename T, int CHUNK>
__global__ void chunk_sum(const T *in, T *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    T acc = 0;
    for (int i = 0; i < CHUNK; i++) {
        int idx = t * CHUNK + i;
        if (idx < n) {
            acc += in[idx];
        }
    }
    atomicAdd(out, acc);
}

template <typename T, int BLOCK>
__global__ void tree_sum(const T *in, T *partial, int n)
{
    __shared__ T cache[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    cache[tid] = i < n ? in[i] : T(0);
    __syncthreads();
    for (int s = 1; s < BLOCK; s *= 2) {
        if (tid % (2 * s) == 0) {
            cache[tid] += cache[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = cache[0];
    }
}

template <typename T, int CHUNK>
T chunked(const std::vector<T> &host)
{
    const int n = static_cast<int>(host.size());
    T *in, *out;
    CHECK(cudaMalloc(&in, n * sizeof(T)));
    CHECK(cudaMalloc(&out, sizeof(T)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(out, 0, sizeof(T)));
    const int threads = (n + CHUNK - 1) / CHUNK;
    chunk_sum<T, CHUNK><<<(threads + 127) / 128, 128>>>(in, out, n);
    T total;
    CHECK(cudaMemcpy(&total, out, sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    return total;
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : (1 << 22);
    std::vector<float> floats(n);
    std::vector<int> ints(n);
    std::vector<double> doubles(n);
    unsigned state = 2024u;
    for (int i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        floats[i] = static_cast<float>(state >> 8) / 16777216.0f;
        ints[i] = static_cast<int>(state >> 28) - 8;
        doubles[i] = static_cast<double>(floats[i]) * 0.5;
    }
    std::printf("chunk_sum<float, 64>: %.3f\n", chunked<float, 64>(floats));
    std::printf("chunk_sum<int, 32>: %d\n", chunked<int, 32>(ints));
    std::printf("chunk_sum<double, 16>: %.3f\n", chunked<double, 16>(doubles));

    float *in, *partial, *total;
    const int blocks = (n + 255) / 256;
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&partial, blocks * sizeof(float)));
    CHECK(cudaMalloc(&total, ((blocks + 255) / 256) * sizeof(float)));
    CHECK(cudaMemcpy(in, floats.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    tree_sum<float, 256><<<blocks, 256>>>(in, partial, n);
    tree_sum<float, 256><<<(blocks + 255) / 256, 256>>>(partial, total, blocks);
    std::vector<float> sums((blocks + 255) / 256);
    CHECK(cudaMemcpy(sums.data(), total, sums.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double all = 0.0;
    for (float s : sums) {
        all += s;
    }
    std::printf("tree_sum<float, 256>: %.3f\n", all);
    CHECK(cudaGetLastError());
    return 0;
}
