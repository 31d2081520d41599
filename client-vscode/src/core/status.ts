// The status item's state machine: client lifecycle + the server's `regrapht/status`. No `vscode`.

export type ClientPhase = 'stopped' | 'resolving' | 'installing' | 'starting' | 'running' | 'restarting' | 'failed';
export type ServerState = 'starting' | 'ready' | 'modelLoading' | 'searching' | 'validating' | 'error';

export const SERVER_STATES: readonly ServerState[] = ['starting', 'ready', 'modelLoading', 'searching', 'validating', 'error'];

export interface StatusSnapshot {
    phase: ClientPhase;
    /** Latest `regrapht/status` from the running server. */
    server?: { state: ServerState; message: string };
    /** Why the client is stopped/failed, shown in the tooltip. */
    detail?: string;
    /** Interpreter and server version, for the tooltip. */
    interpreter?: string;
}

export interface StatusView {
    text: string;
    tooltip: string;
    busy: boolean;
    severity: 'info' | 'warning' | 'error';
}

/** Validate an incoming `regrapht/status` payload; undefined if it is not one. */
export function parseServerStatus(params: unknown): { state: ServerState; message: string } | undefined {
    if (!params || typeof params !== 'object') {
        return undefined;
    }
    const p = params as Record<string, unknown>;
    if (typeof p.state !== 'string' || !SERVER_STATES.includes(p.state as ServerState)) {
        return undefined;
    }
    return { state: p.state as ServerState, message: typeof p.message === 'string' ? p.message : '' };
}

export class StatusModel {
    private snapshot: StatusSnapshot = { phase: 'stopped' };

    get current(): Readonly<StatusSnapshot> {
        return this.snapshot;
    }

    setPhase(phase: ClientPhase, detail?: string): void {
        // A new client lifecycle phase makes the previous server report stale.
        const keepServer = phase === 'running' ? this.snapshot.server : undefined;
        this.snapshot = { ...this.snapshot, phase, detail, server: keepServer };
    }

    setInterpreter(description: string | undefined): void {
        this.snapshot = { ...this.snapshot, interpreter: description };
    }

    /** Apply a `regrapht/status` notification; ignored unless the client is running. */
    serverStatus(params: unknown): boolean {
        const parsed = parseServerStatus(params);
        if (!parsed || this.snapshot.phase !== 'running') {
            return false;
        }
        this.snapshot = { ...this.snapshot, server: parsed };
        return true;
    }

    view(): StatusView {
        const s = this.snapshot;
        const lines: string[] = [];
        const add = (line: string | undefined) => {
            if (line) {
                lines.push(line);
            }
        };
        let view: Omit<StatusView, 'tooltip'>;
        switch (s.phase) {
            case 'stopped':
                view = { text: 'ReGraphT: stopped', busy: false, severity: 'warning' };
                break;
            case 'resolving':
                view = { text: 'ReGraphT: finding Python', busy: true, severity: 'info' };
                break;
            case 'installing':
                view = { text: 'ReGraphT: installing server', busy: true, severity: 'info' };
                break;
            case 'starting':
                view = { text: 'ReGraphT: starting', busy: true, severity: 'info' };
                break;
            case 'restarting':
                view = { text: 'ReGraphT: restarting', busy: true, severity: 'warning' };
                break;
            case 'failed':
                view = { text: 'ReGraphT: error', busy: false, severity: 'error' };
                break;
            case 'running':
                view = runningView(s.server);
                break;
        }
        add(s.detail);
        if (s.phase === 'running' && s.server?.message) {
            add(s.server.message);
        }
        add(s.interpreter);
        add('Click to show the ReGraphT log.');
        return { ...view, tooltip: lines.join('\n') };
    }
}

function runningView(server: StatusSnapshot['server']): Omit<StatusView, 'tooltip'> {
    const msg = server?.message ? ` (${shorten(server.message, 40)})` : '';
    switch (server?.state) {
        case undefined:
        case 'ready':
            return { text: 'ReGraphT', busy: false, severity: 'info' };
        case 'starting':
            return { text: 'ReGraphT: starting', busy: true, severity: 'info' };
        case 'modelLoading':
            return { text: `ReGraphT: loading model${msg}`, busy: true, severity: 'info' };
        case 'searching':
            return { text: `ReGraphT: searching${msg}`, busy: true, severity: 'info' };
        case 'validating':
            return { text: `ReGraphT: validating${msg}`, busy: true, severity: 'info' };
        case 'error':
            return { text: 'ReGraphT: error', busy: false, severity: 'error' };
    }
}

function shorten(text: string, max: number): string {
    const oneLine = text.replace(/\s+/g, ' ').trim();
    return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}
