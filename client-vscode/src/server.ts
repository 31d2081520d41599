import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
    CloseAction, CloseHandlerResult, ErrorAction, ErrorHandlerResult, LanguageClient, LanguageClientOptions,
    CodeLensRequest, Message, RevealOutputChannelOn, ServerOptions, State,
} from 'vscode-languageclient/node';
import { optimizeTitle } from './core/environment';
import { Interpreter, serverCommand } from './core/python';
import { EnvironmentStatus } from './environment';
import { CrashPolicy, SerialRunner } from './core/restart';
import { handleServerCreatedProgress } from './progress';
import { showOutcome, showReportResult } from './report';
import { bootstrapPrivateVenv, privateVenvPython, probe, resolveInterpreter } from './python';
import { readServerSettings, SECTION } from './settings';
import { StatusItem } from './status';
import { log, outputChannel } from './logging';

export const DOCUMENT_SELECTOR = [
    { scheme: 'file', language: 'cuda-cpp' },
    { scheme: 'untitled', language: 'cuda-cpp' },
];

const STDERR_TAIL_LINES = 20;

/** Why start() gave up without a running server. */
class StartAborted extends Error {}

/**
 * Owns the LanguageClient: finds the interpreter, starts, stops and restarts the server.
 * Restarts never overlap (SerialRunner); crashes restart automatically with back-off until the
 * CrashPolicy budget is spent, then the user is told why the server stopped.
 */
export class ServerManager implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private process: cp.ChildProcess | undefined;
    private clientDisposables: vscode.Disposable[] = [];
    private readonly crashPolicy = new CrashPolicy();
    private readonly runner = new SerialRunner(() => this.restartNow());
    private intentionalStop = false;
    private crashTimer: NodeJS.Timeout | undefined;
    private stderrTail: string[] = [];
    private disposed = false;
    /** The interpreter the running server uses (argv prefix); other commands run `regrapht` with it. */
    pythonCommand: string[] | undefined;

    constructor(private readonly context: vscode.ExtensionContext, private readonly status: StatusItem,
        readonly environment: EnvironmentStatus) {}

    /** Ask the clients' CodeLens providers again (the `regrapht.codeLens.enabled` toggle). */
    refreshCodeLenses(): void {
        const feature = this.client?.getFeature(CodeLensRequest.method);
        for (const editor of vscode.window.visibleTextEditors) {
            feature?.getProvider(editor.document)?.onDidChangeCodeLensEmitter.fire();
        }
    }

    get languageClient(): LanguageClient | undefined {
        return this.client?.state === State.Running ? this.client : undefined;
    }

    /** Start, or restart if running. Concurrent calls coalesce into one more restart. */
    restart(reason: string, resetCrashBudget = true): Promise<void> {
        if (resetCrashBudget) {
            this.crashPolicy.reset();
        }
        if (this.crashTimer) {
            clearTimeout(this.crashTimer);
            this.crashTimer = undefined;
        }
        log.info(`(Re)starting the server: ${reason}`);
        return this.runner.run();
    }

    private async restartNow(): Promise<void> {
        if (this.disposed) {
            return;
        }
        if (this.client) {
            this.status.setPhase('restarting');
        }
        await this.stop();
        try {
            await this.start();
        } catch (error) {
            if (error instanceof StartAborted) {
                this.status.setPhase('failed', error.message);
                return;
            }
            this.onServerGone(`it failed to start: ${error instanceof Error ? error.message : String(error)}`);
        }
    }

    private async start(): Promise<void> {
        this.status.setPhase('resolving');
        const folder = vscode.workspace.workspaceFolders?.[0];
        const python = await this.findServerPython(folder?.uri);
        this.pythonCommand = python.command;
        const { command, args } = serverCommand(python.command);
        this.status.setInterpreter(`Python: ${python.command.join(' ')} (${python.source})`);
        this.status.setPhase('starting');
        log.info(`Starting: ${[command, ...args].join(' ')}`);

        this.stderrTail = [];
        let started = false;
        const serverOptions: ServerOptions = async () => {
            const child = cp.spawn(command, args, {
                cwd: folder?.uri.fsPath,
                env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8' },
            });
            child.stderr?.on('data', (chunk: Buffer) => this.rememberStderr(chunk.toString()));
            child.on('error', (error) => log.error(`Server process error: ${error.message}`));
            this.process = child;
            return child;
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: DOCUMENT_SELECTOR,
            outputChannel: outputChannel(),
            traceOutputChannel: outputChannel(),
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            // commandLinks: the hover card may link to the kernel report (a trusted command below);
            // outcomeNotifications: Optimize's outcomes come as regrapht/optimizeOutcome (shown with actions);
            // settings: the window's (a folder's own values reach the server when it pulls with scopeUri)
            initializationOptions: { settings: readServerSettings(), commandLinks: true, outcomeNotifications: true },
            markdown: { isTrusted: { enabledCommands: ['regrapht.showKernelReportAtCursor'] } },
            synchronize: { configurationSection: SECTION },
            errorHandler: {
                error: (error: Error, _message: Message | undefined, count: number | undefined): ErrorHandlerResult => {
                    log.error(`Connection error: ${error.message}`);
                    return { action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true };
                },
                closed: (): CloseHandlerResult => {
                    if (started && !this.intentionalStop) {
                        // Restart from here (fresh client, fresh process), not inside vscode-languageclient.
                        setImmediate(() => this.onServerGone('the server process exited'));
                    }
                    return { action: CloseAction.DoNotRestart, handled: true };
                },
            },
            middleware: {
                // The CodeLens toggle, and Optimize saying what it needs here before a click.
                provideCodeLenses: async (document, token, next) => {
                    if (!vscode.workspace.getConfiguration(SECTION, document.uri).get<boolean>('codeLens.enabled', true)) {
                        return [];
                    }
                    const lenses = await next(document, token);
                    for (const lens of lenses ?? []) {
                        if (lens.command) {
                            lens.command.title = optimizeTitle(lens.command.title, this.environment.current);
                        }
                    }
                    return lenses;
                },
                provideCodeActions: async (document, range, context, token, next) => {
                    const actions = await next(document, range, context, token);
                    for (const action of actions ?? []) {
                        action.title = optimizeTitle(action.title, this.environment.current);
                    }
                    return actions;
                },
                // Server commands run from CodeLenses: show what showKernelReport returns.
                executeCommand: async (command, args, next) => {
                    if (command === 'regrapht.showFasterVersion') {
                        // a compare view, not a second editor: the server only writes the file
                        const asked = (args[0] ?? {}) as { uri?: string; kernel?: string };
                        const written = await next(command, [{ ...asked, show: false }]);
                        await showFasterDiff(asked.uri, asked.kernel, written);
                        return written;
                    }
                    if (command === 'regrapht.showKernelReport') {
                        // the CodeLens: ask for the report's data and draw the report webview
                        const asked = (args[0] ?? {}) as { uri?: string; kernel?: string };
                        const result = await next(command, [{ ...asked, detail: true }]);
                        await showReportResult(typeof asked.kernel === 'string' ? asked.kernel : 'kernel', result);
                        return result;
                    }
                    return next(command, args);
                },
                workspace: {
                    // Answer `workspace/configuration` for `regrapht` with normalised settings.
                    configuration: async (params, token, next) => {
                        const result = await next(params, token);
                        if (!Array.isArray(result)) {
                            return result;
                        }
                        return params.items.map((item, i) => {
                            if (item.section !== SECTION) {
                                return result[i];
                            }
                            const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
                            return readServerSettings(scope);
                        });
                    },
                },
            },
        };
        const client = new LanguageClient('regrapht', 'ReGraphT', serverOptions, clientOptions);
        this.client = client;
        this.intentionalStop = false;
        await client.start();
        if (client.state !== State.Running) {
            // vscode-languageclient resolves start() even when initialize failed; its log says why.
            throw new Error(`the server did not initialize${this.stderrTail.length ? `: ${this.stderrTail[this.stderrTail.length - 1]}` : ''}`);
        }
        started = true;
        this.clientDisposables.push(
            client.onNotification('regrapht/status', (params: unknown) => {
                this.status.serverStatus(params);
                // an optimize run ends with "ready" (or "error"): Cancel Optimization is no longer offered
                const state = (params as { state?: unknown } | undefined)?.state;
                if (state === 'ready' || state === 'error') {
                    void vscode.commands.executeCommand('setContext', 'regrapht.optimizing', false);
                } else if (state === 'searching') {
                    void vscode.commands.executeCommand('setContext', 'regrapht.optimizing', true);
                }
            }),
            client.onNotification('regrapht/optimizeOutcome', (params: unknown) => showOutcome(params)),
            handleServerCreatedProgress(client),
        );
        this.status.setPhase('running');
        void this.environment.refresh(client).then(() => this.refreshCodeLenses());
        const info = client.initializeResult?.serverInfo;
        log.info(`Server running${info ? `: ${info.name} ${info.version ?? ''}` : ''}`);
    }

    /** The interpreter to run, after probing it (and offering the private environment). */
    private async findServerPython(resource?: vscode.Uri): Promise<Interpreter> {
        const chosen = await resolveInterpreter(resource);
        const outcome = await probe(chosen.command, resource?.fsPath);
        if (outcome.kind === 'probed' && outcome.verdict.kind === 'ok') {
            log.info(`Using ${outcome.probe.executable} (Python ${outcome.probe.version.join('.')}, regrapht ${outcome.verdict.version}) from ${chosen.source}`);
            return chosen;
        }
        const problem = outcome.kind === 'unrunnable' ? outcome.message : outcome.verdict.kind === 'ok' ? '' : outcome.verdict.message;
        log.warn(problem);

        // A private environment made earlier serves when the chosen interpreter lacks the server.
        const privatePython = privateVenvPython(this.context);
        if (fs.existsSync(privatePython)) {
            const priv = await probe([privatePython]);
            if (priv.kind === 'probed' && priv.verdict.kind === 'ok') {
                log.info(`Using the private environment ${privatePython} (regrapht ${priv.verdict.version})`);
                return { command: [privatePython], source: 'private-venv' };
            }
        }

        const canBootstrap = outcome.kind === 'probed' && outcome.verdict.kind === 'missing-server';
        const actions = canBootstrap ? ['Install in Private Environment', 'Choose Interpreter'] : ['Choose Interpreter', 'Show Output'];
        this.status.setPhase('failed', problem);
        const choice = await vscode.window.showWarningMessage(
            canBootstrap
                ? `ReGraphT: ${problem} Create a private environment for the server (from the wheel in this extension; dependencies come from the package index)?`
                : `ReGraphT: ${problem.split('\n')[0]}`,
            ...actions);
        if (choice === 'Install in Private Environment') {
            this.status.setPhase('installing');
            const installed = await bootstrapPrivateVenv(this.context, chosen.command);
            if (installed) {
                const check = await probe([installed]);
                if (check.kind === 'probed' && check.verdict.kind === 'ok') {
                    return { command: [installed], source: 'private-venv' };
                }
                throw new StartAborted(`The private environment was created but the server does not import: ${check.kind === 'unrunnable' ? check.message : JSON.stringify(check.probe)}`);
            }
            throw new StartAborted('The server was not installed.');
        }
        if (choice === 'Choose Interpreter') {
            void vscode.commands.executeCommand('workbench.action.openSettings', 'regrapht.python');
        } else if (choice === 'Show Output') {
            void vscode.commands.executeCommand('regrapht.showOutput');
        }
        throw new StartAborted(problem);
    }

    private rememberStderr(text: string): void {
        for (const line of text.split(/\r?\n/)) {
            if (line.trim() !== '') {
                this.stderrTail.push(line);
            }
        }
        if (this.stderrTail.length > STDERR_TAIL_LINES) {
            this.stderrTail.splice(0, this.stderrTail.length - STDERR_TAIL_LINES);
        }
    }

    /** The server died or could not start: restart with back-off, or stop and say why. */
    private onServerGone(what: string): void {
        if (this.disposed || this.intentionalStop) {
            return;
        }
        const lastLine = this.stderrTail.length > 0 ? this.stderrTail[this.stderrTail.length - 1] : undefined;
        const exit = this.process?.exitCode ?? this.process?.signalCode;
        const why = `${what}${exit !== null && exit !== undefined ? ` (exit ${exit})` : ''}${lastLine ? `: ${lastLine}` : ''}`;
        log.error(`Server stopped: ${why}`);
        const decision = this.crashPolicy.recordCrash(Date.now());
        if (decision.restart) {
            this.status.setPhase('restarting', `Restart ${decision.attempt} after: ${why}`);
            log.info(`Restarting in ${decision.delayMs} ms (attempt ${decision.attempt})`);
            this.crashTimer = setTimeout(() => {
                this.crashTimer = undefined;
                void this.runner.run();
            }, decision.delayMs);
            return;
        }
        const message = `ReGraphT server stopped and will not be restarted automatically: ${decision.reason}. Last error: ${why}`;
        this.status.setPhase('failed', message);
        void this.stop();
        void vscode.window.showErrorMessage(message, 'Show Output', 'Restart Server').then((choice) => {
            if (choice === 'Show Output') {
                void vscode.commands.executeCommand('regrapht.showOutput');
            } else if (choice === 'Restart Server') {
                void this.restart('requested after a failure');
            }
        });
    }

    async stop(): Promise<void> {
        const client = this.client;
        const child = this.process;
        this.client = undefined;
        this.process = undefined;
        for (const d of this.clientDisposables.splice(0)) {
            d.dispose();
        }
        if (!client) {
            return;
        }
        this.intentionalStop = true;
        try {
            if (client.needsStop()) {
                await client.stop(5_000);
            }
        } catch (error) {
            log.warn(`Stopping the server: ${String(error)}`);
        } finally {
            if (child && child.exitCode === null && child.signalCode === null) {
                child.kill();
            }
            await client.dispose().catch(() => undefined);
        }
        if (this.status.phase !== 'failed') {
            this.status.setPhase('stopped');
        }
    }

    async dispose(): Promise<void> {
        this.disposed = true;
        if (this.crashTimer) {
            clearTimeout(this.crashTimer);
        }
        await this.stop();
    }
}

/** The faster version the server wrote beside the current file, as VS Code's diff editor. */
async function showFasterDiff(current: string | undefined, kernel: string | undefined, written: unknown): Promise<void> {
    const faster = written as { uri?: unknown; at?: unknown; time_ms?: unknown } | undefined;
    if (current === undefined || typeof faster?.uri !== 'string') {
        return;
    }
    const title = `${kernel ?? 'kernel'}: the faster version (${String(faster.at)}, ${String(faster.time_ms)} ms) ↔ now`;
    await vscode.commands.executeCommand('vscode.diff', vscode.Uri.parse(faster.uri), vscode.Uri.parse(current), title);
}
