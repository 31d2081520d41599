__global__ void row_sums(const float *__restrict__ a, float *__restrict__ sums, int rows, int N)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float s = 0.0f;
        for (int k = 0; k < N; k++) {
            s += a[row * N + k];
        }
        sums[row] = s;
    }
}
