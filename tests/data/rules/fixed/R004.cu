__global__ void count_positive(const float *__restrict__ v, int *__restrict__ count, int n)
{
    int mine = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        mine += v[i] > 0.0f;
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        mine += __shfl_down_sync(0xffffffffu, mine, offset);
    }
    if (threadIdx.x % 32 == 0) {
        atomicAdd(count, mine);
    }
}
