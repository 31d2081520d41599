#include <cuda_runtime.h>
__global__ void step(float *__restrict__ state, int n);

void simulate(float *h_state, float *d_state, int n, int steps)
{
    for (int s = 0; s < steps; ++s) {
        step<<<(n + 255) / 256, 256>>>(d_state, n);
        cudaDeviceSynchronize();
        cudaMemcpy(h_state, d_state, n * sizeof(float), cudaMemcpyDeviceToHost);
    }
}
