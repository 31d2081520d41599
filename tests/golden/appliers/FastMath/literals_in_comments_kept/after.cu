// Leaky ReLU with a double literal in the code and literals in the comments.
#include <cuda_runtime.h>

__global__ void leaky_relu(const float *x, float *y, float slope, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        // negative inputs are scaled by slope (0.01 by default), positive ones kept (x 1.0)
        y[i] = v > 0.0f ? v : slope * v; /* 0.0 is the kink */
    }
}
