// Settings normalisation for the `regrapht` section. No `vscode` import: unit-tested with node --test.
// Keys and defaults are the contract in docs/architecture.md ("Client <-> server protocol").

export type Severity = 'error' | 'warning' | 'information' | 'hint';
export type LogLevel = 'error' | 'warning' | 'info' | 'debug';
export type SearchStrategy = 'mcgs' | 'random' | 'greedy' | 'cot' | 'rules';

/** What the server receives (workspace/configuration section `regrapht`, initializationOptions). */
export interface ServerSettings {
    enabledRules: string[];
    severityOverrides: Record<string, Severity>;
    debounceMs: number;
    modelPath: string;
    modelGpuLayers: number;
    modelThreads: number;
    modelContext: number;
    arch: string;
    searchBudget: number;
    searchStrategy: SearchStrategy;
    backgroundValidation: boolean;
    compilerConfirmation: boolean;
    logLevel: LogLevel;
    compileCommands: string;
    extraCompilerArgs: string[];
    allowFastMath: boolean;
    sanitize: boolean;
    profileEnabled: boolean;
}

/** Everything the client reads; `python` never goes to the server. */
export interface ClientSettings extends ServerSettings {
    python: string;
}

export const DEFAULT_SETTINGS: Readonly<ClientSettings> = Object.freeze({
    python: '',
    enabledRules: [],
    severityOverrides: {},
    debounceMs: 150,
    modelPath: '',
    modelGpuLayers: 0,
    modelThreads: 0,
    modelContext: 4096,
    arch: '',
    searchBudget: 24,
    searchStrategy: 'mcgs',
    backgroundValidation: false,
    compilerConfirmation: true,
    logLevel: 'info',
    compileCommands: '',
    extraCompilerArgs: [],
    allowFastMath: true,
    sanitize: true,
    profileEnabled: false,
});

export const SERVER_KEYS: readonly (keyof ServerSettings)[] = [
    'enabledRules', 'severityOverrides', 'debounceMs', 'modelPath', 'modelGpuLayers',
    'modelThreads', 'modelContext', 'arch', 'searchBudget', 'searchStrategy',
    'backgroundValidation', 'compilerConfirmation', 'logLevel', 'compileCommands', 'extraCompilerArgs',
    'allowFastMath', 'sanitize', 'profileEnabled',
];

/** Keys whose change needs a new server process rather than a configuration push. */
export const RESTART_KEYS: readonly string[] = ['python'];

const SEVERITIES: readonly Severity[] = ['error', 'warning', 'information', 'hint'];
const LOG_LEVELS: readonly LogLevel[] = ['error', 'warning', 'info', 'debug'];
const STRATEGIES: readonly SearchStrategy[] = ['mcgs', 'random', 'greedy', 'cot', 'rules'];

export interface PathContext {
    home: string;
    workspaceFolder?: string;
}

export interface Normalized {
    settings: ClientSettings;
    /** Human-readable notes about values that were replaced by defaults. */
    problems: string[];
}

/** Expand `~`, `${userHome}`, `${workspaceFolder}` and `${env:NAME}` in a path setting. */
export function expandPath(value: string, ctx: PathContext, env: Record<string, string | undefined> = {}): string {
    let out = value.trim();
    if (out === '') {
        return out;
    }
    if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) {
        out = ctx.home + out.slice(1);
    }
    out = out.replace(/\$\{userHome\}/g, ctx.home);
    if (ctx.workspaceFolder !== undefined) {
        out = out.replace(/\$\{workspaceFolder\}/g, ctx.workspaceFolder);
    }
    out = out.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => env[name] ?? '');
    return out;
}

function int(raw: unknown, key: string, min: number, max: number, problems: string[]): number {
    const fallback = DEFAULT_SETTINGS[key as keyof ClientSettings] as number;
    if (raw === undefined || raw === null) {
        return fallback;
    }
    const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
        problems.push(`regrapht.${key}: expected an integer, got ${JSON.stringify(raw)}; using ${fallback}`);
        return fallback;
    }
    const rounded = Math.trunc(value);
    const clamped = Math.min(max, Math.max(min, rounded));
    if (clamped !== value) {
        problems.push(`regrapht.${key}: ${value} is outside [${min}, ${max}] or not an integer; using ${clamped}`);
    }
    return clamped;
}

function str(raw: unknown, key: string, problems: string[]): string {
    if (raw === undefined || raw === null) {
        return DEFAULT_SETTINGS[key as keyof ClientSettings] as string;
    }
    if (typeof raw !== 'string') {
        problems.push(`regrapht.${key}: expected a string; using the default`);
        return DEFAULT_SETTINGS[key as keyof ClientSettings] as string;
    }
    return raw.trim();
}

function oneOf<T extends string>(raw: unknown, key: string, allowed: readonly T[], problems: string[],
    aliases: Record<string, T> = {}): T {
    const fallback = DEFAULT_SETTINGS[key as keyof ClientSettings] as T;
    if (raw === undefined || raw === null) {
        return fallback;
    }
    const lowered = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
    const value = (aliases[lowered] ?? lowered) as T;
    if (allowed.includes(value)) {
        return value;
    }
    problems.push(`regrapht.${key}: ${JSON.stringify(raw)} is not one of ${allowed.join(', ')}; using ${fallback}`);
    return fallback;
}

/** Turn whatever is in the user's settings into well-typed values (never throws). */
export function normalizeSettings(raw: Record<string, unknown> | undefined, ctx?: PathContext,
    env: Record<string, string | undefined> = {}): Normalized {
    const r = raw ?? {};
    const problems: string[] = [];
    const expand = (p: string) => (ctx ? expandPath(p, ctx, env) : p);

    const rulesRaw = r.enabledRules;
    let enabledRules: string[] = [];
    if (Array.isArray(rulesRaw)) {
        const seen = new Set<string>();
        for (const item of rulesRaw) {
            if (typeof item !== 'string' || item.trim() === '') {
                problems.push(`regrapht.enabledRules: ignoring ${JSON.stringify(item)}`);
                continue;
            }
            const code = item.trim().toUpperCase();
            if (!seen.has(code)) {
                seen.add(code);
                enabledRules.push(code);
            }
        }
    } else if (rulesRaw !== undefined && rulesRaw !== null) {
        problems.push('regrapht.enabledRules: expected a list of rule codes; running all rules');
        enabledRules = [];
    }

    const severityOverrides: Record<string, Severity> = {};
    const sevRaw = r.severityOverrides;
    if (sevRaw && typeof sevRaw === 'object' && !Array.isArray(sevRaw)) {
        for (const [code, sev] of Object.entries(sevRaw as Record<string, unknown>)) {
            const s = typeof sev === 'string' ? sev.trim().toLowerCase() : '';
            const mapped = (s === 'info' ? 'information' : s) as Severity;
            if (SEVERITIES.includes(mapped)) {
                severityOverrides[code.trim().toUpperCase()] = mapped;
            } else {
                problems.push(`regrapht.severityOverrides.${code}: ${JSON.stringify(sev)} is not one of ${SEVERITIES.join(', ')}`);
            }
        }
    } else if (sevRaw !== undefined && sevRaw !== null) {
        problems.push('regrapht.severityOverrides: expected an object {code: severity}');
    }

    let arch = str(r.arch, 'arch', problems).toLowerCase();
    if (/^[0-9]+[a-z]?$/.test(arch)) {
        arch = `sm_${arch}`; // "90" -> "sm_90"
    }
    if (arch !== '' && !/^sm_[0-9]+[a-z]?$/.test(arch)) {
        problems.push(`regrapht.arch: ${JSON.stringify(arch)} is not like sm_90; using the device's`);
        arch = '';
    }

    const backgroundValidation = typeof r.backgroundValidation === 'boolean'
        ? r.backgroundValidation
        : DEFAULT_SETTINGS.backgroundValidation;
    if (r.backgroundValidation !== undefined && typeof r.backgroundValidation !== 'boolean') {
        problems.push('regrapht.backgroundValidation: expected true or false');
    }
    const compilerConfirmation = typeof r.compilerConfirmation === 'boolean'
        ? r.compilerConfirmation
        : DEFAULT_SETTINGS.compilerConfirmation;
    if (r.compilerConfirmation !== undefined && typeof r.compilerConfirmation !== 'boolean') {
        problems.push('regrapht.compilerConfirmation: expected true or false');
    }

    const allowFastMath = typeof r.allowFastMath === 'boolean' ? r.allowFastMath : DEFAULT_SETTINGS.allowFastMath;
    if (r.allowFastMath !== undefined && typeof r.allowFastMath !== 'boolean') {
        problems.push('regrapht.allowFastMath: expected true or false');
    }

    const sanitize = typeof r.sanitize === 'boolean' ? r.sanitize : DEFAULT_SETTINGS.sanitize;
    if (r.sanitize !== undefined && typeof r.sanitize !== 'boolean') {
        problems.push('regrapht.sanitize: expected true or false');
    }

    const profileEnabled = typeof r.profileEnabled === 'boolean' ? r.profileEnabled : DEFAULT_SETTINGS.profileEnabled;
    if (r.profileEnabled !== undefined && typeof r.profileEnabled !== 'boolean') {
        problems.push('regrapht.profile.enabled: expected true or false');
    }

    const extraCompilerArgs: string[] = [];
    if (Array.isArray(r.extraCompilerArgs)) {
        for (const item of r.extraCompilerArgs) {
            if (typeof item === 'string' && item.trim() !== '') {
                extraCompilerArgs.push(item.trim());
            } else {
                problems.push(`regrapht.extraCompilerArgs: ignoring ${JSON.stringify(item)}`);
            }
        }
    } else if (r.extraCompilerArgs !== undefined && r.extraCompilerArgs !== null) {
        problems.push('regrapht.extraCompilerArgs: expected a list of strings; using none');
    }

    const settings: ClientSettings = {
        python: expand(str(r.python, 'python', problems)),
        enabledRules,
        severityOverrides,
        debounceMs: int(r.debounceMs, 'debounceMs', 0, 10_000, problems),
        modelPath: expand(str(r.modelPath, 'modelPath', problems)),
        modelGpuLayers: int(r.modelGpuLayers, 'modelGpuLayers', -1, 100_000, problems),
        modelThreads: int(r.modelThreads, 'modelThreads', 0, 1024, problems),
        modelContext: int(r.modelContext, 'modelContext', 512, 1_048_576, problems),
        arch,
        searchBudget: int(r.searchBudget, 'searchBudget', 1, 1000, problems),
        searchStrategy: oneOf(r.searchStrategy, 'searchStrategy', STRATEGIES, problems),
        backgroundValidation,
        compilerConfirmation,
        logLevel: oneOf(r.logLevel, 'logLevel', LOG_LEVELS, problems, { warn: 'warning', information: 'info', trace: 'debug' }),
        compileCommands: expand(str(r.compileCommands, 'compileCommands', problems)),
        extraCompilerArgs,
        allowFastMath,
        sanitize,
        profileEnabled,
    };
    return { settings, problems };
}

/** The object sent to the server: every server key, nothing client-only. */
export function toServerSettings(settings: ClientSettings): ServerSettings {
    const out: Record<string, unknown> = {};
    for (const key of SERVER_KEYS) {
        out[key] = settings[key];
    }
    return out as unknown as ServerSettings;
}

/** Keys (without the `regrapht.` prefix) whose values differ. */
export function changedKeys(before: ClientSettings, after: ClientSettings): string[] {
    const keys = Object.keys(DEFAULT_SETTINGS) as (keyof ClientSettings)[];
    return keys.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

export function needsRestart(changed: readonly string[]): boolean {
    return changed.some((k) => RESTART_KEYS.includes(k));
}
