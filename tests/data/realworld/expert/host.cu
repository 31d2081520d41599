// Expert-style host code written for the ReGraphT labelled corpus: multi-GPU setup, pipelines.
#include <cuda_runtime.h>
#include <vector>

__global__ void step(float *__restrict__ state, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        state[i] = state[i] * 0.99f + 1.0f;
    }
}

// One buffer per device: the loop selects a device per iteration, nothing to hoist.
void setup_devices(std::vector<float *> &buffers, int n, int device_count) {
    buffers.resize(device_count);
    for (int dev = 0; dev < device_count; ++dev) {
        cudaSetDevice(dev);
        cudaMalloc(&buffers[dev], n * sizeof(float));
        cudaMemset(buffers[dev], 0, n * sizeof(float));
        cudaDeviceSynchronize();
    }
}

// A simulation loop: clearing and device-to-device copies are queued; the read-back blocks.
void simulate(float *h_state, float *d_state, float *d_prev, int n, int steps, cudaStream_t stream) {
    for (int s = 0; s < steps; ++s) {
        cudaMemsetAsync(d_prev, 0, n * sizeof(float), stream);
        cudaMemcpy(d_prev, d_state, n * sizeof(float), cudaMemcpyDeviceToDevice);
        step<<<(n + 255) / 256, 256, 0, stream>>>(d_state, n);
        cudaMemcpy(h_state + (size_t)s * n, d_state, n * sizeof(float), cudaMemcpyDeviceToHost);
    }
}

// Per-iteration scratch allocation: an allocation pattern, not a transfer.
void scratch_per_batch(int batches, int n, cudaStream_t stream) {
    for (int b = 0; b < batches; ++b) {
        float *tmp = nullptr;
        cudaMalloc(&tmp, n * sizeof(float));
        step<<<(n + 255) / 256, 256, 0, stream>>>(tmp, n);
        cudaStreamSynchronize(stream);
        cudaFree(tmp);
    }
}

// A launch with 100 threads per block wastes 28 lanes in the last warp of every block.
void odd_launch(float *d_state, int n) {
    dim3 block(10, 10);
    step<<<(n + 99) / 100, block>>>(d_state, n);
}
