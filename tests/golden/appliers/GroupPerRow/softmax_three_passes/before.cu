// applier: GroupPerRow
// Row softmax, one thread per row, three passes through a row pointer.
__global__ void softmax_rows(const float *logits, float *probs, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float *in = logits + (size_t)row * cols;
    float *out = probs + (size_t)row * cols;
    float m = -3.0e38f;
    for (int j = 0; j < cols; ++j) m = fmaxf(m, in[j]);
    float denom = 0.0f;
    for (int j = 0; j < cols; ++j) denom += __expf(in[j] - m);
    const float inv = 1.0f / denom;
    for (int j = 0; j < cols; ++j) out[j] = __expf(in[j] - m) * inv;
}
