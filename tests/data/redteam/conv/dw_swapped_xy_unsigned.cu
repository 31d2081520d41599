// applier: RegisterColumnStencil or HaloTiledStencil
// Rows along x, columns along y (a CPU "for h for w" port), unsigned indices, same padding.
__global__ void dw_rows_x(const float *in, const float *w, float *out, unsigned C, unsigned H, unsigned W)
{
    unsigned h = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned col = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned c = blockIdx.z;
    if (h >= H || col >= W) return;
    float acc = 0.0f;
    for (int ky = 0; ky < 3; ky++) {
        for (int kx = 0; kx < 3; kx++) {
            int iy = (int)h + ky - 1, ix = (int)col + kx - 1;
            if (iy >= 0 && iy < (int)H && ix >= 0 && ix < (int)W)
                acc += in[(c * H + iy) * W + ix] * w[c * 9 + ky * 3 + kx];
        }
    }
    out[(c * H + h) * W + col] = acc;
}
