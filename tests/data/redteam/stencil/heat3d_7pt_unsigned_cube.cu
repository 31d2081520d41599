// applier: RegisterColumnStencil or HaloTiledStencil
// 3-D 7-point on an n^3 cube, unsigned indices, neighbours through precomputed strides, interior only.
__global__ void heat_cube(const float *__restrict__ T, float *__restrict__ Tn, unsigned n, float k)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned j = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned l = blockIdx.z * blockDim.z + threadIdx.z;
    if (i == 0 || j == 0 || l == 0 || i >= n - 1 || j >= n - 1 || l >= n - 1) return;
    unsigned sy = n, sz = n * n;
    unsigned c = l * sz + j * sy + i;
    Tn[c] = T[c] + k * (T[c - 1] + T[c + 1] + T[c - sy] + T[c + sy] + T[c - sz] + T[c + sz] - 6.0f * T[c]);
}
