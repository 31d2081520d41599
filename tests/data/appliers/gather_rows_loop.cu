// applier: GroupPerRow
// Row gather out[i, :] = table[index[i], :] in double: one thread copies one whole row.
__global__ void gather_rows(const double *table, const long long *index, double *out, int count, int width)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) {
        const long long src = index[i];
        for (int k = 0; k < width; ++k)
            out[(size_t)i * width + k] = table[src * width + k];
    }
}
