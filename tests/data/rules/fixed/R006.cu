__global__ void add(const float *__restrict__ a, const float* __restrict__ b, const float *__restrict__ c, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += blockDim.x * gridDim.x) {
        out[i] = a[i] + b[i] + c[i];
    }
}
