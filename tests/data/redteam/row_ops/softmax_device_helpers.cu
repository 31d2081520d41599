// Row softmax, one thread per row, each pass in a __device__ helper.
// applier: GroupPerRow
__device__ float row_max(const float *r, int n)
{
    float m = r[0];
    for (int j = 1; j < n; ++j) m = fmaxf(m, r[j]);
    return m;
}

__device__ float row_exp_sum(const float *r, int n, float m)
{
    float s = 0.f;
    for (int j = 0; j < n; ++j) s += expf(r[j] - m);
    return s;
}

__global__ void softmax_rows(const float *logits, float *probs, int batch, int classes)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < batch) {
        const float *r = logits + b * classes;
        float m = row_max(r, classes);
        float s = row_exp_sum(r, classes, m);
        for (int j = 0; j < classes; ++j)
            probs[b * classes + j] = expf(r[j] - m) / s;
    }
}
