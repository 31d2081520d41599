__global__ void k(float *x) { x[0] = 1.0f; } // café ÿþ latin-1 bytes
