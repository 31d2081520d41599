import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { asReportData, outcomeActions, parseReportMessage, reportHtml, ReportData, ReportMessage } from './core/report';
import { log } from './logging';

/** The kernel report: a webview drawn from the server's report data (core/report.ts), with
 * `regrapht-report:` read-only documents for candidate diffs and, for an older server that
 * answers Markdown only, a Markdown preview. */
const SCHEME = 'regrapht-report';

class ReportContentProvider implements vscode.TextDocumentContentProvider {
    private readonly reports = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;

    set(uri: vscode.Uri, text: string): void {
        this.reports.set(uri.toString(), text);
        this.changed.fire(uri);
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.reports.get(uri.toString()) ?? '';
    }
}

const provider = new ReportContentProvider();

/** Open report panels by kernel (uri + name): a second Show Report reuses the panel. */
const panels = new Map<string, vscode.WebviewPanel>();
/** The data each open panel shows (its buttons act on it). */
const shownData = new Map<string, ReportData>();

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

function safeName(kernel: string): string {
    return kernel.replace(/[^\w.-]/g, '_') || 'kernel';
}

/** A Markdown report (a server without report data). */
export async function showReport(kernel: string, markdown: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${safeName(kernel)} report.md` });
    provider.set(uri, markdown);
    try {
        await vscode.commands.executeCommand('markdown.showPreviewToSide', uri);
    } catch (error) {
        log.debug(`Markdown preview unavailable (${String(error)}); opening the report as text`);
        const doc = await vscode.workspace.openTextDocument(uri);
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    }
}

async function act(data: ReportData, message: ReportMessage): Promise<void> {
    switch (message.type) {
        case 'rerun':
            await vscode.commands.executeCommand('regrapht.optimizeKernelAtCursor', { uri: data.uri, kernel: data.kernel });
            return;
        case 'openDoc': {
            const uri = vscode.Uri.parse(message.uri);
            if (uri.scheme === 'file' && uri.path.endsWith('.md')) {
                await vscode.commands.executeCommand('markdown.showPreview', uri);
            } else {
                await vscode.commands.executeCommand('vscode.open', uri);
            }
            return;
        }
        case 'openLine': {
            const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(data.uri));
            const at = new vscode.Position(message.line, 0);
            await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, selection: new vscode.Range(at, at) });
            return;
        }
        case 'diff': {
            const run = data.run;
            const candidate = run?.candidates.find((c) => c.index === message.index);
            if (!run || candidate?.source === undefined) {
                return;
            }
            const name = safeName(data.kernel);
            const before = vscode.Uri.from({ scheme: SCHEME, path: `/${name} searched.cu` });
            const after = vscode.Uri.from({ scheme: SCHEME, path: `/${name} candidate ${candidate.index}.cu` });
            provider.set(before, run.original);
            provider.set(after, candidate.source);
            const path = candidate.techniques.join(' → ') || 'original';
            await vscode.commands.executeCommand('vscode.diff', before, after,
                `${data.kernel}: candidate ${candidate.index} (${path}, ${candidate.outcome})`, { viewColumn: vscode.ViewColumn.Beside });
            return;
        }
    }
}

/** The report webview (the server's report data), or the Markdown preview for a plain answer. */
export async function showReportResult(kernel: string, result: unknown, focusHistory = false): Promise<boolean> {
    const data = asReportData(result);
    if (!data) {
        const markdown = reportMarkdown(result);
        if (markdown === undefined) {
            return false;
        }
        await showReport(kernel, markdown);
        return true;
    }
    const key = `${data.uri}#${data.kernel}`;
    shownData.set(key, data);
    let panel = panels.get(key);
    if (panel) {
        panel.reveal(vscode.ViewColumn.Beside, false);
    } else {
        const created = vscode.window.createWebviewPanel('regrapht.kernelReport', `${data.kernel} report`,
            vscode.ViewColumn.Beside, { enableScripts: true, enableFindWidget: true, localResourceRoots: [] });
        const listener = created.webview.onDidReceiveMessage((raw: unknown) => {
            const message = parseReportMessage(raw);
            const current = shownData.get(key);
            if (message && current) {
                void act(current, message).catch((error: unknown) => log.error(`report action failed: ${String(error)}`));
            }
        });
        created.onDidDispose(() => {
            listener.dispose();
            panels.delete(key);
            shownData.delete(key);
        });
        panels.set(key, created);
        panel = created;
    }
    panel.webview.html = reportHtml(data, panel.webview.cspSource, crypto.randomBytes(16).toString('base64'), focusHistory);
    return true;
}

/** `regrapht/optimizeOutcome {uri, kernel, message}`: how a run ended, with "Show why" (the
 * report's run history) or "Show Report". */
export function showOutcome(params: unknown): void {
    if (!params || typeof params !== 'object') {
        return;
    }
    const { uri, kernel, message } = params as { uri?: unknown; kernel?: unknown; message?: unknown };
    if (typeof uri !== 'string' || typeof kernel !== 'string' || typeof message !== 'string') {
        return;
    }
    log.info(message);
    void vscode.window.showInformationMessage(message, ...outcomeActions(message)).then((choice) => {
        if (choice) {
            void vscode.commands.executeCommand('regrapht.showKernelReportAtCursor', { uri, kernel, focusHistory: choice === 'Show why' });
        }
    });
}
