// Row gather of a double table over a flat 1-D launch: element e of the output is column e % d
// of table row rows[e / d].
#include <cuda_runtime.h>

__global__ void gather_flat(const double *table, const int *rows, double *out, long long total, int d, int table_rows)
{
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < total) {
        long long r = e / d;
        int c = (int)(e - r * d);
        out[e] = table[(long long)rows[r] * d + c];
    }
}
