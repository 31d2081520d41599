// Sum of an array: each thread sums a contiguous chunk, then adds it to the total atomically.
#include <cuda_runtime.h>

__global__ void reduce_sum(const float *in, float *out, int n, int chunk)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int i = 0; i < chunk; i++) {
        int idx = t * chunk + i;
        if (idx < n) {
            acc += in[idx];
        }
    }
    atomicAdd(out, acc);
}

void run_reduce_sum(const float *d_in, float *d_out, int n)
{
    int chunk = 64;
    int threads = (n + chunk - 1) / chunk;
    reduce_sum<<<(threads + 127) / 128, 128>>>(d_in, d_out, n, chunk);
}
