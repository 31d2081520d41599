import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
    changedKeys, DEFAULT_SETTINGS, expandPath, needsRestart, normalizeSettings, SERVER_KEYS, toServerSettings,
} from '../src/core/settings';

test('empty input gives the documented defaults', () => {
    const { settings, problems } = normalizeSettings({});
    assert.deepEqual(settings, DEFAULT_SETTINGS);
    assert.deepEqual(problems, []);
    assert.equal(settings.debounceMs, 150);
    assert.equal(settings.modelContext, 4096);
    assert.equal(settings.searchBudget, 24);
    assert.equal(settings.searchStrategy, 'mcgs');
    assert.equal(settings.logLevel, 'info');
});

test('server settings carry exactly the architecture keys and never python', () => {
    const server = toServerSettings(normalizeSettings({ python: '/usr/bin/python3' }).settings);
    assert.deepEqual(Object.keys(server).sort(), [
        'allowFastMath', 'arch', 'backgroundValidation', 'compileCommands', 'compilerConfirmation', 'debounceMs', 'enabledRules',
        'extraCompilerArgs', 'logLevel', 'modelContext', 'modelGpuLayers', 'modelPath', 'modelThreads', 'profileEnabled',
        'sanitize', 'searchBudget', 'searchStrategy', 'severityOverrides',
    ]);
    assert.equal('python' in server, false);
    assert.equal(SERVER_KEYS.length, 18);
});

test('extraCompilerArgs keeps strings only, compileCommands expands like a path', () => {
    const { settings, problems } = normalizeSettings(
        { extraCompilerArgs: ['-Iinc', 3, ' -DX=1 '], compileCommands: '~/proj/build/compile_commands.json' },
        { home: '/home/u' });
    assert.deepEqual(settings.extraCompilerArgs, ['-Iinc', '-DX=1']);
    assert.equal(settings.compileCommands, '/home/u/proj/build/compile_commands.json');
    assert.equal(problems.length, 1);
    assert.deepEqual(normalizeSettings({ extraCompilerArgs: '-Iinc' }).settings.extraCompilerArgs, []);
});

test('integers are coerced, truncated and clamped with a note', () => {
    const { settings, problems } = normalizeSettings({ searchBudget: '48', modelThreads: 3.7, debounceMs: -5, modelContext: 'lots' });
    assert.equal(settings.searchBudget, 48);
    assert.equal(settings.modelThreads, 3);
    assert.equal(settings.debounceMs, 0);
    assert.equal(settings.modelContext, 4096);
    assert.equal(problems.length, 3);
});

test('enums are case-insensitive, aliases map, unknown values fall back', () => {
    const a = normalizeSettings({ logLevel: 'DEBUG', searchStrategy: 'Greedy' }).settings;
    assert.equal(a.logLevel, 'debug');
    assert.equal(a.searchStrategy, 'greedy');
    assert.equal(normalizeSettings({ logLevel: 'warn' }).settings.logLevel, 'warning');
    const b = normalizeSettings({ logLevel: 'loud', searchStrategy: 'bfs' });
    assert.equal(b.settings.logLevel, 'info');
    assert.equal(b.settings.searchStrategy, 'mcgs');
    assert.equal(b.problems.length, 2);
});

test('rules are upper-cased and de-duplicated; severities validated', () => {
    const { settings, problems } = normalizeSettings({
        enabledRules: ['r001', 'R001', ' R002 ', 7, ''],
        severityOverrides: { r003: 'Hint', R004: 'info', R005: 'fatal' },
    });
    assert.deepEqual(settings.enabledRules, ['R001', 'R002']);
    assert.deepEqual(settings.severityOverrides, { R003: 'hint', R004: 'information' });
    assert.equal(problems.length, 3);
    assert.deepEqual(normalizeSettings({ enabledRules: 'R001' }).settings.enabledRules, []);
});

test('arch accepts sm_XX and bare numbers, rejects the rest', () => {
    assert.equal(normalizeSettings({ arch: 'SM_90' }).settings.arch, 'sm_90');
    assert.equal(normalizeSettings({ arch: '80' }).settings.arch, 'sm_80');
    assert.equal(normalizeSettings({ arch: 'sm_90a' }).settings.arch, 'sm_90a');
    const bad = normalizeSettings({ arch: 'hopper' });
    assert.equal(bad.settings.arch, '');
    assert.equal(bad.problems.length, 1);
});

test('compiler confirmation is on by default and must be a boolean', () => {
    assert.equal(normalizeSettings({}).settings.compilerConfirmation, true);
    assert.equal(normalizeSettings({ compilerConfirmation: false }).settings.compilerConfirmation, false);
    const r = normalizeSettings({ compilerConfirmation: 'no' });
    assert.equal(r.settings.compilerConfirmation, true);
    assert.equal(r.problems.length, 1);
});

test('booleans must be booleans', () => {
    assert.equal(normalizeSettings({ backgroundValidation: true }).settings.backgroundValidation, true);
    const r = normalizeSettings({ backgroundValidation: 'yes' });
    assert.equal(r.settings.backgroundValidation, false);
    assert.equal(r.problems.length, 1);
});

test('paths expand ~, ${userHome}, ${workspaceFolder} and ${env:X}', () => {
    const ctx = { home: '/home/u', workspaceFolder: '/ws' };
    assert.equal(expandPath('~/venv/bin/python', ctx), '/home/u/venv/bin/python');
    assert.equal(expandPath('${workspaceFolder}/.venv/bin/python', ctx), '/ws/.venv/bin/python');
    assert.equal(expandPath('${userHome}/m.gguf', ctx), '/home/u/m.gguf');
    assert.equal(expandPath('${env:MODELS}/m.gguf', ctx, { MODELS: '/models' }), '/models/m.gguf');
    assert.equal(expandPath('  ', ctx), '');
    const { settings } = normalizeSettings({ python: '${workspaceFolder}/py', modelPath: '~/x.gguf' }, ctx);
    assert.equal(settings.python, '/ws/py');
    assert.equal(settings.modelPath, '/home/u/x.gguf');
});

test('only a python change needs a restart', () => {
    const before = normalizeSettings({}).settings;
    const after = normalizeSettings({ searchBudget: 8, python: '/p' }).settings;
    assert.deepEqual(changedKeys(before, after).sort(), ['python', 'searchBudget']);
    assert.equal(needsRestart(['searchBudget']), false);
    assert.equal(needsRestart(['searchBudget', 'python']), true);
});

test('allowFastMath defaults on, takes a boolean, and reports anything else', () => {
    assert.equal(normalizeSettings({}).settings.allowFastMath, true);
    assert.equal(normalizeSettings({ allowFastMath: false }).settings.allowFastMath, false);
    const bad = normalizeSettings({ allowFastMath: 'no' });
    assert.equal(bad.settings.allowFastMath, true);
    assert.deepEqual(bad.problems, ['regrapht.allowFastMath: expected true or false']);
});
