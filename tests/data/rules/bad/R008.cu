__device__ float softplus(float x) { return logf(1.0f + expf(x)); }

__global__ void activate(float *__restrict__ y, int n, int fan_in)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        // sqrt(int) and pow(float, 2.0) call the f64 functions; sqrt(float) would not.
        y[i] = softplus(y[i]) / sqrt(fan_in) + pow(y[i], 2.0);
    }
}
