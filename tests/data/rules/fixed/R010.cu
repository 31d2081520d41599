__global__ void even_odd(float *__restrict__ y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        if ((threadIdx.x / 32) % 2 == 0) {
            y[i] = y[i] * 2.0f;
        } else {
            y[i] = y[i] + 1.0f;
        }
    }
}
