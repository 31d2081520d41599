// Transpose with a 1-D launch: the flat index split into (row, col) by / and %.
// applier: TiledPermutation
__global__ void transpose_flat(const float *in, float *out, int rows, int cols)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < rows * cols) {
        int r = idx / cols;
        int c = idx % cols;
        out[c * rows + r] = in[idx];
    }
}
