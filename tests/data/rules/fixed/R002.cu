__global__ void column_sums(const float *__restrict__ a, float *__restrict__ sums, int rows, int N)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < N) {
        float s = 0.0f;
        for (int r = 0; r < rows; r++) {
            s += a[r * N + col];
        }
        sums[col] = s;
    }
}
