// Batched C[b] = At[b]^T * B[b] + beta * C[b], the left operand stored transposed (K x M per
// matrix), on a 2-D grid of 2-D blocks per matrix with the batch along grid z.
#include <cuda_runtime.h>

__global__ void bmm_tn_beta(const float *At, const float *B, float *C, float beta, int batch, int M, int N, int K)
{
    // Batched (M)x(N)x(K) products, a group of matrices per block: the group's A and B
    // are staged in shared memory (row pitch k+1 and n+1: no bank conflicts either way), each
    // thread computes 4x1 outputs (rows i0 + q * mr, columns j0 + p * nc: consecutive
    // threads on consecutive columns).
    const int m_bg = (M), n_bg = (N), k_bg = (K);
    const int rows_bg = 4, cols_bg = 1;
    const int mr_bg = (m_bg + rows_bg - 1) / rows_bg, nc_bg = (n_bg + cols_bg - 1) / cols_bg;
    const int per_bg = m_bg * (k_bg + 1) + k_bg * (n_bg + 1);
    const int fit_bg = 4192 / per_bg;
    const int want_bg = (256 * rows_bg * cols_bg + m_bg * n_bg - 1) / (m_bg * n_bg);
    const int group_bg = fit_bg < want_bg ? fit_bg : want_bg;
    const long long batch_bg = (batch);
    __shared__ __align__(16) float tiles_bg[4192];
    if (group_bg == 0) {  // a matrix larger than the shared budget: straight from global memory
        for (long long o_bg = (long long)blockIdx.x * blockDim.x + threadIdx.x; o_bg < batch_bg * m_bg * n_bg;
             o_bg += (long long)gridDim.x * blockDim.x) {
            const long long b_bg = o_bg / (m_bg * n_bg);
            const int i_bg = (int)(o_bg / n_bg % m_bg), j_bg = (int)(o_bg % n_bg);
            float sum_bg = 0;
            for (int kk_bg = 0; kk_bg < k_bg; kk_bg++)
                sum_bg += At[(K*M*b_bg) + (1) * i_bg + (M) * kk_bg] * B[(K*N*b_bg) + (1) * j_bg + (N) * kk_bg];
            C[(M*N*b_bg) + (N) * i_bg + (1) * j_bg] = sum_bg + beta * C[(M*N*b_bg) + (N) * i_bg + (1) * j_bg];
        }
        return;
    }
    float *const as_bg = tiles_bg;
    float *const bs_bg = tiles_bg + group_bg * m_bg * (k_bg + 1);
    for (long long g_bg = (long long)blockIdx.x * group_bg; g_bg < batch_bg; g_bg += (long long)gridDim.x * group_bg) {
        const int count_bg = (int)(batch_bg - g_bg < group_bg ? batch_bg - g_bg : group_bg);

        {  // the group's At is one contiguous run: float4 loads when it is aligned
            const float *const run_bg = At + g_bg * (K*M);
            const int total_bg = count_bg * m_bg * k_bg;
            auto put_bg = [&](int e_bg, float value_bg) {
                const int l_bg = e_bg / (m_bg * k_bg), r_bg = e_bg % (m_bg * k_bg);
                const int kk_bg = r_bg / m_bg, i_bg = r_bg % m_bg;
                as_bg[(l_bg * m_bg + i_bg) * (k_bg + 1) + kk_bg] = value_bg;
            };
            int e0_bg = 0;
            if ((reinterpret_cast<unsigned long long>(run_bg) & 15) == 0) {
#pragma unroll 4
                for (int v_bg = threadIdx.x; v_bg < total_bg / 4; v_bg += 256) {
                    const float4 q_bg = reinterpret_cast<const float4 *>(run_bg)[v_bg];
                    put_bg(v_bg * 4 + 0, q_bg.x);
                    put_bg(v_bg * 4 + 1, q_bg.y);
                    put_bg(v_bg * 4 + 2, q_bg.z);
                    put_bg(v_bg * 4 + 3, q_bg.w);
                }
                e0_bg = total_bg / 4 * 4;
            }
            for (int e_bg = e0_bg + threadIdx.x; e_bg < total_bg; e_bg += 256)
                put_bg(e_bg, run_bg[e_bg]);
        }
        {  // the group's B is one contiguous run: float4 loads when it is aligned
            const float *const run_bg = B + g_bg * (K*N);
            const int total_bg = count_bg * n_bg * k_bg;
            auto put_bg = [&](int e_bg, float value_bg) {
                const int l_bg = e_bg / (n_bg * k_bg), r_bg = e_bg % (n_bg * k_bg);
                const int kk_bg = r_bg / n_bg, j_bg = r_bg % n_bg;
                bs_bg[(l_bg * k_bg + kk_bg) * (n_bg + 1) + j_bg] = value_bg;
            };
            int e0_bg = 0;
            if ((reinterpret_cast<unsigned long long>(run_bg) & 15) == 0) {
#pragma unroll 4
                for (int v_bg = threadIdx.x; v_bg < total_bg / 4; v_bg += 256) {
                    const float4 q_bg = reinterpret_cast<const float4 *>(run_bg)[v_bg];
                    put_bg(v_bg * 4 + 0, q_bg.x);
                    put_bg(v_bg * 4 + 1, q_bg.y);
                    put_bg(v_bg * 4 + 2, q_bg.z);
                    put_bg(v_bg * 4 + 3, q_bg.w);
                }
                e0_bg = total_bg / 4 * 4;
            }
            for (int e_bg = e0_bg + threadIdx.x; e_bg < total_bg; e_bg += 256)
                put_bg(e_bg, run_bg[e_bg]);
        }        __syncthreads();
        for (int e_bg = threadIdx.x; e_bg < count_bg * mr_bg * nc_bg; e_bg += 256) {
            const int l_bg = e_bg / (mr_bg * nc_bg), r_bg = e_bg % (mr_bg * nc_bg);
            const int i0_bg = r_bg / nc_bg, j0_bg = r_bg % nc_bg;
            const float *const arow_bg = as_bg + (l_bg * m_bg) * (k_bg + 1);
            const float *const bcol_bg = bs_bg + (l_bg * k_bg) * (n_bg + 1);
            float acc_bg[rows_bg][cols_bg];
            int at_bg[rows_bg], bt_bg[cols_bg];
#pragma unroll
            for (int q_bg = 0; q_bg < rows_bg; q_bg++) {
                const int row_bg = i0_bg + q_bg * mr_bg;
                at_bg[q_bg] = (row_bg < m_bg ? row_bg : m_bg - 1) * (k_bg + 1);  // past the last row: re-read it, never store it
#pragma unroll
                for (int p_bg = 0; p_bg < cols_bg; p_bg++)
                    acc_bg[q_bg][p_bg] = 0;
            }
#pragma unroll
            for (int p_bg = 0; p_bg < cols_bg; p_bg++) {
                const int col_bg = j0_bg + p_bg * nc_bg;
                bt_bg[p_bg] = col_bg < n_bg ? col_bg : n_bg - 1;
            }
#pragma unroll 4
            for (int kk_bg = 0; kk_bg < k_bg; kk_bg++) {
                float av_bg[rows_bg], bv_bg[cols_bg];
#pragma unroll
                for (int q_bg = 0; q_bg < rows_bg; q_bg++)
                    av_bg[q_bg] = arow_bg[at_bg[q_bg] + kk_bg];
#pragma unroll
                for (int p_bg = 0; p_bg < cols_bg; p_bg++)
                    bv_bg[p_bg] = bcol_bg[kk_bg * (n_bg + 1) + bt_bg[p_bg]];
#pragma unroll
                for (int q_bg = 0; q_bg < rows_bg; q_bg++)
#pragma unroll
                    for (int p_bg = 0; p_bg < cols_bg; p_bg++)
                        acc_bg[q_bg][p_bg] += av_bg[q_bg] * bv_bg[p_bg];
            }
            const long long b_bg = g_bg + l_bg;  // 64-bit: batch offsets may pass 2^31
#pragma unroll
            for (int q_bg = 0; q_bg < rows_bg; q_bg++) {
#pragma unroll
                for (int p_bg = 0; p_bg < cols_bg; p_bg++) {
                    const int i_bg = i0_bg + q_bg * mr_bg, j_bg = j0_bg + p_bg * nc_bg;
                    if (i_bg < m_bg && j_bg < n_bg)
                        C[(M*N*b_bg) + (N) * i_bg + (1) * j_bg] = acc_bg[q_bg][p_bg] + beta * C[(M*N*b_bg) + (N) * i_bg + (1) * j_bg];
                }
            }
        }
        __syncthreads();  // the tiles are refilled for the next group
    }
}
