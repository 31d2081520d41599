// applier: ParallelScan
// The addition goes through a __device__ helper (as a student factors "the operator").
__device__ float op(float a, float b) { return a + b; }

__global__ void scan_with_op(const float *__restrict__ src, float *__restrict__ dst, const int n)
{
    if (threadIdx.x + blockIdx.x * blockDim.x != 0) return;
    float acc = 0.0f;
    for (int i = 0; i < n; i++) {
        acc = op(acc, src[i]);
        dst[i] = acc;
    }
}
