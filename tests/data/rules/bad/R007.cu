__global__ void blend(float *__restrict__ y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = y[i] * 0.7 + 1e-3 + .25 * y[i];
    }
}
