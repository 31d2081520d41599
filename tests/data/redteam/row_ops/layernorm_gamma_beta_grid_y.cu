// LayerNorm with gamma/beta, the row along y (block 1 x 64), mean then variance then normalise.
// applier: GroupPerRow
__global__ void layer_norm(const float *inp, const float *gamma, const float *beta, float *outp,
                           int tokens, int hidden, float eps)
{
    int t = blockIdx.y * blockDim.y + threadIdx.y;
    if (t < tokens) {
        float mean = 0.0f;
        for (int h = 0; h < hidden; h++)
            mean += inp[t * hidden + h];
        mean /= hidden;
        float var = 0.0f;
        for (int h = 0; h < hidden; h++) {
            float d = inp[t * hidden + h] - mean;
            var += d * d;
        }
        var /= hidden;
        float inv = rsqrtf(var + eps);
        for (int h = 0; h < hidden; h++)
            outp[t * hidden + h] = (inp[t * hidden + h] - mean) * inv * gamma[h] + beta[h];
    }
}
