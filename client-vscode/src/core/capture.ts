// `ReGraphT: Capture kernel launches...`: the command line it runs and the summary it shows.
// No `vscode` import: unit-tested with node --test. The CLI is docs/cli-contract.md's `regrapht capture`.

export interface CaptureSettings {
    /** The program to capture and its arguments, as a shell would split them. */
    command: string;
    kernel: string;
    launches: number;
    data: boolean;
    out: string;
}

/** Split a command line as a POSIX shell would for plain words, '...' and "..." quoting and \ escapes. */
export function splitCommandLine(text: string): string[] {
    const words: string[] = [];
    let current = '';
    let started = false;
    let quote: '"' | "'" | undefined;
    for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (quote === "'") {
            if (c === "'") { quote = undefined; } else { current += c; }
            continue;
        }
        if (c === '\\' && i + 1 < text.length && (quote === undefined || '"\\$`'.includes(text[i + 1]))) {
            current += text[++i];
            started = true;
            continue;
        }
        if (quote === '"') {
            if (c === '"') { quote = undefined; } else { current += c; }
            continue;
        }
        if (c === '"' || c === "'") {
            quote = c;
            started = true;
        } else if (/\s/.test(c)) {
            if (started) { words.push(current); }
            current = '';
            started = false;
        } else {
            current += c;
            started = true;
        }
    }
    if (quote !== undefined) {
        throw new Error(`unclosed ${quote} in the capture command`);
    }
    if (started) { words.push(current); }
    return words;
}

/** `python -m regrapht capture ... -- CMD ARGS...` for the server's interpreter. */
export function captureArguments(python: string[], settings: CaptureSettings): { command: string; args: string[] } {
    const program = splitCommandLine(settings.command);
    if (program.length === 0) {
        throw new Error('no program to capture: set regrapht.captureCommand, e.g. "./build/app --frames 4"');
    }
    const args = [...python.slice(1), '-m', 'regrapht', 'capture', '--out', settings.out,
        '--launches', String(settings.launches)];
    if (settings.data) { args.push('--data'); }
    if (settings.kernel) { args.push('--kernel', settings.kernel); }
    return { command: python[0], args: [...args, '--', ...program] };
}

/** The capture directory `regrapht capture` uses by default: `.regrapht/captures/<program>`. */
export function defaultOut(folder: string, command: string): string {
    const program = splitCommandLine(command)[0] ?? 'program';
    const base = program.split(/[\\/]/).pop() || 'program';
    return `${folder}/.regrapht/captures/${base.replace(/[^A-Za-z0-9_.-]+/g, '_') || 'program'}`;
}

interface ManifestSpec { kernel?: unknown; file?: unknown; launches?: unknown }

/** One line for the notification: what capture.json says was captured. */
export function captureSummary(manifest: unknown, exitCode: number | undefined): string {
    if (typeof manifest !== 'object' || manifest === null) {
        return `the capture wrote no manifest (exit ${exitCode ?? '?'}): see the terminal`;
    }
    const m = manifest as { command?: unknown; specs?: unknown; kernels?: unknown; skipped?: unknown; library?: unknown };
    const specs = Array.isArray(m.specs) ? (m.specs as ManifestSpec[]) : [];
    const kernels = Array.isArray(m.kernels) ? m.kernels.length : 0;
    const launches = specs.reduce((sum, s) => sum + (Array.isArray(s.launches) ? s.launches.length : 0), 0);
    const program = Array.isArray(m.command) && typeof m.command[0] === 'string' ? m.command[0] : 'the program';
    const skipped = Array.isArray(m.skipped) ? m.skipped.length : 0;
    const library = m.library as { state?: unknown; error?: unknown } | undefined;
    if (library && library.state !== 'capturing' && typeof library.error === 'string') {
        return `nothing captured from ${program}: ${library.error}`;
    }
    let text = `captured ${launches} launch${launches === 1 ? '' : 'es'} of ${kernels} kernel${kernels === 1 ? '' : 's'} `
        + `from ${program}: ${specs.length} spec${specs.length === 1 ? '' : 's'}`;
    if (specs.length) {
        text += ` (${specs.slice(0, 4).map((s) => String(s.kernel)).join(', ')}${specs.length > 4 ? ', ...' : ''})`;
    }
    if (skipped) { text += `, ${skipped} kernel${skipped === 1 ? '' : 's'} without a spec`; }
    if (exitCode !== undefined && exitCode !== 0) { text += `; the program exited with ${exitCode}`; }
    return text;
}
