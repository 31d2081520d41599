// applier: RegisterColumnStencil or HaloTiledStencil
// long long row offsets computed once, centre-weighted 5-point (damped Jacobi), else-copy boundary.
__global__ void damped(const float *in, float *out, int width, int height, float omega)
{
    const int tx = threadIdx.x + blockIdx.x * blockDim.x;
    const int ty = threadIdx.y + blockIdx.y * blockDim.y;
    if (tx >= width || ty >= height) return;
    const long long row = (long long)ty * width;
    const long long idx = row + tx;
    if (tx == 0 || ty == 0 || tx == width - 1 || ty == height - 1) {
        out[idx] = in[idx];
    } else {
        float avg = 0.25f * (in[idx - 1] + in[idx + 1] + in[idx - width] + in[idx + width]);
        out[idx] = (1.0f - omega) * in[idx] + omega * avg;
    }
}
