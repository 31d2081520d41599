// `ReGraphT: Capture kernel launches...`: runs `regrapht capture` on the configured program as a
// VS Code task (its output in the terminal), with a cancellable progress notification, then shows
// what capture.json says was captured. docs/capture.md.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { captureArguments, captureSummary, defaultOut } from './core/capture';
import { log } from './logging';
import { ServerManager } from './server';
import { SECTION, writeSetting } from './settings';

export const CAPTURE_TASK_TYPE = 'regrapht-capture';

async function programToCapture(): Promise<string | undefined> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const configured = config.get<string>('captureCommand', '');
    if (configured.trim()) {
        return configured;
    }
    const typed = await vscode.window.showInputBox({
        title: 'ReGraphT: capture kernel launches',
        prompt: 'The program to run (with its arguments); its kernel launches become benchmark specs',
        placeHolder: './build/app --frames 4',
    });
    if (typed && typed.trim()) {
        await writeSetting('captureCommand', typed);
    }
    return typed?.trim() ? typed : undefined;
}

function waitForTask(execution: vscode.TaskExecution, token: vscode.CancellationToken): Promise<number | undefined> {
    return new Promise((resolve) => {
        const subscriptions: vscode.Disposable[] = [];
        const done = (code: number | undefined) => {
            subscriptions.forEach((s) => s.dispose());
            resolve(code);
        };
        subscriptions.push(
            vscode.tasks.onDidEndTaskProcess((event) => {
                if (event.execution === execution) { done(event.exitCode); }
            }),
            vscode.tasks.onDidEndTask((event) => {
                if (event.execution === execution) { setTimeout(() => done(undefined), 500); }
            }),
            token.onCancellationRequested(() => execution.terminate()),
        );
    });
}

export async function captureKernelLaunches(server: ServerManager): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
        void vscode.window.showInformationMessage('ReGraphT: open the folder of the program to capture first.');
        return;
    }
    const python = server.pythonCommand;
    if (!python) {
        void vscode.window.showWarningMessage('ReGraphT: the server has not started yet; capture runs with its Python.');
        return;
    }
    const command = await programToCapture();
    if (!command) {
        return;
    }
    const config = vscode.workspace.getConfiguration(SECTION);
    const out = defaultOut(folder.uri.fsPath, command);
    let run: { command: string; args: string[] };
    try {
        run = captureArguments(python, {
            command, out, kernel: config.get<string>('captureKernel', ''),
            launches: config.get<number>('captureLaunches', 3), data: config.get<boolean>('captureData', true),
        });
    } catch (error) {
        void vscode.window.showErrorMessage(`ReGraphT: ${error instanceof Error ? error.message : String(error)}`);
        return;
    }
    log.info(`Capturing: ${[run.command, ...run.args].join(' ')}`);
    const task = new vscode.Task({ type: CAPTURE_TASK_TYPE, command }, folder, `capture ${command}`, 'ReGraphT',
        new vscode.ProcessExecution(run.command, run.args, { cwd: folder.uri.fsPath }));
    task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, clear: true };
    const started = Date.now();
    const exitCode = await vscode.window.withProgress({
        location: vscode.ProgressLocation.Notification, cancellable: true,
        title: `ReGraphT: capturing the kernel launches of ${command}`,
    }, async (progress, token) => {
        progress.report({ message: 'running the program (output in the terminal)' });
        const execution = await vscode.tasks.executeTask(task);
        return waitForTask(execution, token);
    });
    const manifestPath = path.join(out, 'capture.json');
    let manifest: unknown;
    try {
        // an earlier capture's manifest is not this one's (a capture that could not start writes none)
        if (fs.statSync(manifestPath).mtimeMs >= started - 1000) {
            manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
        }
    } catch (error) {
        log.warn(`cannot read ${manifestPath}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const summary = `ReGraphT: ${captureSummary(manifest, exitCode)}`;
    log.info(summary);
    const specs = path.join(out, 'specs');
    const show = manifest === undefined || exitCode !== 0 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    const choice = await show(summary, ...(fs.existsSync(specs) ? ['Show Specs'] : []));
    if (choice === 'Show Specs') {
        await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(specs));
    }
}
