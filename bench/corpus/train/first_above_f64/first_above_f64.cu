// First index whose value exceeds a limit (n if none), a grid-stride loop over double data with
// 64-bit indices and result.
__global__ void first_above(const double *data, double limit, unsigned long long *pos, long long n)
{
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (long long)blockDim.x * gridDim.x) {
        if (data[k] > limit)
            atomicMin(pos, (unsigned long long)k);
    }
}
