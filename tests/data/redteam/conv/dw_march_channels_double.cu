// applier: RegisterColumnStencil or HaloTiledStencil
// Depthwise 3x3 in double, valid padding, a 2-D launch over (x, y) and each thread looping over
// the channels (a march through the planes), output extents through locals.
__global__ void dw_march_c(const double *src, const double *wt, double *dst, int C, int H, int W)
{
    int ox = blockIdx.x * blockDim.x + threadIdx.x;
    int oy = blockIdx.y * blockDim.y + threadIdx.y;
    const int OW = W - 2, OH = H - 2;
    if (ox >= OW || oy >= OH) return;
    for (int c = 0; c < C; ++c) {
        double acc = 0.0;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                acc += src[(c * H + oy + i) * W + ox + j] * wt[c * 9 + i * 3 + j];
        dst[(c * OH + oy) * OW + ox] = acc;
    }
}
