__global__ void chunk_sum(const float *__restrict__ in, float *__restrict__ out, int n, int chunk)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int i = 0; i < chunk; i++) {
        int idx = t + i * blockDim.x * gridDim.x;
        if (idx < n) {
            acc += in[idx];
        }
    }
    atomicAdd(out, acc);
}
