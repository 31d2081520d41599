import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';
import { Environment, languageStatusView, parseEnvironment } from './core/environment';
import { log } from './logging';

/**
 * The language status item beside `{} CUDA C++` (as clangd and cpptools place theirs): what
 * Optimize can use on this machine (GPU and its name, nvcc, pycuda, the model), from the server's
 * `regrapht.environment`, with an action (the log, or the settings where something is missing).
 */
export class EnvironmentStatus implements vscode.Disposable {
    private readonly item: vscode.LanguageStatusItem;
    private found: Environment | undefined;

    constructor() {
        this.item = vscode.languages.createLanguageStatusItem('regrapht.environment', { language: 'cuda-cpp' });
        this.item.name = 'ReGraphT environment';
        this.render();
    }

    get current(): Environment | undefined {
        return this.found;
    }

    /** Ask the running server again (after a start or a settings change). */
    async refresh(client: LanguageClient): Promise<void> {
        this.item.busy = true;
        try {
            const reply = await client.sendRequest(ExecuteCommandRequest.type, { command: 'regrapht.environment', arguments: [{}] });
            this.found = parseEnvironment(reply);
            if (!this.found) {
                log.warn(`regrapht.environment returned ${JSON.stringify(reply)}`);
            }
        } catch (error) {
            log.warn(`regrapht.environment failed: ${error instanceof Error ? error.message : String(error)}`);
            this.found = undefined;
        } finally {
            this.item.busy = false;
            this.render();
        }
    }

    private render(): void {
        const view = languageStatusView(this.found);
        this.item.text = view.text;
        this.item.detail = view.detail;
        this.item.severity = view.severity === 'warning' ? vscode.LanguageStatusSeverity.Warning : vscode.LanguageStatusSeverity.Information;
        this.item.command = this.found && !this.found.optimize
            ? { title: 'What Optimize needs', command: 'regrapht.showEnvironment' }
            : { title: 'Show Log', command: 'regrapht.showOutput' };
    }

    dispose(): void {
        this.item.dispose();
    }
}
