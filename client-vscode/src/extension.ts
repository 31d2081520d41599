// Wiring only: logging, status, server lifecycle, commands and configuration listeners.
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { createOutputChannel, log } from './logging';
import { onPythonInterpreterChanged } from './python';
import { registerReportProvider } from './report';
import { ServerManager } from './server';
import { EnvironmentStatus } from './environment';
import { SECTION } from './settings';
import { StatusItem } from './status';

let server: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    context.subscriptions.push(createOutputChannel());
    log.info(`ReGraphT ${context.extension.packageJSON.version as string} activating`);
    context.subscriptions.push(registerReportProvider());
    const status = new StatusItem();
    context.subscriptions.push(status);
    const environment = new EnvironmentStatus();
    context.subscriptions.push(environment);
    server = new ServerManager(context, status, environment);
    registerCommands(context, server);

    context.subscriptions.push(
        vscode.workspace.onDidChangeConfiguration((event) => {
            // Other regrapht.* keys reach the running server via didChangeConfiguration (synchronize).
            if (event.affectsConfiguration(`${SECTION}.python`)) {
                void server?.restart('regrapht.python changed');
            } else if (event.affectsConfiguration(`${SECTION}.codeLens.enabled`)) {
                server?.refreshCodeLenses();
            } else if (event.affectsConfiguration(`${SECTION}.modelPath`)) {
                const client = server?.languageClient;
                if (client) {
                    void environment.refresh(client);
                }
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
