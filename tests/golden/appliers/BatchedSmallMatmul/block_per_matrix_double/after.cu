// applier: BatchedSmallMatmul
// One block per matrix, threadIdx.y = row, threadIdx.x = column, block (N, M); no guard.
__global__ void block_gemm(const double *A, const double *B, double *C, int M, int N, int K)
{
    // Batched (M)x(N)x(K) products, a group of matrices per block: the group's A and B
    // are staged in shared memory (row pitch k+1 and n+1: no bank conflicts either way), each
    // thread computes 2x4 outputs (rows i0 + q * mr, columns j0 + p * nc: consecutive
    // threads on consecutive columns).
    const int m_bg = (M), n_bg = (N), k_bg = (K);
    const int rows_bg = 2, cols_bg = 4;
    const int mr_bg = (m_bg + rows_bg - 1) / rows_bg, nc_bg = (n_bg + cols_bg - 1) / cols_bg;
    const int per_bg = m_bg * (k_bg + 1) + k_bg * (n_bg + 1);
    const int fit_bg = 4096 / per_bg;
    const int want_bg = 1;
    const int group_bg = fit_bg < want_bg ? fit_bg : want_bg;
    const int threads_bg = (int)(blockDim.x * blockDim.y * blockDim.z), tid_bg = (int)((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x);
    const long long batch_bg = gridDim.x;
    __shared__ __align__(16) double tiles_bg[4096];
    if (group_bg == 0) {  // a matrix larger than the shared budget: straight from global memory
        for (long long o_bg = (long long)blockIdx.x * threads_bg + tid_bg; o_bg < batch_bg * m_bg * n_bg;
             o_bg += (long long)gridDim.x * threads_bg) {
            const long long b_bg = o_bg / (m_bg * n_bg);
            const int i_bg = (int)(o_bg / n_bg % m_bg), j_bg = (int)(o_bg % n_bg);
            double sum_bg = 0;
            for (int kk_bg = 0; kk_bg < k_bg; kk_bg++)
                sum_bg += A[(K*M*b_bg) + (K) * i_bg + (1) * kk_bg] * B[(K*N*b_bg) + (1) * j_bg + (N) * kk_bg];
            C[(M*N*b_bg) + (N) * i_bg + (1) * j_bg] = sum_bg;
        }
        return;
    }
    double *const as_bg = tiles_bg;
    double *const bs_bg = tiles_bg + group_bg * m_bg * (k_bg + 1);
    for (long long g_bg = (long long)blockIdx.x * group_bg; g_bg < batch_bg; g_bg += (long long)gridDim.x * group_bg) {
        const int count_bg = (int)(batch_bg - g_bg < group_bg ? batch_bg - g_bg : group_bg);

        {  // the group's A is one contiguous run: double2 loads when it is aligned
            const double *const run_bg = A + g_bg * (K*M);
            const int total_bg = count_bg * m_bg * k_bg;
            auto put_bg = [&](int e_bg, double value_bg) {
                const int l_bg = e_bg / (m_bg * k_bg), r_bg = e_bg % (m_bg * k_bg);
                const int i_bg = r_bg / k_bg, kk_bg = r_bg % k_bg;
                as_bg[(l_bg * m_bg + i_bg) * (k_bg + 1) + kk_bg] = value_bg;
            };
            int e0_bg = 0;
            if ((reinterpret_cast<unsigned long long>(run_bg) & 15) == 0) {
#pragma unroll 4
                for (int v_bg = tid_bg; v_bg < total_bg / 2; v_bg += threads_bg) {
                    const double2 q_bg = reinterpret_cast<const double2 *>(run_bg)[v_bg];
                    put_bg(v_bg * 2 + 0, q_bg.x);
                    put_bg(v_bg * 2 + 1, q_bg.y);
                }
                e0_bg = total_bg / 2 * 2;
            }
            for (int e_bg = e0_bg + tid_bg; e_bg < total_bg; e_bg += threads_bg)
                put_bg(e_bg, run_bg[e_bg]);
        }
        {  // the group's B is one contiguous run: double2 loads when it is aligned
            const double *const run_bg = B + g_bg * (K*N);
            const int total_bg = count_bg * n_bg * k_bg;
            auto put_bg = [&](int e_bg, double value_bg) {
                const int l_bg = e_bg / (n_bg * k_bg), r_bg = e_bg % (n_bg * k_bg);
                const int kk_bg = r_bg / n_bg, j_bg = r_bg % n_bg;
                bs_bg[(l_bg * k_bg + kk_bg) * (n_bg + 1) + j_bg] = value_bg;
            };
            int e0_bg = 0;
            if ((reinterpret_cast<unsigned long long>(run_bg) & 15) == 0) {
#pragma unroll 4
                for (int v_bg = tid_bg; v_bg < total_bg / 2; v_bg += threads_bg) {
                    const double2 q_bg = reinterpret_cast<const double2 *>(run_bg)[v_bg];
                    put_bg(v_bg * 2 + 0, q_bg.x);
                    put_bg(v_bg * 2 + 1, q_bg.y);
                }
                e0_bg = total_bg / 2 * 2;
            }
            for (int e_bg = e0_bg + tid_bg; e_bg < total_bg; e_bg += threads_bg)
                put_bg(e_bg, run_bg[e_bg]);
        }        __syncthreads();
        for (int e_bg = tid_bg; e_bg < count_bg * mr_bg * nc_bg; e_bg += threads_bg) {
            const int l_bg = e_bg / (mr_bg * nc_bg), r_bg = e_bg % (mr_bg * nc_bg);
            const int i0_bg = r_bg / nc_bg, j0_bg = r_bg % nc_bg;
            const double *const arow_bg = as_bg + (l_bg * m_bg) * (k_bg + 1);
            const double *const bcol_bg = bs_bg + (l_bg * k_bg) * (n_bg + 1);
            double acc_bg[rows_bg][cols_bg];
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
                double av_bg[rows_bg], bv_bg[cols_bg];
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
                        C[(M*N*b_bg) + (N) * i_bg + (1) * j_bg] = acc_bg[q_bg][p_bg];
                }
            }
        }
        __syncthreads();  // the tiles are refilled for the next group
    }
}
