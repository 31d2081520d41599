import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
    bootstrapEnv, bootstrapSteps, compareVersions, PIP_CONFIG_OVERRIDES, judgeProbe, parseProbe, pickWheel, PROBE_SCRIPT, selectInterpreter,
    serverCommand, venvPython,
} from '../src/core/python';

test('the setting wins over the Python extension, which wins over python3', () => {
    assert.deepEqual(selectInterpreter({ configured: '/opt/py/bin/python', pythonExtension: ['/x/python'], platform: 'linux' }),
        { command: ['/opt/py/bin/python'], source: 'setting' });
    assert.deepEqual(selectInterpreter({ configured: '', pythonExtension: ['conda', 'run', '-n', 'x', 'python'], platform: 'linux' }),
        { command: ['conda', 'run', '-n', 'x', 'python'], source: 'python-extension' });
    assert.deepEqual(selectInterpreter({ configured: '  ', pythonExtension: [], platform: 'linux' }),
        { command: ['python3'], source: 'default' });
    assert.deepEqual(selectInterpreter({ configured: '', platform: 'win32' }).command, ['python']);
});

test('server command: -m regrapht serve, no --stdio added by us', () => {
    assert.deepEqual(serverCommand(['/v/bin/python']), { command: '/v/bin/python', args: ['-m', 'regrapht', 'serve'] });
    assert.deepEqual(serverCommand(['conda', 'run', 'python']), { command: 'conda', args: ['run', 'python', '-m', 'regrapht', 'serve'] });
});

test('probe output parses and is judged', () => {
    const ok = parseProbe('noise\nREGRAPHT_PROBE {"executable": "/v/bin/python", "version": [3, 12, 1], "regrapht": "0.1.0", "error": null}\n');
    assert.ok(ok);
    assert.deepEqual(judgeProbe(ok), { kind: 'ok', version: '0.1.0' });
    const missing = parseProbe('REGRAPHT_PROBE {"executable": "/usr/bin/python3", "version": [3, 11, 2], "regrapht": null, "error": "ModuleNotFoundError: No module named \'regrapht\'"}');
    assert.ok(missing);
    const verdict = judgeProbe(missing);
    assert.equal(verdict.kind, 'missing-server');
    assert.match(verdict.kind === 'missing-server' ? verdict.message : '', /No module named/);
    const old = parseProbe('REGRAPHT_PROBE {"executable": "/usr/bin/python3", "version": [3, 9, 18], "regrapht": "0.1.0", "error": null}');
    assert.ok(old);
    assert.equal(judgeProbe(old).kind, 'too-old');
    assert.equal(parseProbe('Traceback ...'), undefined);
    assert.equal(parseProbe('REGRAPHT_PROBE {not json'), undefined);
    assert.match(PROBE_SCRIPT, /import regrapht/);
});

test('private environment: venv, pip upgrade, portable llama.cpp + model from the wheel, install the wheel', () => {
    const wheel = '/ext/bundled/regrapht-0.1.0-py3-none-any.whl';
    const steps = bootstrapSteps(['/usr/bin/python3'], '/store/venv', wheel, 'linux');
    assert.equal(steps.length, 4);
    assert.deepEqual([steps[0].command, ...steps[0].args], ['/usr/bin/python3', '-m', 'venv', '--clear', '/store/venv']);
    assert.equal(steps[1].command, '/store/venv/bin/python');
    assert.deepEqual([steps[2].command, ...steps[2].args], ['/store/venv/bin/python', '-m', 'regrapht.install', '--into', '/store/venv/bin/python']);
    assert.deepEqual(steps[2].env, { PYTHONPATH: wheel }, 'the install step runs from the bundled wheel');
    assert.deepEqual(steps[3].args.slice(0, 3), ['-m', 'pip', 'install']);
    assert.equal(steps[3].args.at(-1), wheel);
    assert.ok(!steps[3].args.includes('--no-deps'), 'dependencies come from the index');
    assert.equal(venvPython('C:\\s\\venv', 'win32'), 'C:\\s\\venv\\Scripts\\python.exe');
});

test('the bootstrap honours pip configuration: no overriding options, the environment passes through', () => {
    const steps = bootstrapSteps(['/usr/bin/python3'], '/store/venv', '/ext/bundled/regrapht-0.1.0-py3-none-any.whl', 'linux');
    for (const step of steps) {
        for (const arg of step.args) {
            const option = arg.split('=')[0];
            assert.ok(!PIP_CONFIG_OVERRIDES.includes(option), `${step.title}: ${arg} would override pip's configuration`);
        }
    }
    const user = {
        PATH: '/usr/bin', HOME: '/home/u', PIP_FIND_LINKS: '/wheels /more-wheels', PIP_INDEX_URL: 'https://mirror/simple',
        PIP_EXTRA_INDEX_URL: 'file:///local/simple', PIP_CONFIG_FILE: '/etc/my-pip.conf', HTTPS_PROXY: 'http://proxy:3128',
    };
    const env = bootstrapEnv(user);
    for (const [key, value] of Object.entries(user)) {
        assert.equal(env[key], value, key);
    }
    assert.equal(env.PIP_NO_INPUT, '1');
    assert.equal(env.PYTHONUNBUFFERED, '1');
});

test('the newest regrapht wheel is picked', () => {
    assert.equal(pickWheel(['regrapht-0.1.0-py3-none-any.whl', 'regrapht-0.10.0-py3-none-any.whl', 'regrapht-0.9.1-py3-none-any.whl', 'other-9.0-py3-none-any.whl', 'README']),
        'regrapht-0.10.0-py3-none-any.whl');
    assert.equal(pickWheel(['x.txt']), undefined);
    assert.ok(compareVersions([0, 10], [0, 9, 9]) > 0);
    assert.equal(compareVersions([1, 0], [1]), 0);
});
