// Sum of squares: each thread takes CHUNK consecutive elements (macro), then one atomicAdd.
// applier: BlockReduceAtomic
#define CHUNK 8

__global__ void sum_squares_chunked(const float *v, float *acc, int n)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    float local = 0.0f;
    for (int c = 0; c < CHUNK; c++) {
        const int e = t * CHUNK + c;
        if (e < n)
            local += v[e] * v[e];
    }
    atomicAdd(acc, local);
}
