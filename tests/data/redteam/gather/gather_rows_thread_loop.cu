// Row gather, one thread per output row copying the whole row in a loop (double).
// applier: GroupPerRow
__global__ void take_rows(const double *src, const int *rows, double *dst, int nsel, int width)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nsel) return;
    const double *from = src + (size_t)rows[i] * width;
    for (int k = 0; k < width; ++k)
        dst[(size_t)i * width + k] = from[k];
}
