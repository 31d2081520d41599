// Row minima of an int matrix, the column loop counting down, min() through a ternary.
// applier: GroupPerRow
#include <climits>

__global__ void row_min_i32(const int *A, int *mins, int M, int N)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < M) {
        int m = INT_MAX;
        for (int j = N - 1; j >= 0; --j) {
            int v = A[i * N + j];
            m = v < m ? v : m;
        }
        mins[i] = m;
    }
}
