import * as vscode from 'vscode';

/** The single "ReGraphT" output channel: client messages, pip output and the server's stderr. */
let channel: vscode.LogOutputChannel | undefined;

export function createOutputChannel(): vscode.LogOutputChannel {
    channel ??= vscode.window.createOutputChannel('ReGraphT', { log: true });
    return channel;
}

export function outputChannel(): vscode.LogOutputChannel {
    return createOutputChannel();
}

export const log = {
    info: (message: string) => outputChannel().info(message),
    warn: (message: string) => outputChannel().warn(message),
    error: (message: string | Error) => outputChannel().error(message),
    debug: (message: string) => outputChannel().debug(message),
    /** Raw text (subprocess output) without a timestamp prefix. */
    raw: (text: string) => outputChannel().append(text),
};

export function showOutput(preserveFocus = true): void {
    outputChannel().show(preserveFocus);
}
