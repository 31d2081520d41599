import * as vscode from 'vscode';
import { ClientPhase, StatusModel } from './core/status';

/** Status bar item mirroring the client phase and the server's `regrapht/status`. */
export class StatusItem implements vscode.Disposable {
    private readonly item: vscode.StatusBarItem;
    private readonly model = new StatusModel();

    constructor() {
        this.item = vscode.window.createStatusBarItem('regrapht.status', vscode.StatusBarAlignment.Left, 10);
        this.item.name = 'ReGraphT';
        this.item.command = 'regrapht.showOutput';
        this.render();
        this.item.show();
    }

    setPhase(phase: ClientPhase, detail?: string): void {
        this.model.setPhase(phase, detail);
        this.render();
    }

    setInterpreter(description: string | undefined): void {
        this.model.setInterpreter(description);
        this.render();
    }

    /** Handler for the `regrapht/status` notification. */
    serverStatus(params: unknown): void {
        if (this.model.serverStatus(params)) {
            this.render();
        }
    }

    get phase(): ClientPhase {
        return this.model.current.phase;
    }

    private render(): void {
        const view = this.model.view();
        const icon = view.busy ? '$(sync~spin)' : view.severity === 'error' ? '$(error)' : view.severity === 'warning' ? '$(warning)' : '$(zap)';
        this.item.text = `${icon} ${view.text}`;
        this.item.tooltip = view.tooltip;
        this.item.accessibilityInformation = { label: view.text.replace(/^ReGraphT:?\s*/, 'ReGraphT ') };
        this.item.backgroundColor = view.severity === 'error'
            ? new vscode.ThemeColor('statusBarItem.errorBackground')
            : view.severity === 'warning' && this.model.current.phase !== 'restarting'
                ? new vscode.ThemeColor('statusBarItem.warningBackground')
                : undefined;
    }

    dispose(): void {
        this.item.dispose();
    }
}
