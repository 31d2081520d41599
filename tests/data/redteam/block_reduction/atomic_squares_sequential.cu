// The sum of squares of a vector (a squared L2 norm): each thread's square under a guard,
// sequential addressing over a `extern __shared__` buffer, one atomicAdd per block into out[0].
// applier: BlockReduceAtomic
__global__ void sum_squares(const double *__restrict__ values, double *__restrict__ out, unsigned int count)
{
    extern __shared__ double partial[];
    const unsigned int lane = threadIdx.x;
    const unsigned int index = blockIdx.x * blockDim.x + lane;
    double square = 0.0;
    if (index < count) {
        double v = values[index];
        square = v * v;
    }
    partial[lane] = square;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (lane < half)
            partial[lane] = partial[lane] + partial[lane + half];
        __syncthreads();
    }
    if (lane == 0) {
        atomicAdd(&out[0], partial[0]);
    }
}
