// applier: RegisterColumnStencil or HaloTiledStencil
// 9-point box filter with nested offset loops, double, zero padding by a bounds check per tap.
__global__ void box9(const double *a, double *b, int w, int h)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    double s = 0.0;
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            const int xx = x + dx, yy = y + dy;
            if (xx >= 0 && xx < w && yy >= 0 && yy < h)
                s += a[yy * w + xx];
        }
    }
    b[y * w + x] = s / 9.0;
}
