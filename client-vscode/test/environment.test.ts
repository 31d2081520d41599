import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cannotOptimizeMessage, languageStatusView, optimizeTitle, parseEnvironment } from '../src/core/environment';

const READY = { gpu: 'NVIDIA H200', gpuReason: '', nvcc: '/usr/local/cuda/bin/nvcc', pycuda: true, model: 'm.gguf', modelReason: '', optimize: true, missing: [] };
const NO_GPU = { gpu: null, gpuReason: 'no CUDA device found', nvcc: '/usr/bin/nvcc', pycuda: true, model: 'm.gguf', modelReason: '', optimize: false, missing: ['a CUDA GPU (no CUDA device found)'] };

test('environment replies are validated', () => {
    assert.equal(parseEnvironment(undefined), undefined);
    assert.equal(parseEnvironment({ gpu: 'x' }), undefined);
    assert.deepEqual(parseEnvironment(READY), READY);
    assert.deepEqual(parseEnvironment({ ...NO_GPU, missing: ['a CUDA GPU', 3] })?.missing, ['a CUDA GPU']);
});

test('the language status names the GPU, nvcc, pycuda and the model', () => {
    const ready = languageStatusView(parseEnvironment(READY));
    assert.equal(ready.text, 'ReGraphT: NVIDIA H200');
    assert.equal(ready.severity, 'info');
    assert.match(ready.detail, /nvcc: \/usr\/local\/cuda\/bin\/nvcc/);
    assert.match(ready.detail, /pycuda: installed/);
    const none = languageStatusView(parseEnvironment(NO_GPU));
    assert.equal(none.severity, 'warning');
    assert.match(none.detail, /^Optimize needs a CUDA GPU \(no CUDA device found\)\./);
    assert.match(languageStatusView(undefined).text, /checking/);
});

test('Optimize says what it needs before a click, and only Optimize', () => {
    const env = parseEnvironment(NO_GPU);
    assert.equal(optimizeTitle('Optimize', env), 'Optimize (needs a CUDA GPU)');
    assert.equal(optimizeTitle('Optimize', parseEnvironment(READY)), 'Optimize');
    assert.equal(optimizeTitle('2 warnings: memory coalescing', env), '2 warnings: memory coalescing');
    assert.equal(optimizeTitle('Optimize', undefined), 'Optimize');
    assert.match(cannotOptimizeMessage(env!), /needs a CUDA GPU \(no CUDA device found\)\. Diagnostics/);
});
