// Position of the first occurrence of a key (count if absent), with an early return and the key
// loaded into a local first.
__global__ void find_key(const int *keys, int key, unsigned int *where, int count)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= count) return;
    const int k = keys[idx];
    if (k == key) atomicMin(&where[0], (unsigned int)idx);
}
