__global__ void fill(float *__restrict__ y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = 0.0f;
    }
}

void launch(float *y, int n)
{
    dim3 block(10, 10);
    fill<<<64, block>>>(y, n);
    fill<<<64, 32>>>(y, n);
}
