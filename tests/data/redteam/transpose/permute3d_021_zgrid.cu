// 3-D permutation (d0, d1, d2) -> (d0, d2, d1) with a 3-D grid, z over the outer axis.
// applier: TiledPermutation
__global__ void permute_021(const float *a, float *b, int D0, int D1, int D2)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;  // d2
    int j = blockIdx.y * blockDim.y + threadIdx.y;  // d1
    int i = blockIdx.z;                             // d0
    if (k < D2 && j < D1 && i < D0)
        b[(i * D2 + k) * D1 + j] = a[(i * D1 + j) * D2 + k];
}
