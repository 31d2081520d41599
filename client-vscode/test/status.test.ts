import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseServerStatus, StatusModel } from '../src/core/status';

test('client phases map to busy/error views', () => {
    const m = new StatusModel();
    assert.equal(m.view().text, 'ReGraphT: stopped');
    m.setPhase('starting');
    assert.deepEqual({ busy: m.view().busy, severity: m.view().severity }, { busy: true, severity: 'info' });
    m.setPhase('failed', 'python3 could not be run');
    const v = m.view();
    assert.equal(v.severity, 'error');
    assert.equal(v.busy, false);
    assert.match(v.tooltip, /python3 could not be run/);
});

test('server status applies only while running and is cleared by a new phase', () => {
    const m = new StatusModel();
    assert.equal(m.serverStatus({ state: 'ready', message: '' }), false);
    m.setPhase('running');
    assert.equal(m.view().text, 'ReGraphT');
    assert.equal(m.serverStatus({ state: 'modelLoading', message: 'SmolLM2-135M' }), true);
    assert.equal(m.view().text, 'ReGraphT: loading model (SmolLM2-135M)');
    assert.equal(m.view().busy, true);
    m.serverStatus({ state: 'searching', message: 'saxpy 12/24 candidates, best 1.8x' });
    assert.match(m.view().text, /^ReGraphT: searching \(saxpy 12\/24/);
    assert.match(m.view().tooltip, /best 1\.8x/);
    m.serverStatus({ state: 'error', message: 'nvcc not found' });
    assert.equal(m.view().severity, 'error');
    m.setPhase('restarting');
    assert.equal(m.current.server, undefined);
    assert.equal(m.view().text, 'ReGraphT: restarting');
});

test('malformed status notifications are ignored', () => {
    assert.equal(parseServerStatus(null), undefined);
    assert.equal(parseServerStatus({ state: 'dancing' }), undefined);
    assert.deepEqual(parseServerStatus({ state: 'ready' }), { state: 'ready', message: '' });
    const m = new StatusModel();
    m.setPhase('running');
    assert.equal(m.serverStatus({ state: 42 }), false);
});

test('long messages are shortened in the text but kept in the tooltip', () => {
    const m = new StatusModel();
    m.setPhase('running');
    const long = 'validating '.repeat(20);
    m.serverStatus({ state: 'validating', message: long });
    assert.ok(m.view().text.length < 70);
    assert.ok(m.view().tooltip.includes(long.trim().slice(0, 50)));
});
