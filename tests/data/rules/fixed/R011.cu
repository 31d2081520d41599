#define TILE 32
__global__ void column_read(const float *__restrict__ in, float *__restrict__ out)
{
    __shared__ float tile[TILE][TILE + 1];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * TILE + threadIdx.x];
    __syncthreads();
    out[threadIdx.y * TILE + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
