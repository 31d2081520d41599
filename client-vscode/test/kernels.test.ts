import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findKernels, kernelAtLine } from '../src/core/kernels';

const SOURCE = `// __global__ void commented(int x)
#include <cuda_runtime.h>
__global__ void saxpy(int n, float a, float *x, float *y)
{
    y[0] = a;
}

template <int BLOCK>
__global__ void __launch_bounds__(256, 2)
reduce_sum(const float *__restrict__ in, float *out)
{
    const char *s = "__global__ void fake(";
}

__device__ float helper(float v) { return v; }
void host() { saxpy<<<1, 1>>>(1, 2.0f, 0, 0); }
extern "C" __global__ void
transpose (float *a) {}
`;

test('finds kernels, skipping comments, strings and __launch_bounds__', () => {
    assert.deepEqual(findKernels(SOURCE).map((k) => [k.name, k.line, k.nameLine]), [
        ['saxpy', 2, 2],
        ['reduce_sum', 8, 9],
        ['transpose', 16, 17],
    ]);
});

test('kernel at a line is the closest declaration above it', () => {
    const kernels = findKernels(SOURCE);
    assert.equal(kernelAtLine(kernels, 0), undefined);
    assert.equal(kernelAtLine(kernels, 4)?.name, 'saxpy');
    assert.equal(kernelAtLine(kernels, 11)?.name, 'reduce_sum');
    assert.equal(kernelAtLine(kernels, 17)?.name, 'transpose');
});

test('a declaration without a parameter list before ; is not a kernel', () => {
    assert.deepEqual(findKernels('__global__ int; void f(int);'), []);
});
