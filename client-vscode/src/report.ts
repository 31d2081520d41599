import * as vscode from 'vscode';
import { log } from './logging';

/** Read-only `regrapht-report:` documents holding kernel reports, shown as Markdown previews. */
const SCHEME = 'regrapht-report';

class ReportContentProvider implements vscode.TextDocumentContentProvider {
    private readonly reports = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;

    set(uri: vscode.Uri, markdown: string): void {
        this.reports.set(uri.toString(), markdown);
        this.changed.fire(uri);
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.reports.get(uri.toString()) ?? '';
    }
}

const provider = new ReportContentProvider();

export function registerReportProvider(): vscode.Disposable {
    return vscode.workspace.registerTextDocumentContentProvider(SCHEME, provider);
}

/** The server's answer to `regrapht.showKernelReport` as Markdown text. */
export function reportMarkdown(result: unknown): string | undefined {
    if (typeof result === 'string') {
        return result;
    }
    if (result && typeof result === 'object' && typeof (result as { markdown?: unknown }).markdown === 'string') {
        return (result as { markdown: string }).markdown;
    }
    return undefined;
}

export async function showReport(kernel: string, markdown: string): Promise<void> {
    const safe = kernel.replace(/[^\w.-]/g, '_') || 'kernel';
    const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${safe} report.md` });
    provider.set(uri, markdown);
    try {
        await vscode.commands.executeCommand('markdown.showPreviewToSide', uri);
    } catch (error) {
        log.debug(`Markdown preview unavailable (${String(error)}); opening the report as text`);
        const doc = await vscode.workspace.openTextDocument(uri);
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    }
}
