// out = x * scale + bias (a per-tensor affine), with a double literal slipped in.
#include <cuda_runtime.h>

__global__ void scale_bias(float *out, float *x, float scale, float bias, int n)
{
    // 4 consecutive points per thread: one 16-byte vector per streamed array when all
    // 4 are in range and every address is aligned, else point by point.
    struct __align__(4 * sizeof(float)) vec_float_rg { float v[4]; };
    const long long first_rg = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    bool vector_rg = first_rg >= (long long)(0) && first_rg + 3 < (long long)(n);
    if (vector_rg) {
        int i = (int)first_rg; 
        vector_rg = (!(i >= n)) && (reinterpret_cast<unsigned long long>(&out[i]) % sizeof(vec_float_rg)) == 0 && (reinterpret_cast<unsigned long long>(&x[i]) % sizeof(vec_float_rg)) == 0;
    }
    if (vector_rg) {
        vec_float_rg out_v_rg;
        vec_float_rg x_v_rg;
        {
        int i = (int)first_rg; 
        x_v_rg = *reinterpret_cast<const vec_float_rg *>(&x[i]);
        }
#pragma unroll
        for (int lane_rg = 0; lane_rg < 4; lane_rg++) {
            int i = (int)(first_rg + lane_rg); 
            out_v_rg.v[lane_rg] = x_v_rg.v[lane_rg] * scale + bias * 1.0;
        }
        int i = (int)first_rg; 
        *reinterpret_cast<vec_float_rg *>(&out[i]) = out_v_rg;
    } else {
#pragma unroll
        for (int lane_rg = 0; lane_rg < 4; lane_rg++) {
            int i = (int)(first_rg + lane_rg); 
            if (!(i >= n)) {
                out[i] = x[i] * scale + bias * 1.0;
            }
        }
    }
}

void launch_scale_bias(float *out, float *x, float scale, float bias, int n)
{
    scale_bias<<<(n + 127) / 128, 128>>>(out, x, scale, bias, n);
}
