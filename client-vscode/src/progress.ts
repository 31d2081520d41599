import * as vscode from 'vscode';
import {
    BaseLanguageClient, ProgressToken, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressCancelNotification,
    WorkDoneProgressCreateRequest, WorkDoneProgressReport,
} from 'vscode-languageclient/node';

/**
 * Shows one LSP work-done progress token. vscode-languageclient 9 puts server progress in the
 * status bar only (ProgressLocation.Window, which cannot be cancelled); cancellable progress such
 * as an optimize run belongs in a notification with a Cancel button that sends
 * `window/workDoneProgress/cancel`.
 */
export class LspProgress implements vscode.Disposable {
    private readonly subscription: vscode.Disposable;
    private progress?: vscode.Progress<{ message?: string; increment?: number }>;
    private finish?: () => void;
    private lastPercentage = 0;
    private ended = false;

    constructor(private readonly client: BaseLanguageClient, private readonly token: ProgressToken,
        private readonly onDone?: () => void) {
        this.subscription = client.onProgress(WorkDoneProgress.type, token, (value) => {
            switch (value.kind) {
                case 'begin':
                    this.begin(value);
                    break;
                case 'report':
                    this.report(value);
                    break;
                case 'end':
                    this.done();
                    break;
            }
        });
    }

    private begin(params: WorkDoneProgressBegin): void {
        if (this.ended || this.progress) {
            return;
        }
        void vscode.window.withProgress({
            location: params.cancellable ? vscode.ProgressLocation.Notification : vscode.ProgressLocation.Window,
            title: `ReGraphT: ${params.title}`,
            cancellable: params.cancellable === true,
        }, (progress, cancellation) => new Promise<void>((resolve) => {
            this.progress = progress;
            this.finish = resolve;
            cancellation.onCancellationRequested(() => {
                void this.client.sendNotification(WorkDoneProgressCancelNotification.type, { token: this.token });
            });
            if (this.ended) {
                resolve();
                return;
            }
            this.report({ kind: 'report', message: params.message, percentage: params.percentage });
        }));
    }

    private report(params: WorkDoneProgressReport): void {
        if (!this.progress) {
            return;
        }
        let increment: number | undefined;
        if (typeof params.percentage === 'number') {
            const pct = Math.max(0, Math.min(100, params.percentage));
            increment = Math.max(0, pct - this.lastPercentage);
            this.lastPercentage = Math.max(this.lastPercentage, pct);
        }
        this.progress.report({ message: params.message, increment });
    }

    private done(): void {
        this.ended = true;
        this.finish?.();
        this.dispose();
        this.onDone?.();
    }

    dispose(): void {
        this.subscription.dispose();
        if (!this.ended) {
            this.ended = true;
            this.finish?.();
        }
    }
}

/** Replace the client's `window/workDoneProgress/create` handler by one that uses LspProgress. */
export function handleServerCreatedProgress(client: BaseLanguageClient): vscode.Disposable {
    const active = new Map<string, LspProgress>();
    const handler = client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
        const key = String(token);
        active.get(key)?.dispose();
        active.set(key, new LspProgress(client, token, () => active.delete(key)));
    });
    return new vscode.Disposable(() => {
        handler.dispose();
        for (const part of active.values()) {
            part.dispose();
        }
        active.clear();
    });
}
