import assert from 'node:assert/strict';
import { test } from 'node:test';
import { captureArguments, captureSummary, defaultOut, splitCommandLine } from '../src/core/capture';

test('splits a command line as a shell does', () => {
    assert.deepEqual(splitCommandLine(`./build/app --size 1024 'a b' "c \\"d\\"" e\\ f`),
        ['./build/app', '--size', '1024', 'a b', 'c "d"', 'e f']);
    assert.deepEqual(splitCommandLine('  '), []);
    assert.deepEqual(splitCommandLine(`x ''`), ['x', '']);
    assert.throws(() => splitCommandLine(`./app "open`), /unclosed "/);
});

test('runs regrapht capture with the server interpreter', () => {
    const settings = { command: './app --frames 2', kernel: 'blur', launches: 3, data: true, out: '/w/.regrapht/captures/app' };
    assert.deepEqual(captureArguments(['/venv/bin/python'], settings), {
        command: '/venv/bin/python',
        args: ['-m', 'regrapht', 'capture', '--out', '/w/.regrapht/captures/app', '--launches', '3', '--data',
            '--kernel', 'blur', '--', './app', '--frames', '2'],
    });
    assert.deepEqual(captureArguments(['py', '-3'], { ...settings, kernel: '', data: false }).args.slice(0, 8),
        ['-3', '-m', 'regrapht', 'capture', '--out', '/w/.regrapht/captures/app', '--launches', '3']);
    assert.throws(() => captureArguments(['python'], { ...settings, command: '' }), /regrapht.captureCommand/);
    assert.equal(defaultOut('/w', './build/my app'), '/w/.regrapht/captures/my');
    assert.equal(defaultOut('/w', '"./build/my app" -x'), '/w/.regrapht/captures/my_app');
});

test('summarises the manifest', () => {
    const manifest = {
        command: ['./app'], kernels: [{}, {}, {}], library: { state: 'capturing', error: null },
        specs: [{ kernel: 'blur<float, 3>', launches: [1, 2] }, { kernel: 'reduce', launches: [3] }],
        skipped: [{ kernel: 'step(Params)' }],
    };
    assert.equal(captureSummary(manifest, 0),
        'captured 3 launches of 3 kernels from ./app: 2 specs (blur<float, 3>, reduce), 1 kernel without a spec');
    assert.match(captureSummary(manifest, 134), /the program exited with 134$/);
    assert.equal(captureSummary({ command: ['./app'], library: { state: 'failed', error: 'CUPTI refused' } }, 0),
        'nothing captured from ./app: CUPTI refused');
    assert.match(captureSummary(undefined, 1), /no manifest \(exit 1\)/);
});
