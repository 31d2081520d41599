// Block reduction in shared memory with sequential addressing; one partial sum per block.
#include <cuda_runtime.h>
#include <vector>

__global__ void block_sum(const float *__restrict__ in, float *__restrict__ partial, int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    float value = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        value += in[i];
    }
    sdata[tid] = value;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}

float run_block_sum(const float *d_in, float *d_partial, int n, int blocks, int iterations)
{
    std::vector<float> host(blocks);
    for (int it = 0; it < iterations; ++it) {
        block_sum<<<blocks, 256, 256 * sizeof(float)>>>(d_in, d_partial, n);
    }
    cudaMemcpy(host.data(), d_partial, blocks * sizeof(float), cudaMemcpyDeviceToHost);
    float total = 0.0f;
    for (int b = 0; b < blocks; ++b) {
        total += host[b];
    }
    return total;
}
