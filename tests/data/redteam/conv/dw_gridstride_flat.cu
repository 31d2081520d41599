// applier: RegisterColumnStencil or HaloTiledStencil
// Grid-stride loop over the flattened N*C*H*W output, valid padding, long long indices.
__global__ void dw_gs(const float *in, const float *w, float *out, int N, int C, int H, int W)
{
    long long OH = H - 2, OW = W - 2;
    long long total = (long long)N * C * OH * OW;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
        long long ox = i % OW;
        long long oy = (i / OW) % OH;
        long long nc = i / (OW * OH);
        long long c = nc % C;
        float s = 0.0f;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                s += in[(nc * H + oy + a) * W + ox + b] * w[c * 9 + a * 3 + b];
        out[i] = s;
    }
}
