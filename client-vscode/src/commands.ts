import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';
import { captureKernelLaunches } from './capture';
import { cannotOptimizeMessage } from './core/environment';
import { findKernels, kernelAtLine } from './core/kernels';
import { log, showOutput } from './logging';
import { LspProgress } from './progress';
import { showReportResult } from './report';
import { ServerManager } from './server';
import { writeSetting } from './settings';

let tokenCounter = 0;

function cudaEditor(): vscode.TextEditor | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== 'cuda-cpp') {
        void vscode.window.showInformationMessage('ReGraphT: open a CUDA (.cu/.cuh) file and put the cursor in a kernel.');
        return undefined;
    }
    return editor;
}

function runningClient(server: ServerManager) {
    const client = server.languageClient;
    if (!client) {
        void vscode.window.showWarningMessage('ReGraphT: the server is not running.', 'Show Output', 'Restart Server')
            .then((choice) => {
                if (choice === 'Show Output') {
                    showOutput(false);
                } else if (choice === 'Restart Server') {
                    void server.restart('requested by the user');
                }
            });
    }
    return client;
}

/** Name of the kernel around the cursor: document symbols first, then a source scan. */
async function kernelAtCursor(editor: vscode.TextEditor): Promise<string | undefined> {
    const doc = editor.document;
    const line = editor.selection.active.line;
    const kernels = findKernels(doc.getText());
    const found = kernelAtLine(kernels, line);
    if (found) {
        return found.name;
    }
    if (kernels.length === 0) {
        void vscode.window.showInformationMessage('ReGraphT: no __global__ kernel in this file.');
        return undefined;
    }
    return vscode.window.showQuickPick(kernels.map((k) => k.name), { placeHolder: 'Kernel' });
}

async function executeServerCommand(server: ServerManager, command: string, args: object,
    token?: vscode.CancellationToken, workDone = false): Promise<unknown> {
    const client = runningClient(server);
    if (!client) {
        return undefined;
    }
    let progress: LspProgress | undefined;
    const params: { command: string; arguments: unknown[]; workDoneToken?: string } = { command, arguments: [args] };
    if (workDone) {
        params.workDoneToken = `regrapht-${command}-${++tokenCounter}`;
        progress = new LspProgress(client, params.workDoneToken);
    }
    try {
        return await client.sendRequest(ExecuteCommandRequest.type, params, token);
    } catch (error) {
        if (token?.isCancellationRequested) {
            return undefined;
        }
        log.error(`${command} failed: ${error instanceof Error ? error.message : String(error)}`);
        void vscode.window.showErrorMessage(`ReGraphT: ${command} failed: ${error instanceof Error ? error.message : String(error)}`);
        return undefined;
    } finally {
        progress?.dispose();
    }
}

async function optimizeKernelAtCursor(server: ServerManager, arg?: { uri?: string; kernel?: string }): Promise<void> {
    let args: object;
    if (arg?.uri && arg.kernel) { // the report's Re-run button
        const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === arg.uri);
        if (open?.isDirty) {
            await open.save();
        }
        args = { uri: arg.uri, kernel: arg.kernel };
    } else {
        const editor = cudaEditor();
        if (!editor) {
            return;
        }
        if (editor.document.isDirty) {
            await editor.document.save();
        }
        const pos = editor.selection.active;
        args = { uri: editor.document.uri.toString(), position: { line: pos.line, character: pos.character } };
    }
    const env = server.environment.current;
    if (env && !env.optimize) {
        // say so before anything runs (the CodeLens and lightbulb already say it in their titles)
        await showEnvironment(server);
        return;
    }
    const target = args as { uri: string; kernel?: string };
    const active = vscode.window.activeTextEditor;
    const kernel = target.kernel
        ?? (active ? kernelAtLine(findKernels(active.document.getText()), active.selection.active.line)?.name : undefined);
    running = kernel ? { uri: target.uri, kernel } : undefined;
    await vscode.commands.executeCommand('setContext', 'regrapht.optimizing', running !== undefined);
    // The server reports progress (cancellable) and sends the verified edit via workspace/applyEdit,
    // annotated as needing confirmation, which VS Code shows in the refactor preview.
    // The command returns once the search started; Cancel Optimization stays offered until it is
    // used (the progress notification's Cancel button and the lightbulb's Cancel do the same).
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'ReGraphT: optimizing' },
        () => executeServerCommand(server, 'regrapht.optimizeKernel', args, undefined, true));
}

/** The optimize run this window started last: what Cancel Optimization cancels. */
let running: { uri: string; kernel: string } | undefined;

async function cancelOptimization(server: ServerManager): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const kernel = editor && editor.document.languageId === 'cuda-cpp'
        ? kernelAtLine(findKernels(editor.document.getText()), editor.selection.active.line)?.name : undefined;
    const target = editor && kernel ? { uri: editor.document.uri.toString(), kernel } : running;
    if (!target) {
        void vscode.window.showInformationMessage('ReGraphT: no optimization to cancel here: put the cursor in the kernel being optimized.');
        return;
    }
    await executeServerCommand(server, 'regrapht.cancelOptimize', target);
    running = undefined;
    await vscode.commands.executeCommand('setContext', 'regrapht.optimizing', false);
    void vscode.window.showInformationMessage(`ReGraphT: cancelled optimizing ${target.kernel}.`);
}

/** What Optimize needs and is missing here (the language status item's action). */
async function showEnvironment(server: ServerManager): Promise<void> {
    const env = server.environment.current;
    if (!env) {
        void vscode.window.showInformationMessage('ReGraphT: the server has not said yet what this machine has; see the log.');
        return;
    }
    if (env.optimize) {
        void vscode.window.showInformationMessage(`ReGraphT: Optimize runs on ${env.gpu ?? 'the GPU'} with ${env.nvcc ?? 'nvcc'}.`);
        return;
    }
    const choice = await vscode.window.showWarningMessage(cannotOptimizeMessage(env), 'Choose Interpreter', 'Show Output');
    if (choice === 'Choose Interpreter') {
        await vscode.commands.executeCommand('workbench.action.openSettings', 'regrapht.python');
    } else if (choice === 'Show Output') {
        showOutput(false);
    }
}

/** The rule page of a ReGraphT diagnostic at the cursor (else one picked from the file's). */
async function showRuleDocumentation(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
        return;
    }
    const ours = vscode.languages.getDiagnostics(editor.document.uri).filter((d) => d.source === 'regrapht'
        && typeof d.code === 'object' && d.code !== null && 'target' in d.code);
    const here = ours.filter((d) => d.range.contains(editor.selection.active));
    const seen = new Map<string, vscode.Uri>();
    for (const d of here.length > 0 ? here : ours) {
        const code = d.code as { value: string | number; target: vscode.Uri };
        seen.set(String(code.value), code.target);
    }
    if (seen.size === 0) {
        void vscode.window.showInformationMessage('ReGraphT: no ReGraphT finding in this file.');
        return;
    }
    const picked = seen.size === 1 ? [...seen.keys()][0]
        : await vscode.window.showQuickPick([...seen.keys()], { placeHolder: 'Rule' });
    const target = picked ? seen.get(picked) : undefined;
    if (target) {
        await vscode.commands.executeCommand('markdown.showPreview', target);
    }
}

async function toggleCodeLens(server: ServerManager): Promise<void> {
    const config = vscode.workspace.getConfiguration('regrapht');
    const now = config.get<boolean>('codeLens.enabled', true);
    await writeSetting('codeLens.enabled', !now);
    server.refreshCodeLenses();
}

async function showKernelReport(server: ServerManager,
    arg?: { uri?: string; kernel?: string; focusHistory?: boolean }): Promise<void> {
    let uri = arg?.uri;
    let kernel = arg?.kernel;
    if (!uri || !kernel) {
        const editor = cudaEditor();
        if (!editor) {
            return;
        }
        uri = editor.document.uri.toString();
        kernel = await kernelAtCursor(editor);
        if (!kernel) {
            return;
        }
    }
    const report = await executeServerCommand(server, 'regrapht.showKernelReport', { uri, kernel, detail: true });
    if (report === undefined || report === null) {
        return;
    }
    if (!await showReportResult(kernel, report, arg?.focusHistory === true)) {
        log.warn(`regrapht.showKernelReport returned ${JSON.stringify(report).slice(0, 200)}`);
    }
}

async function selectModelFile(): Promise<void> {
    const picked = await vscode.window.showOpenDialog({
        canSelectMany: false,
        canSelectFiles: true,
        canSelectFolders: false,
        filters: { 'GGUF model': ['gguf'] },
        openLabel: 'Use Model',
        title: 'ReGraphT: model file for the optimizer',
    });
    if (!picked || picked.length === 0) {
        return;
    }
    await writeSetting('modelPath', picked[0].fsPath);
    log.info(`regrapht.modelPath set to ${picked[0].fsPath}`);
    void vscode.window.showInformationMessage(`ReGraphT: model set to ${picked[0].fsPath}. The server loads it on the next optimize run.`);
}

export function registerCommands(context: vscode.ExtensionContext, server: ServerManager): void {
    context.subscriptions.push(
        vscode.commands.registerCommand('regrapht.optimizeKernelAtCursor',
            (arg?: { uri?: string; kernel?: string }) => optimizeKernelAtCursor(server, arg)),
        vscode.commands.registerCommand('regrapht.showKernelReportAtCursor',
            (arg?: { uri?: string; kernel?: string; focusHistory?: boolean }) => showKernelReport(server, arg)),
        vscode.commands.registerCommand('regrapht.restartServer', () => server.restart('requested by the user')),
        vscode.commands.registerCommand('regrapht.selectModelFile', () => selectModelFile()),
        vscode.commands.registerCommand('regrapht.showOutput', () => showOutput(false)),
        vscode.commands.registerCommand('regrapht.captureKernelLaunches', () => captureKernelLaunches(server)),
        vscode.commands.registerCommand('regrapht.cancelOptimization', () => cancelOptimization(server)),
        vscode.commands.registerCommand('regrapht.showEnvironment', () => showEnvironment(server)),
        vscode.commands.registerCommand('regrapht.showRuleDocumentation', () => showRuleDocumentation()),
        vscode.commands.registerCommand('regrapht.toggleCodeLens', () => toggleCodeLens(server)),
    );
}
