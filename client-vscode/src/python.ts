import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
    bootstrapEnv, bootstrapSteps, Interpreter, judgeProbe, parseProbe, pickWheel, PROBE_SCRIPT, ProbeResult, Step,
    selectInterpreter, venvPython, Verdict,
} from './core/python';
import { log } from './logging';
import { readSettings } from './settings';

/** The parts of the ms-python.python API that are used here (typed locally, no extra dependency). */
interface PythonExtensionApi {
    environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
        resolveEnvironment(env: { path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
        onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
    };
    settings?: {
        getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
    };
}

const PYTHON_EXTENSION = 'ms-python.python';

async function pythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
    const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
    if (!extension) {
        return undefined;
    }
    try {
        return extension.isActive ? extension.exports : await extension.activate();
    } catch (error) {
        log.warn(`Python extension could not be activated: ${String(error)}`);
        return undefined;
    }
}

/** argv of the Python extension's selected interpreter for `resource`, if any. */
async function interpreterFromPythonExtension(resource?: vscode.Uri): Promise<string[] | undefined> {
    const api = await pythonExtensionApi();
    if (!api) {
        return undefined;
    }
    try {
        if (api.environments) {
            const active = api.environments.getActiveEnvironmentPath(resource);
            const resolved = await api.environments.resolveEnvironment(active);
            const exe = resolved?.executable.uri?.fsPath;
            if (exe) {
                return [exe];
            }
        }
        const details = api.settings?.getExecutionDetails(resource);
        if (details?.execCommand && details.execCommand.length > 0) {
            return details.execCommand;
        }
    } catch (error) {
        log.warn(`Python extension did not report an interpreter: ${String(error)}`);
    }
    return undefined;
}

/** Fires when the Python extension's selected interpreter changes (no-op without the extension). */
export async function onPythonInterpreterChanged(listener: () => void): Promise<vscode.Disposable> {
    const api = await pythonExtensionApi();
    return api?.environments?.onDidChangeActiveEnvironmentPath(() => listener()) ?? new vscode.Disposable(() => undefined);
}

export async function resolveInterpreter(resource?: vscode.Uri): Promise<Interpreter> {
    const settings = readSettings(resource);
    const fromExtension = settings.python === '' ? await interpreterFromPythonExtension(resource) : undefined;
    return selectInterpreter({ configured: settings.python, pythonExtension: fromExtension, platform: process.platform });
}

export type ProbeOutcome =
    | { kind: 'probed'; probe: ProbeResult; verdict: Verdict }
    | { kind: 'unrunnable'; message: string };

/** Run the interpreter once to learn its version and whether `regrapht` imports. */
export function probe(command: readonly string[], cwd?: string): Promise<ProbeOutcome> {
    return new Promise((resolve) => {
        cp.execFile(command[0], [...command.slice(1), '-c', PROBE_SCRIPT],
            { timeout: 30_000, cwd, env: { ...process.env, PYTHONIOENCODING: 'utf-8' } },
            (error, stdout, stderr) => {
                const parsed = parseProbe(stdout);
                if (parsed) {
                    resolve({ kind: 'probed', probe: parsed, verdict: judgeProbe(parsed) });
                    return;
                }
                const why = error ? error.message : 'it printed no probe result';
                resolve({ kind: 'unrunnable', message: `${command.join(' ')} could not be run: ${why}${stderr ? `\n${stderr}` : ''}` });
            });
    });
}

export function privateVenvDir(context: vscode.ExtensionContext): string {
    return path.join(context.globalStorageUri.fsPath, 'venv');
}

export function privateVenvPython(context: vscode.ExtensionContext): string {
    return venvPython(privateVenvDir(context), process.platform);
}

export function bundledWheel(context: vscode.ExtensionContext): string | undefined {
    const dir = path.join(context.extensionPath, 'bundled');
    let names: string[] = [];
    try {
        names = fs.readdirSync(dir);
    } catch {
        return undefined;
    }
    const name = pickWheel(names);
    return name ? path.join(dir, name) : undefined;
}

function runStep({ command, args, env }: Step, token: vscode.CancellationToken): Promise<void> {
    return new Promise((resolve, reject) => {
        log.info(`$ ${[command, ...args].join(' ')}`);
        const child = cp.spawn(command, args, { env: { ...bootstrapEnv(process.env), ...env } });
        const cancel = token.onCancellationRequested(() => child.kill());
        child.stdout.on('data', (chunk: Buffer) => log.raw(chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => log.raw(chunk.toString()));
        child.on('error', (error) => {
            cancel.dispose();
            reject(error);
        });
        child.on('close', (code, signal) => {
            cancel.dispose();
            if (token.isCancellationRequested) {
                reject(new vscode.CancellationError());
            } else if (code === 0) {
                resolve();
            } else {
                reject(new Error(`${path.basename(command)} ${args.slice(0, 3).join(' ')} exited with ${signal ?? code}`));
            }
        });
    });
}

/**
 * Create `<globalStorage>/venv` with `basePython` and pip-install the wheel shipped in the .vsix
 * (its dependencies come from the package index now, never while the server runs).
 * Returns the new interpreter, or undefined when cancelled or failed (the user has been told).
 */
export async function bootstrapPrivateVenv(context: vscode.ExtensionContext, basePython: readonly string[]): Promise<string | undefined> {
    const wheel = bundledWheel(context);
    if (!wheel) {
        void vscode.window.showErrorMessage('ReGraphT: this build of the extension contains no server wheel; install `regrapht` into your Python with pip instead.');
        return undefined;
    }
    const venvDir = privateVenvDir(context);
    fs.mkdirSync(path.dirname(venvDir), { recursive: true });
    const steps = bootstrapSteps(basePython, venvDir, wheel, process.platform);
    log.info(`Creating the private ReGraphT environment in ${venvDir} from ${path.basename(wheel)}`);
    try {
        await vscode.window.withProgress({
            location: vscode.ProgressLocation.Notification,
            title: 'ReGraphT: setting up the server',
            cancellable: true,
        }, async (progress, token) => {
            for (const [i, step] of steps.entries()) {
                progress.report({ message: `${step.title} (${i + 1}/${steps.length}); see the ReGraphT output for pip's log`, increment: i === 0 ? 0 : 100 / steps.length });
                await runStep(step, token);
            }
        });
    } catch (error) {
        if (error instanceof vscode.CancellationError) {
            log.warn('Private environment setup cancelled.');
            return undefined;
        }
        log.error(`Private environment setup failed: ${String(error)}`);
        const choice = await vscode.window.showErrorMessage(
            `ReGraphT: installing the server failed (${error instanceof Error ? error.message : String(error)}).`, 'Show Output');
        if (choice === 'Show Output') {
            vscode.commands.executeCommand('regrapht.showOutput');
        }
        return undefined;
    }
    log.info('Private environment ready.');
    return venvPython(venvDir, process.platform);
}
