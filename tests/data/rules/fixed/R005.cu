// 256-bin histogram: per-block bins in shared memory, merged with one global atomic per bin.
#include <cuda_runtime.h>
#define BINS 256

__global__ void histogram_private(const unsigned char *__restrict__ data, unsigned int *__restrict__ bins, int n)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&local[data[i]], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        atomicAdd(&bins[b], local[b]);
    }
}

void run_histogram(const unsigned char *d_data, unsigned int *d_bins, int n, int blocks)
{
    histogram_private<<<blocks, 256>>>(d_data, d_bins, n);
}
