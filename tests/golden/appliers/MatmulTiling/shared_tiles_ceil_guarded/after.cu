// The shared-memory matmul for any sizes: ceil(K / TILE) tiles, each load guarded by the
// matrix's bounds (zeros outside), the store guarded; the tile a macro.
#define TILE_W 16

__global__ void matmul_any(const float *a, const float *b, float *c, int m, int n, int k)
{
    // 64x64 tile of c per block, 4x4 per thread; K in slabs of 16.
    // A's slab is stored k-major and padded by 4 (float4 fragment reads stay aligned); global
    // loads are float4 along the contiguous direction when the leading dimension is a multiple
    // of 4 and the base is 16-byte aligned, else element by element; out-of-range ones read 0.
    __shared__ __align__(16) float As_rg[1][16][64 + 4];
    __shared__ __align__(16) float Bs_rg[1][16][64 + 4];
    const int tid_rg = threadIdx.y * 16 + threadIdx.x;
    const int tile_row_rg = blockIdx.y * 64;
    const int tile_col_rg = blockIdx.x * 64;
    const bool a_vec_rg = ((k) & 3) == 0 && (reinterpret_cast<unsigned long long>(a) & 15) == 0;
    const bool b_vec_rg = ((n) & 3) == 0 && (reinterpret_cast<unsigned long long>(b) & 15) == 0;
    float acc_rg[4][4];
    float4 a_pre_rg[1], b_pre_rg[1];
#pragma unroll
    for (int i_rg = 0; i_rg < 4; i_rg++)
#pragma unroll
        for (int j_rg = 0; j_rg < 4; j_rg++)
            acc_rg[i_rg][j_rg] = 0.0f;
    const int buf_rg = 0;
    for (int k0_rg = 0; k0_rg < k; k0_rg += 16) {
#pragma unroll
        for (int u_rg = 0; u_rg < 1; u_rg++) {
            const int e_rg = tid_rg + u_rg * 256;
            const int r_rg = e_rg / 4, c_rg = (e_rg % 4) * 4;
            {
                const int gr_rg = tile_row_rg + r_rg, gc_rg = (k0_rg) + c_rg;
                float4 q_rg = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (a_vec_rg && gr_rg < m && gc_rg + 3 < k) {
                    q_rg = *reinterpret_cast<const float4 *>(&a[(long long)(gr_rg) * (k) + (long long)(gc_rg)]);
                } else if (gr_rg < m) {
                    if (gc_rg < k) q_rg.x = a[(long long)(gr_rg) * (k) + (long long)(gc_rg)];
                    if (gc_rg + 1 < k) q_rg.y = a[(long long)(gr_rg) * (k) + (long long)(gc_rg + 1)];
                    if (gc_rg + 2 < k) q_rg.z = a[(long long)(gr_rg) * (k) + (long long)(gc_rg + 2)];
                    if (gc_rg + 3 < k) q_rg.w = a[(long long)(gr_rg) * (k) + (long long)(gc_rg + 3)];
                }
                a_pre_rg[u_rg] = q_rg;
            }
        }
#pragma unroll
        for (int u_rg = 0; u_rg < 1; u_rg++) {
            const int e_rg = tid_rg + u_rg * 256;
            const int r_rg = e_rg / 4, c_rg = (e_rg % 4) * 4;
            { As_rg[0][c_rg][r_rg] = a_pre_rg[u_rg].x; As_rg[0][c_rg + 1][r_rg] = a_pre_rg[u_rg].y; As_rg[0][c_rg + 2][r_rg] = a_pre_rg[u_rg].z; As_rg[0][c_rg + 3][r_rg] = a_pre_rg[u_rg].w; }
        }
#pragma unroll
        for (int u_rg = 0; u_rg < 1; u_rg++) {
            const int e_rg = tid_rg + u_rg * 256;
            const int c_rg = e_rg / 16, r_rg = (e_rg % 16) * 4;
            {
                const int gr_rg = tile_col_rg + r_rg, gc_rg = (k0_rg) + c_rg;
                float4 q_rg = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (b_vec_rg && gc_rg < k && gr_rg + 3 < n) {
                    q_rg = *reinterpret_cast<const float4 *>(&b[(long long)(gr_rg) + (long long)(gc_rg) * (n)]);
                } else if (gc_rg < k) {
                    if (gr_rg < n) q_rg.x = b[(long long)(gr_rg) + (long long)(gc_rg) * (n)];
                    if (gr_rg + 1 < n) q_rg.y = b[(long long)(gr_rg + 1) + (long long)(gc_rg) * (n)];
                    if (gr_rg + 2 < n) q_rg.z = b[(long long)(gr_rg + 2) + (long long)(gc_rg) * (n)];
                    if (gr_rg + 3 < n) q_rg.w = b[(long long)(gr_rg + 3) + (long long)(gc_rg) * (n)];
                }
                b_pre_rg[u_rg] = q_rg;
            }
        }
#pragma unroll
        for (int u_rg = 0; u_rg < 1; u_rg++) {
            const int e_rg = tid_rg + u_rg * 256;
            const int c_rg = e_rg / 16, r_rg = (e_rg % 16) * 4;
            *reinterpret_cast<float4 *>(&Bs_rg[0][c_rg][r_rg]) = b_pre_rg[u_rg];
        }
        __syncthreads();
#pragma unroll
        for (int kk_rg = 0; kk_rg < 16; kk_rg++) {
            float a_frag_rg[4], b_frag_rg[4];
            *reinterpret_cast<float4 *>(&a_frag_rg[0]) = *reinterpret_cast<const float4 *>(&As_rg[buf_rg][kk_rg][threadIdx.y * 4 + 0]);
            *reinterpret_cast<float4 *>(&b_frag_rg[0]) = *reinterpret_cast<const float4 *>(&Bs_rg[buf_rg][kk_rg][threadIdx.x * 4 + 0]);
#pragma unroll
            for (int i_rg = 0; i_rg < 4; i_rg++)
#pragma unroll
                for (int j_rg = 0; j_rg < 4; j_rg++)
                    acc_rg[i_rg][j_rg] += a_frag_rg[i_rg] * b_frag_rg[j_rg];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i_rg = 0; i_rg < 4; i_rg++) {
#pragma unroll
        for (int j_rg = 0; j_rg < 4; j_rg++) {
            int row = tile_row_rg + threadIdx.y * 4 + (i_rg & 3) + (i_rg >> 2) * 64; int col = tile_col_rg + threadIdx.x * 4 + (j_rg & 3) + (j_rg >> 2) * 64; 
            if (row < m && col < n) {
                c[row * n + col] = acc_rg[i_rg][j_rg];
            }
        }
    }
}
