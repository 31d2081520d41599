__global__ void matvec(const float *__restrict__ A, const float *__restrict__ x, float *__restrict__ y, int N)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < N; k++) {
        sum += x[k] * A[k * N + col];
    }
    if (col < N) {
        y[col] = sum;
    }
}
