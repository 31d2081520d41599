// What Optimize needs on this machine (the server's `regrapht.environment`), as the language
// status item, the Optimize CodeLens and the command show it. No `vscode`.

export interface Environment {
    gpu: string | null;
    gpuReason: string;
    nvcc: string | null;
    pycuda: boolean;
    model: string | null;
    modelReason: string;
    optimize: boolean;
    missing: string[];
}

/** Validate a `regrapht.environment` reply; undefined if it is not one (an older server). */
export function parseEnvironment(reply: unknown): Environment | undefined {
    if (!reply || typeof reply !== 'object') {
        return undefined;
    }
    const r = reply as Record<string, unknown>;
    const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
    if (typeof r.optimize !== 'boolean' || !Array.isArray(r.missing)) {
        return undefined;
    }
    return {
        gpu: text(r.gpu),
        gpuReason: typeof r.gpuReason === 'string' ? r.gpuReason : '',
        nvcc: text(r.nvcc),
        pycuda: r.pycuda === true,
        model: text(r.model),
        modelReason: typeof r.modelReason === 'string' ? r.modelReason : '',
        optimize: r.optimize,
        missing: r.missing.filter((m): m is string => typeof m === 'string'),
    };
}

export interface LanguageStatusView {
    /** Short text beside `{} CUDA C++`. */
    text: string;
    /** One line per thing Optimize needs, found or not. */
    detail: string;
    severity: 'info' | 'warning';
}

export function languageStatusView(env: Environment | undefined): LanguageStatusView {
    if (!env) {
        return { text: 'ReGraphT: checking GPU…', detail: 'Asking the server what Optimize can use here.', severity: 'info' };
    }
    const lines = [
        env.gpu ? `GPU: ${env.gpu}` : `GPU: none${env.gpuReason ? ` (${env.gpuReason})` : ''}`,
        env.nvcc ? `nvcc: ${env.nvcc}` : 'nvcc: not found on PATH',
        `pycuda: ${env.pycuda ? 'installed' : 'not installed'}`,
        env.model ? `Model: ${env.model}` : `Model: none${env.modelReason ? ` (${env.modelReason})` : ''}`,
    ];
    if (env.optimize) {
        return { text: `ReGraphT: ${env.gpu ?? 'GPU'}`, detail: lines.join(' · '), severity: 'info' };
    }
    return { text: 'ReGraphT: no Optimize', detail: `Optimize needs ${env.missing.join(', ')}. ${lines.join(' · ')}`, severity: 'warning' };
}

/** The Optimize CodeLens/lightbulb title: "Optimize", or what it needs here, before a click. */
export function optimizeTitle(title: string, env: Environment | undefined): string {
    if (!env || env.optimize || !/^Optimize\b/.test(title)) {
        return title;
    }
    return `${title} (needs ${env.missing.map(shortNeed).join(', ')})`;
}

/** "a CUDA GPU (no device found)" -> "a CUDA GPU": the lens keeps to the point, the status item says why. */
export function shortNeed(need: string): string {
    return need.replace(/\s*\(.*\)$/, '');
}

/** The message of the Optimize command where it cannot run. */
export function cannotOptimizeMessage(env: Environment): string {
    return `ReGraphT: Optimize needs ${env.missing.join(', ')}. Diagnostics, hovers and quick fixes work without them.`;
}
