// applier: RegisterColumnStencil or HaloTiledStencil
// Nine hand-written taps, valid padding, weights read into registers first; y-z grid for channel.
__global__ void dw3x3(const float *__restrict__ x, const float *__restrict__ k, float *__restrict__ y,
                      int H, int W)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int ch = blockIdx.z;
    if (col >= W - 2 || row >= H - 2) return;
    const float *kk = k + ch * 9;
    const float k0 = kk[0], k1 = kk[1], k2 = kk[2], k3 = kk[3], k4 = kk[4], k5 = kk[5], k6 = kk[6], k7 = kk[7], k8 = kk[8];
    const int b = ch * H * W + row * W + col;
    y[ch * (H - 2) * (W - 2) + row * (W - 2) + col] =
        k0 * x[b] + k1 * x[b + 1] + k2 * x[b + 2] +
        k3 * x[b + W] + k4 * x[b + W + 1] + k5 * x[b + W + 2] +
        k6 * x[b + 2 * W] + k7 * x[b + 2 * W + 1] + k8 * x[b + 2 * W + 2];
}
