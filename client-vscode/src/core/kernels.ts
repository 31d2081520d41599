// Find `__global__` kernels in CUDA source, to name the kernel under the cursor. No `vscode`.

export interface KernelLocation {
    name: string;
    /** 0-based line of the `__global__` keyword. */
    line: number;
    /** 0-based line of the name (may differ from `line` for multi-line declarations). */
    nameLine: number;
}

const SKIP_CALLS = new Set(['__launch_bounds__', '__attribute__', '__declspec', 'alignas', '__align__']);

/** Replace comments and string literals by spaces, keeping offsets and newlines. */
export function blankCommentsAndStrings(text: string): string {
    return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g,
        (m) => m.replace(/[^\n]/g, ' '));
}

export function findKernels(text: string): KernelLocation[] {
    const src = blankCommentsAndStrings(text);
    const lineStarts = [0];
    for (let i = 0; i < src.length; i++) {
        if (src[i] === '\n') {
            lineStarts.push(i + 1);
        }
    }
    const lineOf = (offset: number) => {
        let lo = 0;
        let hi = lineStarts.length - 1;
        while (lo < hi) {
            const mid = (lo + hi + 1) >> 1;
            if (lineStarts[mid] <= offset) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    };
    const kernels: KernelLocation[] = [];
    const global = /\b__global__\b/g;
    let g: RegExpExecArray | null;
    while ((g = global.exec(src)) !== null) {
        let pos = g.index + g[0].length;
        const call = /([A-Za-z_]\w*)\s*\(/g;
        for (let guard = 0; guard < 8; guard++) {
            call.lastIndex = pos;
            const m = call.exec(src);
            if (!m || /[;{}]/.test(src.slice(pos, m.index))) {
                break;
            }
            if (SKIP_CALLS.has(m[1])) {
                pos = skipParens(src, m.index + m[0].length - 1);
                continue;
            }
            kernels.push({ name: m[1], line: lineOf(g.index), nameLine: lineOf(m.index) });
            break;
        }
    }
    return kernels;
}

function skipParens(src: string, open: number): number {
    let depth = 0;
    for (let i = open; i < src.length; i++) {
        if (src[i] === '(') {
            depth++;
        } else if (src[i] === ')') {
            depth--;
            if (depth === 0) {
                return i + 1;
            }
        }
    }
    return src.length;
}

/** The kernel whose declaration starts at or before `line` (the one the cursor is in or below). */
export function kernelAtLine(kernels: readonly KernelLocation[], line: number): KernelLocation | undefined {
    let found: KernelLocation | undefined;
    for (const k of kernels) {
        if (k.line <= line && (!found || k.line >= found.line)) {
            found = k;
        }
    }
    return found;
}
