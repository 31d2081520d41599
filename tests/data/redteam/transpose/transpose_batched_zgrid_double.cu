// Batched transpose of double matrices: the batch on blockIdx.z, (row, col) on a 2-D block.
// applier: TiledPermutation
__global__ void batched_transpose(const double *in, double *out, int rows, int cols, int batch)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    const int b = blockIdx.z;
    if (c < cols && r < rows && b < batch) {
        const long long plane = (long long)b * rows * cols;
        out[plane + (long long)c * rows + r] = in[plane + (long long)r * cols + c];
    }
}
