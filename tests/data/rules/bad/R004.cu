__global__ void count_positive(const float *__restrict__ v, int *__restrict__ count, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        if (v[i] > 0.0f) {
            atomicAdd(count, 1);
        }
    }
}
