import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CrashPolicy, SerialRunner } from '../src/core/restart';

test('crashes restart with doubling delays until the budget is spent', () => {
    const policy = new CrashPolicy({ maxRestarts: 3, windowMs: 60_000, baseDelayMs: 100, maxDelayMs: 250 });
    assert.deepEqual(policy.recordCrash(0), { restart: true, delayMs: 100, attempt: 1 });
    assert.deepEqual(policy.recordCrash(1000), { restart: true, delayMs: 200, attempt: 2 });
    assert.deepEqual(policy.recordCrash(2000), { restart: true, delayMs: 250, attempt: 3 });
    const stop = policy.recordCrash(3000);
    assert.equal(stop.restart, false);
    assert.match(stop.restart ? '' : stop.reason, /stopped 4 times in the last 1 minute/);
});

test('old crashes leave the window; reset clears the budget', () => {
    const policy = new CrashPolicy({ maxRestarts: 1, windowMs: 10_000, baseDelayMs: 100, maxDelayMs: 1000 });
    assert.equal(policy.recordCrash(0).restart, true);
    assert.equal(policy.recordCrash(20_000).restart, true, 'the first crash is outside the window');
    assert.equal(policy.recordCrash(21_000).restart, false);
    policy.reset();
    assert.equal(policy.recentCrashes, 0);
    assert.equal(policy.recordCrash(22_000).restart, true);
});

function deferred() {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => { resolve = r; });
    return { promise, resolve };
}

test('SerialRunner never runs two tasks at once and coalesces queued requests', async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const gates: ReturnType<typeof deferred>[] = [];
    const runner = new SerialRunner(async () => {
        active++;
        runs++;
        maxActive = Math.max(maxActive, active);
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
        active--;
    });
    const first = runner.run();
    assert.equal(runner.busy, true);
    const second = runner.run();
    const third = runner.run();
    assert.equal(second, third, 'requests during a run share one follow-up run');
    gates[0].resolve();
    await first;
    await new Promise((r) => setImmediate(r));
    assert.equal(runs, 2);
    gates[1].resolve();
    await second;
    assert.equal(runs, 2);
    assert.equal(maxActive, 1);
    assert.equal(runner.busy, false);
});

test('SerialRunner continues after a failing task', async () => {
    let calls = 0;
    const runner = new SerialRunner(async () => {
        calls++;
        if (calls === 1) {
            throw new Error('boom');
        }
    });
    const failed = runner.run();
    const next = runner.run();
    await assert.rejects(failed, /boom/);
    await next;
    assert.equal(calls, 2);
});
