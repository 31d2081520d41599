__device__ float softplus(float x) { return logf(1.0f + expf(x)); }

__global__ void activate(float *__restrict__ y, int n, int fan_in)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        // On float arguments sqrt and pow are the float overloads: the same code as sqrtf/powf.
        y[i] = softplus(y[i]) / sqrtf(float(fan_in)) + pow(y[i], 2.0f);
    }
}
