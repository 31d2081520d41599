// applier: GroupPerRow
// RMSNorm with the row offset added on the other side.
__global__ void rms_norm(float *out, const float *in, const float *weight, int hidden, int tokens)
{
    const unsigned int tok = blockIdx.x * blockDim.x + threadIdx.x;
    if (tok < tokens) {
        float ss = 0.0f;
        for (int h = 0; h < hidden; h++) {
            const float v = in[h + tok * hidden];
            ss = ss + v * v;
        }
        const float scale = rsqrtf(ss / hidden + 1e-6f);
        for (int h = 0; h < hidden; h++)
            out[h + tok * hidden] = in[h + tok * hidden] * scale * weight[h];
    }
}
