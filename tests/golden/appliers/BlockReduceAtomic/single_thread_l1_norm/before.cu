// applier: BlockReduceAtomic
// One thread adds up the whole array.
__global__ void l1_norm(const float *v, float *norm, int len)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        float s = 0.0f;
        for (int i = 0; i < len; i++)
            s += fabsf(v[i]);
        *norm = s;
    }
}
