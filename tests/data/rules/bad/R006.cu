__global__ void add(float *a, float* b, const float *c, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += blockDim.x * gridDim.x) {
        out[i] = a[i] + b[i] + c[i];
    }
}
