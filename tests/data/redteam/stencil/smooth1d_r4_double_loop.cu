// applier: RegisterColumnStencil or HaloTiledStencil
// 1-D moving average of radius 4 over a #define'd window, double, zero outside the array.
#define RADIUS 4

__global__ void moving_average(const double *in, double *out, long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double sum = 0.0;
        for (int k = -RADIUS; k <= RADIUS; k++) {
            long j = i + k;
            if (j >= 0 && j < n)
                sum += in[j];
        }
        out[i] = sum / (2 * RADIUS + 1);
    }
}
