// Minimum of the suffix from i: the loop runs from the item to the end.
__global__ void suffix_min(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float m = x[i];
        for (int j = i + 1; j < n; ++j)
            m = fminf(m, x[j]);
        out[i] = m;
    }
}
