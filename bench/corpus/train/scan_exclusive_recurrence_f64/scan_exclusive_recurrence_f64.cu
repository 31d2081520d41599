// Exclusive prefix sum of doubles as a recurrence on a <<<1, 1>>> launch:
// out[0] = 0 and out[i] = in[i - 1] + out[i - 1].
#include <cuda_runtime.h>

__global__ void exclusive_running(const double *in, double *out, int n)
{
    if (n < 1)
        return;
    out[0] = 0.0;
    for (int i = 1; i < n; i++)
        out[i] = in[i - 1] + out[i - 1];
}
