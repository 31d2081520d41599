// Per-block partial sums with a dynamically sized shared buffer (`extern __shared__`, sized by
// the launch) and sequential addressing (`s = blockDim.x / 2; s > 0; s >>= 1`).
#define CHECK_LAUNCH_BOUNDS 512

__global__ void __launch_bounds__(CHECK_LAUNCH_BOUNDS) block_sum_dyn(const float *__restrict in,
                                                                   float *__restrict block_sums, int count)
{
    extern __shared__ float cache[];
    const int lane = threadIdx.x;
    const int gid = blockIdx.x * blockDim.x + lane;
    float v = 0.0f;
    if (gid < count)
        v = in[gid];
    cache[lane] = v;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 1; stride >>= 1) {
        if (lane < stride)
            cache[lane] = cache[lane] + cache[lane + stride];
        __syncthreads();
    }
    if (lane == 0)
        block_sums[blockIdx.x] = cache[0];
}
