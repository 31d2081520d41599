__device__ float softplus(float x) { return log(1.0f + exp(x)); }

__global__ void activate(float *__restrict__ y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = sqrt(softplus(y[i])) + pow(y[i], 2.0f);
    }
}
