// c = a + b over n floats, one element per thread, block size picked by habit.
#include <cuda_runtime.h>

__global__ void vector_add(const float *a, const float *b, float *c, int n)
{
    // 4 consecutive points per thread: one 16-byte vector per streamed array when all
    // 4 are in range and every address is aligned, else point by point.
    struct __align__(4 * sizeof(float)) vec_float_rg { float v[4]; };
    const long long first_rg = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    bool vector_rg = first_rg >= (long long)(0) && first_rg + 3 < (long long)(n);
    if (vector_rg) {
        int i = (int)first_rg; 
        vector_rg = (i < n) && (reinterpret_cast<unsigned long long>(&a[i]) % sizeof(vec_float_rg)) == 0 && (reinterpret_cast<unsigned long long>(&b[i]) % sizeof(vec_float_rg)) == 0 && (reinterpret_cast<unsigned long long>(&c[i]) % sizeof(vec_float_rg)) == 0;
    }
    if (vector_rg) {
        vec_float_rg a_v_rg;
        vec_float_rg b_v_rg;
        vec_float_rg c_v_rg;
        {
        int i = (int)first_rg; 
        a_v_rg = *reinterpret_cast<const vec_float_rg *>(&a[i]);
        b_v_rg = *reinterpret_cast<const vec_float_rg *>(&b[i]);
        }
#pragma unroll
        for (int lane_rg = 0; lane_rg < 4; lane_rg++) {
            int i = (int)(first_rg + lane_rg); 
            c_v_rg.v[lane_rg] = a_v_rg.v[lane_rg] + b_v_rg.v[lane_rg];
        }
        int i = (int)first_rg; 
        *reinterpret_cast<vec_float_rg *>(&c[i]) = c_v_rg;
    } else {
#pragma unroll
        for (int lane_rg = 0; lane_rg < 4; lane_rg++) {
            int i = (int)(first_rg + lane_rg); 
            if (i < n) {
                c[i] = a[i] + b[i];
            }
        }
    }
}

void launch_vector_add(const float *a, const float *b, float *c, int n)
{
    vector_add<<<(n + 63) / 64, 64>>>(a, b, c, n);
}
