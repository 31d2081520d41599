// applier: RegisterColumnStencil or HaloTiledStencil
// Rows along x, columns along y (a port from row-major CPU loops "for i for j"), boundary copied.
__global__ void jacobi_ij(const float *in, float *out, int rows, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // row
    int j = blockIdx.y * blockDim.y + threadIdx.y;  // column
    if (i >= rows || j >= cols) return;
    if (i == 0 || j == 0 || i == rows - 1 || j == cols - 1) {
        out[i * cols + j] = in[i * cols + j];
        return;
    }
    out[i * cols + j] = (in[(i - 1) * cols + j] + in[(i + 1) * cols + j] +
                         in[i * cols + j - 1] + in[i * cols + j + 1]) * 0.25f;
}
