// C = A * B for a CSR matrix A and a dense row-major B with n_dense columns: a 2-D launch, one
// thread per element of C.
#include <cuda_runtime.h>

__global__ void csr_spmm(const int *indptr, const int *indices, const float *data, const float *B, float *C,
                         int n_rows, int n_cols, int n_dense)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n_rows || j >= n_dense)
        return;
    float acc = 0.f;
    for (int p = indptr[i]; p < indptr[i + 1]; ++p)
        acc += data[p] * B[indices[p] * n_dense + j];
    C[i * n_dense + j] = acc;
}
