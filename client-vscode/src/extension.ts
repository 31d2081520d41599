// Wiring only: logging, status, server lifecycle, commands and configuration listeners.
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { createOutputChannel, log } from './logging';
import { onPythonInterpreterChanged } from './python';
import { registerReportProvider } from './report';
import { ServerManager } from './server';
import { SECTION } from './settings';
import { StatusItem } from './status';

let server: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    context.subscriptions.push(createOutputChannel());
    log.info(`ReGraphT ${context.extension.packageJSON.version as string} activating`);
    context.subscriptions.push(registerReportProvider());
    const status = new StatusItem();
    context.subscriptions.push(status);
    server = new ServerManager(context, status);
    registerCommands(context, server);

    context.subscriptions.push(
        vscode.workspace.onDidChangeConfiguration((event) => {
            // Other regrapht.* keys reach the running server via didChangeConfiguration (synchronize).
            if (event.affectsConfiguration(`${SECTION}.python`)) {
                void server?.restart('regrapht.python changed');
            }
        }),
        await onPythonInterpreterChanged(() => {
            if (vscode.workspace.getConfiguration(SECTION).get<string>('python', '') === '') {
                void server?.restart('the Python extension selected another interpreter');
            }
        }),
    );
    void server.restart('activation');
}

export async function deactivate(): Promise<void> {
    await server?.dispose();
    server = undefined;
}
