// Per row of a matrix, how many entries exceed a threshold: a 2-D grid whose blocks each cover
// 128 columns of row blockIdx.y; a shared-memory tree counts the block's hits and one atomicAdd
// per block adds them to the row's count.
// applier: BlockReduceAtomic
__global__ void count_above_rows(const float *m, unsigned int *counts, int cols, float threshold, int rows)
{
    __shared__ unsigned int hits[128];
    int t = threadIdx.x;
    int col = blockIdx.x * 128 + t;
    unsigned int hit = 0;
    if (col < cols && m[blockIdx.y * cols + col] > threshold)
        hit = 1;
    hits[t] = hit;
    __syncthreads();
    for (int stride = 64; stride >= 1; stride /= 2) {
        if (t < stride)
            hits[t] += hits[t + stride];
        __syncthreads();
    }
    if (t == 0)
        atomicAdd(counts + blockIdx.y, hits[0]);
}
