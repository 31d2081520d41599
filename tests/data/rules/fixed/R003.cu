#define TILE 256
__global__ void matvec(const float *__restrict__ A, const float *__restrict__ x, float *__restrict__ y, int N)
{
    __shared__ float xs[TILE];
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < N; t += TILE) {
        xs[threadIdx.x] = x[t + threadIdx.x];
        __syncthreads();
        for (int k = 0; k < TILE; k++) {
            sum += xs[k] * A[(t + k) * N + col];
        }
        __syncthreads();
    }
    if (col < N) {
        y[col] = sum;
    }
}
