// Restart policy and the guard that keeps restarts from overlapping. No `vscode` import.

export interface CrashPolicyOptions {
    /** Automatic restarts allowed inside `windowMs`; one more crash stops the server. */
    maxRestarts: number;
    windowMs: number;
    /** Delay before the first automatic restart; doubled for each further crash in the window. */
    baseDelayMs: number;
    maxDelayMs: number;
}

export const DEFAULT_CRASH_POLICY: CrashPolicyOptions = {
    maxRestarts: 4,
    windowMs: 3 * 60_000,
    baseDelayMs: 500,
    maxDelayMs: 8_000,
};

export type CrashDecision =
    | { restart: true; delayMs: number; attempt: number }
    | { restart: false; reason: string };

/** Decides whether a crashed server is started again, and after how long. */
export class CrashPolicy {
    private crashes: number[] = [];

    constructor(private readonly options: CrashPolicyOptions = DEFAULT_CRASH_POLICY) {}

    recordCrash(now: number): CrashDecision {
        this.crashes = this.crashes.filter((t) => now - t < this.options.windowMs);
        this.crashes.push(now);
        const n = this.crashes.length;
        if (n > this.options.maxRestarts) {
            const minutes = Math.round(this.options.windowMs / 60_000);
            return {
                restart: false,
                reason: `the server stopped ${n} times in the last ${minutes} minute${minutes === 1 ? '' : 's'}`,
            };
        }
        const delayMs = Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (n - 1));
        return { restart: true, delayMs, attempt: n };
    }

    /** A manual restart or a configuration change starts a fresh budget. */
    reset(): void {
        this.crashes = [];
    }

    get recentCrashes(): number {
        return this.crashes.length;
    }
}

/**
 * Runs one async task at a time. A request made while a run is in progress does not start a
 * second concurrent run: all such requests share one follow-up run after the current one ends.
 */
export class SerialRunner {
    private running: Promise<void> | undefined;
    private queued: Promise<void> | undefined;

    constructor(private readonly task: () => Promise<void>) {}

    get busy(): boolean {
        return this.running !== undefined;
    }

    run(): Promise<void> {
        if (this.running === undefined) {
            this.running = this.start();
            return this.running;
        }
        if (this.queued === undefined) {
            const current = this.running;
            this.queued = current.catch(() => undefined).then(() => {
                this.queued = undefined;
                this.running = this.start();
                return this.running;
            });
        }
        return this.queued;
    }

    private async start(): Promise<void> {
        try {
            await this.task();
        } finally {
            this.running = undefined;
        }
    }
}
