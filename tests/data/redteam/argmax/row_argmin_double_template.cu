// Row argmin of a double matrix, template, value and index both stored.
// applier: GroupPerRow
template <typename T>
__global__ void argmin_rows(const T *a, T *minval, long long *minidx, int n, int m)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) {
        T v = a[(size_t)i * m];
        long long at = 0;
        for (int j = 1; j < m; j++) {
            T e = a[(size_t)i * m + j];
            if (e < v) { v = e; at = j; }
        }
        minval[i] = v;
        minidx[i] = at;
    }
}

// instantiated here: host code would do it with its launch
template __global__ void argmin_rows<double>(const double *, double *, long long *, int, int);
