// applier: RegisterColumnStencil or HaloTiledStencil
// 1-D five-point blur (radius 2), interior only with an early return, weights as literals.
__global__ void blur5(const float *x, float *y, int n)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < 2 || i >= n - 2)
        return;
    y[i] = 0.0625f * x[i - 2] + 0.25f * x[i - 1] + 0.375f * x[i] + 0.25f * x[i + 1] + 0.0625f * x[i + 2];
}
