// The tutorial shared-memory matmul: a template over the tile, one output per thread of a
// TILE x TILE block, A and B staged tile by tile through shared memory (K a multiple of TILE),
// the store guarded.
template <int TILE>
__global__ void matmul_shared(const float *A, const float *B, float *C, int M, int N, int K)
{
    static_assert(TILE == 16, "rewritten for TILE = 16");
    // 64x64 tile of C per block, 4x4 per thread; K in slabs of 16.
    // A's slab is stored k-major and padded by 4 (float4 fragment reads stay aligned); global
    // loads are float4 along the contiguous direction when the leading dimension is a multiple
    // of 4 and the base is 16-byte aligned, else element by element; out-of-range ones read 0.
    __shared__ __align__(16) float As_rg[1][16][64 + 4];
    __shared__ __align__(16) float Bs_rg[1][16][64 + 4];
    const int tid_rg = threadIdx.y * 16 + threadIdx.x;
    const int tile_row_rg = blockIdx.y * 64;
    const int tile_col_rg = blockIdx.x * 64;
    const bool a_vec_rg = ((K) & 3) == 0 && (reinterpret_cast<unsigned long long>(A) & 15) == 0;
    const bool b_vec_rg = ((N) & 3) == 0 && (reinterpret_cast<unsigned long long>(B) & 15) == 0;
    float acc_rg[4][4];
    float4 a_pre_rg[1], b_pre_rg[1];
#pragma unroll
    for (int i_rg = 0; i_rg < 4; i_rg++)
#pragma unroll
        for (int j_rg = 0; j_rg < 4; j_rg++)
            acc_rg[i_rg][j_rg] = 0.0f;
    const int buf_rg = 0;
    for (int k0_rg = 0; k0_rg < (K / 16) * 16; k0_rg += 16) {
#pragma unroll
        for (int u_rg = 0; u_rg < 1; u_rg++) {
            const int e_rg = tid_rg + u_rg * 256;
            const int r_rg = e_rg / 4, c_rg = (e_rg % 4) * 4;
            {
                const int gr_rg = tile_row_rg + r_rg, gc_rg = (k0_rg) + c_rg;
                float4 q_rg = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (a_vec_rg && gr_rg < M && gc_rg + 3 < (K / 16) * 16) {
                    q_rg = *reinterpret_cast<const float4 *>(&A[(long long)(gr_rg) * (K) + (long long)(gc_rg)]);
                } else if (gr_rg < M) {
                    if (gc_rg < (K / 16) * 16) q_rg.x = A[(long long)(gr_rg) * (K) + (long long)(gc_rg)];
                    if (gc_rg + 1 < (K / 16) * 16) q_rg.y = A[(long long)(gr_rg) * (K) + (long long)(gc_rg + 1)];
                    if (gc_rg + 2 < (K / 16) * 16) q_rg.z = A[(long long)(gr_rg) * (K) + (long long)(gc_rg + 2)];
                    if (gc_rg + 3 < (K / 16) * 16) q_rg.w = A[(long long)(gr_rg) * (K) + (long long)(gc_rg + 3)];
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
                if (b_vec_rg && gc_rg < (K / 16) * 16 && gr_rg + 3 < N) {
                    q_rg = *reinterpret_cast<const float4 *>(&B[(long long)(gr_rg) + (long long)(gc_rg) * (N)]);
                } else if (gc_rg < (K / 16) * 16) {
                    if (gr_rg < N) q_rg.x = B[(long long)(gr_rg) + (long long)(gc_rg) * (N)];
                    if (gr_rg + 1 < N) q_rg.y = B[(long long)(gr_rg + 1) + (long long)(gc_rg) * (N)];
                    if (gr_rg + 2 < N) q_rg.z = B[(long long)(gr_rg + 2) + (long long)(gc_rg) * (N)];
                    if (gr_rg + 3 < N) q_rg.w = B[(long long)(gr_rg + 3) + (long long)(gc_rg) * (N)];
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
            const int row = tile_row_rg + threadIdx.y * 4 + (i_rg & 3) + (i_rg >> 2) * 64; const int col = tile_col_rg + threadIdx.x * 4 + (j_rg & 3) + (j_rg >> 2) * 64; 
            if (row < M && col < N) {
                C[row * N + col] = acc_rg[i_rg][j_rg];
            }
        }
    }
}

template __global__ void matmul_shared<16>(const float *, const float *, float *, int, int, int);
