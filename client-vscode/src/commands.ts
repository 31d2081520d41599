import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';
import { captureKernelLaunches } from './capture';
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
    // The server reports progress (cancellable) and sends the verified edit via workspace/applyEdit,
    // annotated as needing confirmation, which VS Code shows in the refactor preview.
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'ReGraphT: optimizing' },
        () => executeServerCommand(server, 'regrapht.optimizeKernel', args, undefined, true));
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
    );
}
