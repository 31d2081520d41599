// applier: ParallelScan
// A templated serial scan, instantiated for float.
template <typename T>
__global__ void serial_scan(const T *in, T *out, int n)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        T s = T(0);
        for (int i = 0; i < n; ++i) {
            s += in[i];
            out[i] = s;
        }
    }
}

template __global__ void serial_scan<float>(const float *, float *, int);
