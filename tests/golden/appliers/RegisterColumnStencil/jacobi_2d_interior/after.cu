// applier: RegisterColumnStencil or HaloTiledStencil
// Course-assignment Jacobi: 2-D launch, x = column, interior only (the boundary is left alone).
__global__ void jacobi(const float *__restrict__ u, float *__restrict__ unew, int nx, int ny)
{
    // 4 points per thread down y; each element of their neighbourhood is loaded once, into registers, where the kernel reads it.
    const int t0_rg = blockIdx.x * 128 + threadIdx.x;
    for (int brow_rg = blockIdx.y; brow_rg < (ny - 1 + 7) / 8; brow_rg += gridDim.y) {
        const int y0_rg = (brow_rg * 2 + threadIdx.y) * 4;
        float win_rg[6][3];
        win_rg[0][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (y0_rg + -1) >= (0 + 1) + (-1) && (y0_rg + -1) < (ny - 1) + (-1))) ? __ldg(&u[nx * (y0_rg + -1) + t0_rg]) : (float)0;
        win_rg[1][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && y0_rg >= (0 + 1) + (0) && y0_rg < (ny - 1) + (0))) ? __ldg(&u[nx * y0_rg + (t0_rg + -1)]) : (float)0;
        win_rg[1][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && y0_rg >= (0 + 1) + (-1) && y0_rg < (ny - 1) + (-1))) ? __ldg(&u[nx * y0_rg + t0_rg]) : (float)0;
        win_rg[1][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && y0_rg >= (0 + 1) + (0) && y0_rg < (ny - 1) + (0))) ? __ldg(&u[nx * y0_rg + (t0_rg + 1)]) : (float)0;
        win_rg[2][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && (y0_rg + 1) >= (0 + 1) + (0) && (y0_rg + 1) < (ny - 1) + (0))) ? __ldg(&u[nx * (y0_rg + 1) + (t0_rg + -1)]) : (float)0;
        win_rg[2][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (y0_rg + 1) >= (0 + 1) + (-1) && (y0_rg + 1) < (ny - 1) + (-1)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (y0_rg + 1) >= (0 + 1) + (1) && (y0_rg + 1) < (ny - 1) + (1))) ? __ldg(&u[nx * (y0_rg + 1) + t0_rg]) : (float)0;
        win_rg[2][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && (y0_rg + 1) >= (0 + 1) + (0) && (y0_rg + 1) < (ny - 1) + (0))) ? __ldg(&u[nx * (y0_rg + 1) + (t0_rg + 1)]) : (float)0;
        {  // point 0
            int y = y0_rg; int x = t0_rg;
            if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
                unew[y * nx + x] = 0.25f * (win_rg[1][0] + win_rg[1][2] +
                win_rg[0][1] + win_rg[2][1]);
            }
        }
        win_rg[3][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && (y0_rg + 2) >= (0 + 1) + (0) && (y0_rg + 2) < (ny - 1) + (0))) ? __ldg(&u[nx * (y0_rg + 2) + (t0_rg + -1)]) : (float)0;
        win_rg[3][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (y0_rg + 2) >= (0 + 1) + (-1) && (y0_rg + 2) < (ny - 1) + (-1)) || (t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (y0_rg + 2) >= (0 + 1) + (1) && (y0_rg + 2) < (ny - 1) + (1))) ? __ldg(&u[nx * (y0_rg + 2) + t0_rg]) : (float)0;
        win_rg[3][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && (y0_rg + 2) >= (0 + 1) + (0) && (y0_rg + 2) < (ny - 1) + (0))) ? __ldg(&u[nx * (y0_rg + 2) + (t0_rg + 1)]) : (float)0;
        {  // point 1
            int y = y0_rg + 1; int x = t0_rg;
            if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
                unew[y * nx + x] = 0.25f * (win_rg[2][0] + win_rg[2][2] +
                win_rg[1][1] + win_rg[3][1]);
            }
        }
        win_rg[4][0] = (((t0_rg + -1) >= (0 + 1) + (-1) && (t0_rg + -1) < (nx - 1) + (-1) && (y0_rg + 3) >= (0 + 1) + (0) && (y0_rg + 3) < (ny - 1) + (0))) ? __ldg(&u[nx * (y0_rg + 3) + (t0_rg + -1)]) : (float)0;
        win_rg[4][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (y0_rg + 3) >= (0 + 1) + (1) && (y0_rg + 3) < (ny - 1) + (1))) ? __ldg(&u[nx * (y0_rg + 3) + t0_rg]) : (float)0;
        win_rg[4][2] = (((t0_rg + 1) >= (0 + 1) + (1) && (t0_rg + 1) < (nx - 1) + (1) && (y0_rg + 3) >= (0 + 1) + (0) && (y0_rg + 3) < (ny - 1) + (0))) ? __ldg(&u[nx * (y0_rg + 3) + (t0_rg + 1)]) : (float)0;
        {  // point 2
            int y = y0_rg + 2; int x = t0_rg;
            if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
                unew[y * nx + x] = 0.25f * (win_rg[3][0] + win_rg[3][2] +
                win_rg[2][1] + win_rg[4][1]);
            }
        }
        win_rg[5][1] = ((t0_rg >= (0 + 1) + (0) && t0_rg < (nx - 1) + (0) && (y0_rg + 4) >= (0 + 1) + (1) && (y0_rg + 4) < (ny - 1) + (1))) ? __ldg(&u[nx * (y0_rg + 4) + t0_rg]) : (float)0;
        {  // point 3
            int y = y0_rg + 3; int x = t0_rg;
            if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
                unew[y * nx + x] = 0.25f * (win_rg[4][0] + win_rg[4][2] +
                win_rg[3][1] + win_rg[5][1]);
            }
        }
    }
}
