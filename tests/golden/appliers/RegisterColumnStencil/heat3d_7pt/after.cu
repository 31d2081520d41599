// applier: RegisterColumnStencil or HaloTiledStencil
// 7-point heat step on a 3-D launch, interior only, float.
__global__ void heat3d(const float *__restrict__ T, float *__restrict__ Tn, int nx, int ny, int nz, float alpha)
{
    // 8 points per thread down k; each element of their neighbourhood is loaded once, into registers, where the kernel reads it.
    const int t0_rg = blockIdx.x * 64 + threadIdx.x;
    const int t1_rg = blockIdx.y * 4 + threadIdx.y;
    for (int brow_rg = blockIdx.z; brow_rg < (nz - 1 + 7) / 8; brow_rg += gridDim.z) {
        const int k0_rg = brow_rg * 8;
        float win_rg[10][3][3];
        win_rg[0][1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + -1) >= (0 + 1) + (-1) && (k0_rg + -1) < (nz - 1) + (-1))) ? __ldg(&T[nx*ny * (k0_rg + -1) + nx * t1_rg + t0_rg]) : (float)0;
        win_rg[1][1][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && k0_rg >= (0 + 1) + (0) && k0_rg < (nz - 1) + (0))) ? __ldg(&T[nx*ny * k0_rg + nx * t1_rg + (t0_rg + -1)]) : (float)0;
        win_rg[1][0][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + -1) >= (0 + 1) + (-1) && (t1_rg + -1) < (ny - 1) + (-1) && k0_rg >= (0 + 1) + (0) && k0_rg < (nz - 1) + (0))) ? __ldg(&T[nx*ny * k0_rg + nx * (t1_rg + -1) + t0_rg]) : (float)0;
        win_rg[1][1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && k0_rg >= (0 + 1) + (0) && k0_rg < (nz - 1) + (0)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && k0_rg >= (0 + 1) + (-1) && k0_rg < (nz - 1) + (-1))) ? __ldg(&T[nx*ny * k0_rg + nx * t1_rg + t0_rg]) : (float)0;
        win_rg[1][2][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + 1) >= (0 + 1) + (1) && (t1_rg + 1) < (ny - 1) + (1) && k0_rg >= (0 + 1) + (0) && k0_rg < (nz - 1) + (0))) ? __ldg(&T[nx*ny * k0_rg + nx * (t1_rg + 1) + t0_rg]) : (float)0;
        win_rg[1][1][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && k0_rg >= (0 + 1) + (0) && k0_rg < (nz - 1) + (0))) ? __ldg(&T[nx*ny * k0_rg + nx * t1_rg + (t0_rg + 1)]) : (float)0;
        win_rg[2][1][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 1) >= (0 + 1) + (0) && (k0_rg + 1) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 1) + nx * t1_rg + (t0_rg + -1)]) : (float)0;
        win_rg[2][0][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + -1) >= (0 + 1) + (-1) && (t1_rg + -1) < (ny - 1) + (-1) && (k0_rg + 1) >= (0 + 1) + (0) && (k0_rg + 1) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 1) + nx * (t1_rg + -1) + t0_rg]) : (float)0;
        win_rg[2][1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 1) >= (0 + 1) + (0) && (k0_rg + 1) < (nz - 1) + (0)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 1) >= (0 + 1) + (-1) && (k0_rg + 1) < (nz - 1) + (-1)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 1) >= (0 + 1) + (1) && (k0_rg + 1) < (nz - 1) + (1))) ? __ldg(&T[nx*ny * (k0_rg + 1) + nx * t1_rg + t0_rg]) : (float)0;
        win_rg[2][2][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + 1) >= (0 + 1) + (1) && (t1_rg + 1) < (ny - 1) + (1) && (k0_rg + 1) >= (0 + 1) + (0) && (k0_rg + 1) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 1) + nx * (t1_rg + 1) + t0_rg]) : (float)0;
        win_rg[2][1][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 1) >= (0 + 1) + (0) && (k0_rg + 1) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 1) + nx * t1_rg + (t0_rg + 1)]) : (float)0;
        {  // point 0
            int k = k0_rg; int i = t0_rg; int j = t1_rg; int c = (k * ny + j) * nx + i;
            if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
                Tn[c] = win_rg[1][1][1] + alpha * (win_rg[1][1][0] + win_rg[1][1][2] + win_rg[1][0][1] + win_rg[1][2][1] + win_rg[0][1][1] + win_rg[2][1][1] - 6.0f * win_rg[1][1][1]);
            }
        }
        win_rg[3][1][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 2) >= (0 + 1) + (0) && (k0_rg + 2) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 2) + nx * t1_rg + (t0_rg + -1)]) : (float)0;
        win_rg[3][0][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + -1) >= (0 + 1) + (-1) && (t1_rg + -1) < (ny - 1) + (-1) && (k0_rg + 2) >= (0 + 1) + (0) && (k0_rg + 2) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 2) + nx * (t1_rg + -1) + t0_rg]) : (float)0;
        win_rg[3][1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 2) >= (0 + 1) + (0) && (k0_rg + 2) < (nz - 1) + (0)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 2) >= (0 + 1) + (-1) && (k0_rg + 2) < (nz - 1) + (-1)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 2) >= (0 + 1) + (1) && (k0_rg + 2) < (nz - 1) + (1))) ? __ldg(&T[nx*ny * (k0_rg + 2) + nx * t1_rg + t0_rg]) : (float)0;
        win_rg[3][2][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + 1) >= (0 + 1) + (1) && (t1_rg + 1) < (ny - 1) + (1) && (k0_rg + 2) >= (0 + 1) + (0) && (k0_rg + 2) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 2) + nx * (t1_rg + 1) + t0_rg]) : (float)0;
        win_rg[3][1][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 2) >= (0 + 1) + (0) && (k0_rg + 2) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 2) + nx * t1_rg + (t0_rg + 1)]) : (float)0;
        {  // point 1
            int k = k0_rg + 1; int i = t0_rg; int j = t1_rg; int c = (k * ny + j) * nx + i;
            if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
                Tn[c] = win_rg[2][1][1] + alpha * (win_rg[2][1][0] + win_rg[2][1][2] + win_rg[2][0][1] + win_rg[2][2][1] + win_rg[1][1][1] + win_rg[3][1][1] - 6.0f * win_rg[2][1][1]);
            }
        }
        win_rg[4][1][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 3) >= (0 + 1) + (0) && (k0_rg + 3) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 3) + nx * t1_rg + (t0_rg + -1)]) : (float)0;
        win_rg[4][0][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + -1) >= (0 + 1) + (-1) && (t1_rg + -1) < (ny - 1) + (-1) && (k0_rg + 3) >= (0 + 1) + (0) && (k0_rg + 3) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 3) + nx * (t1_rg + -1) + t0_rg]) : (float)0;
        win_rg[4][1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 3) >= (0 + 1) + (0) && (k0_rg + 3) < (nz - 1) + (0)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 3) >= (0 + 1) + (-1) && (k0_rg + 3) < (nz - 1) + (-1)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 3) >= (0 + 1) + (1) && (k0_rg + 3) < (nz - 1) + (1))) ? __ldg(&T[nx*ny * (k0_rg + 3) + nx * t1_rg + t0_rg]) : (float)0;
        win_rg[4][2][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + 1) >= (0 + 1) + (1) && (t1_rg + 1) < (ny - 1) + (1) && (k0_rg + 3) >= (0 + 1) + (0) && (k0_rg + 3) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 3) + nx * (t1_rg + 1) + t0_rg]) : (float)0;
        win_rg[4][1][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 3) >= (0 + 1) + (0) && (k0_rg + 3) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 3) + nx * t1_rg + (t0_rg + 1)]) : (float)0;
        {  // point 2
            int k = k0_rg + 2; int i = t0_rg; int j = t1_rg; int c = (k * ny + j) * nx + i;
            if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
                Tn[c] = win_rg[3][1][1] + alpha * (win_rg[3][1][0] + win_rg[3][1][2] + win_rg[3][0][1] + win_rg[3][2][1] + win_rg[2][1][1] + win_rg[4][1][1] - 6.0f * win_rg[3][1][1]);
            }
        }
        win_rg[5][1][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 4) >= (0 + 1) + (0) && (k0_rg + 4) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 4) + nx * t1_rg + (t0_rg + -1)]) : (float)0;
        win_rg[5][0][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + -1) >= (0 + 1) + (-1) && (t1_rg + -1) < (ny - 1) + (-1) && (k0_rg + 4) >= (0 + 1) + (0) && (k0_rg + 4) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 4) + nx * (t1_rg + -1) + t0_rg]) : (float)0;
        win_rg[5][1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 4) >= (0 + 1) + (0) && (k0_rg + 4) < (nz - 1) + (0)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 4) >= (0 + 1) + (-1) && (k0_rg + 4) < (nz - 1) + (-1)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 4) >= (0 + 1) + (1) && (k0_rg + 4) < (nz - 1) + (1))) ? __ldg(&T[nx*ny * (k0_rg + 4) + nx * t1_rg + t0_rg]) : (float)0;
        win_rg[5][2][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + 1) >= (0 + 1) + (1) && (t1_rg + 1) < (ny - 1) + (1) && (k0_rg + 4) >= (0 + 1) + (0) && (k0_rg + 4) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 4) + nx * (t1_rg + 1) + t0_rg]) : (float)0;
        win_rg[5][1][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 4) >= (0 + 1) + (0) && (k0_rg + 4) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 4) + nx * t1_rg + (t0_rg + 1)]) : (float)0;
        {  // point 3
            int k = k0_rg + 3; int i = t0_rg; int j = t1_rg; int c = (k * ny + j) * nx + i;
            if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
                Tn[c] = win_rg[4][1][1] + alpha * (win_rg[4][1][0] + win_rg[4][1][2] + win_rg[4][0][1] + win_rg[4][2][1] + win_rg[3][1][1] + win_rg[5][1][1] - 6.0f * win_rg[4][1][1]);
            }
        }
        win_rg[6][1][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 5) >= (0 + 1) + (0) && (k0_rg + 5) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 5) + nx * t1_rg + (t0_rg + -1)]) : (float)0;
        win_rg[6][0][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + -1) >= (0 + 1) + (-1) && (t1_rg + -1) < (ny - 1) + (-1) && (k0_rg + 5) >= (0 + 1) + (0) && (k0_rg + 5) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 5) + nx * (t1_rg + -1) + t0_rg]) : (float)0;
        win_rg[6][1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 5) >= (0 + 1) + (0) && (k0_rg + 5) < (nz - 1) + (0)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 5) >= (0 + 1) + (-1) && (k0_rg + 5) < (nz - 1) + (-1)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 5) >= (0 + 1) + (1) && (k0_rg + 5) < (nz - 1) + (1))) ? __ldg(&T[nx*ny * (k0_rg + 5) + nx * t1_rg + t0_rg]) : (float)0;
        win_rg[6][2][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + 1) >= (0 + 1) + (1) && (t1_rg + 1) < (ny - 1) + (1) && (k0_rg + 5) >= (0 + 1) + (0) && (k0_rg + 5) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 5) + nx * (t1_rg + 1) + t0_rg]) : (float)0;
        win_rg[6][1][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 5) >= (0 + 1) + (0) && (k0_rg + 5) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 5) + nx * t1_rg + (t0_rg + 1)]) : (float)0;
        {  // point 4
            int k = k0_rg + 4; int i = t0_rg; int j = t1_rg; int c = (k * ny + j) * nx + i;
            if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
                Tn[c] = win_rg[5][1][1] + alpha * (win_rg[5][1][0] + win_rg[5][1][2] + win_rg[5][0][1] + win_rg[5][2][1] + win_rg[4][1][1] + win_rg[6][1][1] - 6.0f * win_rg[5][1][1]);
            }
        }
        win_rg[7][1][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 6) >= (0 + 1) + (0) && (k0_rg + 6) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 6) + nx * t1_rg + (t0_rg + -1)]) : (float)0;
        win_rg[7][0][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + -1) >= (0 + 1) + (-1) && (t1_rg + -1) < (ny - 1) + (-1) && (k0_rg + 6) >= (0 + 1) + (0) && (k0_rg + 6) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 6) + nx * (t1_rg + -1) + t0_rg]) : (float)0;
        win_rg[7][1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 6) >= (0 + 1) + (0) && (k0_rg + 6) < (nz - 1) + (0)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 6) >= (0 + 1) + (-1) && (k0_rg + 6) < (nz - 1) + (-1)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 6) >= (0 + 1) + (1) && (k0_rg + 6) < (nz - 1) + (1))) ? __ldg(&T[nx*ny * (k0_rg + 6) + nx * t1_rg + t0_rg]) : (float)0;
        win_rg[7][2][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + 1) >= (0 + 1) + (1) && (t1_rg + 1) < (ny - 1) + (1) && (k0_rg + 6) >= (0 + 1) + (0) && (k0_rg + 6) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 6) + nx * (t1_rg + 1) + t0_rg]) : (float)0;
        win_rg[7][1][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 6) >= (0 + 1) + (0) && (k0_rg + 6) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 6) + nx * t1_rg + (t0_rg + 1)]) : (float)0;
        {  // point 5
            int k = k0_rg + 5; int i = t0_rg; int j = t1_rg; int c = (k * ny + j) * nx + i;
            if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
                Tn[c] = win_rg[6][1][1] + alpha * (win_rg[6][1][0] + win_rg[6][1][2] + win_rg[6][0][1] + win_rg[6][2][1] + win_rg[5][1][1] + win_rg[7][1][1] - 6.0f * win_rg[6][1][1]);
            }
        }
        win_rg[8][1][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 7) >= (0 + 1) + (0) && (k0_rg + 7) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 7) + nx * t1_rg + (t0_rg + -1)]) : (float)0;
        win_rg[8][0][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + -1) >= (0 + 1) + (-1) && (t1_rg + -1) < (ny - 1) + (-1) && (k0_rg + 7) >= (0 + 1) + (0) && (k0_rg + 7) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 7) + nx * (t1_rg + -1) + t0_rg]) : (float)0;
        win_rg[8][1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 7) >= (0 + 1) + (0) && (k0_rg + 7) < (nz - 1) + (0)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 7) >= (0 + 1) + (1) && (k0_rg + 7) < (nz - 1) + (1))) ? __ldg(&T[nx*ny * (k0_rg + 7) + nx * t1_rg + t0_rg]) : (float)0;
        win_rg[8][2][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (t1_rg + 1) >= (0 + 1) + (1) && (t1_rg + 1) < (ny - 1) + (1) && (k0_rg + 7) >= (0 + 1) + (0) && (k0_rg + 7) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 7) + nx * (t1_rg + 1) + t0_rg]) : (float)0;
        win_rg[8][1][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 7) >= (0 + 1) + (0) && (k0_rg + 7) < (nz - 1) + (0))) ? __ldg(&T[nx*ny * (k0_rg + 7) + nx * t1_rg + (t0_rg + 1)]) : (float)0;
        {  // point 6
            int k = k0_rg + 6; int i = t0_rg; int j = t1_rg; int c = (k * ny + j) * nx + i;
            if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
                Tn[c] = win_rg[7][1][1] + alpha * (win_rg[7][1][0] + win_rg[7][1][2] + win_rg[7][0][1] + win_rg[7][2][1] + win_rg[6][1][1] + win_rg[8][1][1] - 6.0f * win_rg[7][1][1]);
            }
        }
        win_rg[9][1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && t1_rg >= (0 + 1) + (0) && t1_rg < (ny - 1) + (0) && (k0_rg + 8) >= (0 + 1) + (1) && (k0_rg + 8) < (nz - 1) + (1))) ? __ldg(&T[nx*ny * (k0_rg + 8) + nx * t1_rg + t0_rg]) : (float)0;
        {  // point 7
            int k = k0_rg + 7; int i = t0_rg; int j = t1_rg; int c = (k * ny + j) * nx + i;
            if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
                Tn[c] = win_rg[8][1][1] + alpha * (win_rg[8][1][0] + win_rg[8][1][2] + win_rg[8][0][1] + win_rg[8][2][1] + win_rg[7][1][1] + win_rg[9][1][1] - 6.0f * win_rg[8][1][1]);
            }
        }
    }
}
