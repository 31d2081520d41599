// Column sums of squares: a pointer walked down the column by the row pitch, unsigned indices.
// applier: ColumnSplitReduction
__global__ void col_sumsq(const float *data, float *res, unsigned height, unsigned pitch)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < pitch) {
        const float *p = data + x;
        float acc = 0.f;
        for (unsigned y = 0; y < height; ++y) {
            acc += *p * *p;
            p += pitch;
        }
        res[x] = acc;
    }
}
