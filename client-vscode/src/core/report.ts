// The kernel report as HTML for a webview: the server's `regrapht.showKernelReport {detail: true}`
// data (server/regrapht/app/report_data.py) drawn as sections, an SVG roofline, an SVG chart of
// speedup per candidate by technique and the table of every judged candidate. Pure: no `vscode`.
// Every text from the server is HTML-escaped; links and buttons post messages (`ReportMessage`)
// that the extension acts on, so they work inside VS Code (a webview cannot open file: links).

export interface ReportFinding {
    rule: string;
    severity: string;
    line: number;
    message: string;
    technique: string;
    doc: string | null;
    fixes: string[];
}

export interface ReportCandidate {
    index: number;
    techniques: string[];
    note: string;
    outcome: string;
    reason: string;
    speedup: number | null;
    time_ms: number | null;
    compile_s: number | null;
    check_s: number | null;
    time_s: number | null;
    source?: string;
}

export interface RooflinePoint {
    label: string;
    kind: 'original' | 'verified' | 'floor';
    time_ms: number;
    gbps: number | null;
    gflops: number | null;
}

export interface ReportRoofline {
    bytes: number;
    flops: number | null;
    peak_gbps: number | null;
    peak_gflops: number | null;
    floor_ms: number | null;
    intensity: number | null;
    points: RooflinePoint[];
}

export interface ReportRun {
    kind: string;
    message: string;
    applied: string;
    gpu: string | null;
    arch: string;
    strategy: string;
    budget: number;
    baseline_ms: number | null;
    reason: string;
    wall_s: number;
    cancelled: boolean;
    counters: { generated: number; compiled: number; correct: number; faster: number };
    best: { speedup: number; time_ms: number; techniques: string[]; checked: string; sanitizer: string; numerics: string } | null;
    original: string;
    candidates: ReportCandidate[];
}

export interface ReportData {
    uri: string;
    kernel: string;
    markdown: string;
    findings: ReportFinding[];
    resources: { registers: number | null; shared_bytes: number | null; spill_bytes: number | null; occupancy: number | null; arch: string; limiter: string } | null;
    timing: { median_ms: number; p10_ms: number; p90_ms: number; runs: number } | null;
    technique_path: string[];
    roofline: ReportRoofline | null;
    run: ReportRun | null;
}

/** What the webview's links and buttons ask the extension to do. */
export type ReportMessage =
    | { type: 'rerun' }
    | { type: 'diff'; index: number }
    | { type: 'openDoc'; uri: string }
    | { type: 'openLine'; line: number };

/** The server's answer as report data, or undefined (an older server answers a Markdown string). */
export function asReportData(value: unknown): ReportData | undefined {
    if (!value || typeof value !== 'object') {
        return undefined;
    }
    const v = value as Partial<ReportData>;
    if (typeof v.kernel !== 'string' || typeof v.uri !== 'string' || typeof v.markdown !== 'string' || !Array.isArray(v.findings)) {
        return undefined;
    }
    return value as ReportData;
}

/** A message posted by the webview, checked (it comes from page script). */
export function parseReportMessage(value: unknown): ReportMessage | undefined {
    if (!value || typeof value !== 'object') {
        return undefined;
    }
    const m = value as { type?: unknown; index?: unknown; uri?: unknown; line?: unknown };
    if (m.type === 'rerun') {
        return { type: 'rerun' };
    }
    if (m.type === 'diff' && typeof m.index === 'number' && Number.isInteger(m.index)) {
        return { type: 'diff', index: m.index };
    }
    if (m.type === 'openDoc' && typeof m.uri === 'string' && /^(file|https?):/.test(m.uri)) {
        return { type: 'openDoc', uri: m.uri };
    }
    if (m.type === 'openLine' && typeof m.line === 'number' && Number.isInteger(m.line) && m.line >= 0) {
        return { type: 'openLine', line: m.line };
    }
    return undefined;
}

export function escapeHtml(text: string): string {
    return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c] as string));
}

/** Server text that uses Markdown code spans (`x`): escaped, with the spans as <code>. */
export function inlineCode(text: string): string {
    return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function num(value: number | null | undefined, digits: number, unit = ''): string {
    return value === null || value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(digits)}${unit}`;
}

/** A roofline bar's label in its narrow margin: a candidate by its number ("#3", as in the
 * candidate table; its techniques are the bar's tooltip), else the label's first 10 characters. */
export function barLabel(label: string): string {
    return /^#\d+/.exec(label)?.[0] ?? label.slice(0, 10);
}

/** "a -> b" of a technique path ("original" for none). */
export function pathText(techniques: readonly string[]): string {
    return techniques.length ? techniques.join(' → ') : 'original';
}

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

/** The technique a candidate is charted under: the last step of its path. */
export function techniqueOf(candidate: ReportCandidate): string {
    return candidate.techniques.length ? candidate.techniques[candidate.techniques.length - 1] : 'original';
}

/** Colours per technique, in order of first appearance. */
export function techniqueColours(candidates: readonly ReportCandidate[]): Map<string, string> {
    const colours = new Map<string, string>();
    for (const c of candidates) {
        const t = techniqueOf(c);
        if (!colours.has(t)) {
            colours.set(t, PALETTE[colours.size % PALETTE.length]);
        }
    }
    return colours;
}

/** SVG: one bar per judged candidate (its speedup; verified ones only), coloured by technique,
 * with a line at 1x; a candidate that failed is a grey cross on the axis. */
export function speedupChartSvg(candidates: readonly ReportCandidate[]): string {
    const colours = techniqueColours(candidates);
    // the legend wraps into rows below the plot
    const legend: { technique: string; colour: string; x: number; row: number }[] = [];
    let lx = 44, row = 0;
    for (const [technique, colour] of colours) {
        const w = 24 + technique.length * 6.5;
        if (lx + w > 640 - 12 && lx > 44) {
            lx = 44;
            row += 1;
        }
        legend.push({ technique, colour, x: lx, row });
        lx += w;
    }
    const width = 640, left = 44, top = 16, right = 12, plotH = 184, height = top + plotH + 40 + row * 16;
    const plotW = width - left - right;
    const max = Math.max(1.5, ...candidates.map((c) => c.speedup ?? 0)) * 1.1;
    const y = (v: number) => top + plotH - (v / max) * plotH;
    const step = plotW / Math.max(candidates.length, 1);
    const bar = Math.max(2, Math.min(28, step * 0.7));
    const parts: string[] = [
        `<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="speedup per candidate" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">`,
        `<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" class="axis"/>`,
        `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" class="axis"/>`,
        `<line x1="${left}" y1="${y(1).toFixed(1)}" x2="${left + plotW}" y2="${y(1).toFixed(1)}" class="unity"/>`,
        `<text x="${left - 6}" y="${(y(1) + 4).toFixed(1)}" text-anchor="end" class="tick">1x</text>`,
        `<text x="${left - 6}" y="${(y(max / 1.1) + 4).toFixed(1)}" text-anchor="end" class="tick">${(max / 1.1).toFixed(1)}x</text>`,
    ];
    candidates.forEach((c, i) => {
        const cx = left + step * i + step / 2;
        const title = `<title>#${c.index} ${escapeHtml(pathText(c.techniques))}: ${escapeHtml(c.outcome)}${c.speedup !== null ? ` ${c.speedup.toFixed(2)}x` : ''}</title>`;
        if ((c.outcome === 'faster' || c.outcome === 'slower') && c.speedup !== null) {
            const h = Math.max(1, top + plotH - y(c.speedup));
            parts.push(`<rect x="${(cx - bar / 2).toFixed(1)}" y="${y(c.speedup).toFixed(1)}" width="${bar.toFixed(1)}" height="${h.toFixed(1)}" fill="${colours.get(techniqueOf(c))}" data-index="${c.index}">${title}</rect>`);
        } else {
            const yb = top + plotH - 6;
            parts.push(`<path d="M${(cx - 4).toFixed(1)},${yb - 4} l8,8 m0,-8 l-8,8" class="failed" data-index="${c.index}">${title}</path>`);
        }
        if (candidates.length <= 40) {
            parts.push(`<text x="${cx.toFixed(1)}" y="${top + plotH + 14}" text-anchor="middle" class="tick">${c.index}</text>`);
        }
    });
    for (const item of legend) {
        const y0 = top + plotH + 26 + item.row * 16;
        parts.push(`<rect x="${item.x}" y="${y0}" width="10" height="10" fill="${item.colour}"/>`,
            `<text x="${item.x + 14}" y="${y0 + 9}" class="legend">${escapeHtml(item.technique)}</text>`);
    }
    parts.push('</svg>');
    return parts.join('');
}

/** SVG roofline (log-log: FLOP/byte against GFLOP/s; the roofs from this GPU's measured peaks;
 * the original, each verified version and the floor as points). Without the kernel's FLOPs there
 * is no intensity: the points are then drawn as achieved GB/s against the peak bandwidth. */
export function rooflineSvg(roof: ReportRoofline): string {
    const width = 640, height = 280, left = 64, bottom = 40, top = 16, right = 16;
    const plotW = width - left - right, plotH = height - top - bottom;
    const colour = (kind: RooflinePoint['kind']) => (kind === 'original' ? '#e15759' : kind === 'floor' ? '#59a14f' : '#4e79a7');
    const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="roofline" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">`];
    const frame = () => parts.push(
        `<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" class="axis"/>`,
        `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" class="axis"/>`);
    if (roof.intensity !== null && roof.peak_gbps && roof.peak_gflops) {
        const ridge = roof.peak_gflops / roof.peak_gbps;
        const xmin = Math.min(roof.intensity, ridge) / 100, xmax = Math.max(roof.intensity, ridge) * 100;
        const rates = roof.points.map((p) => p.gflops ?? 0).filter((v) => v > 0);
        const ymin = Math.min(roof.peak_gflops / 1e4, ...rates) / 2, ymax = roof.peak_gflops * 2;
        const x = (v: number) => left + (Math.log10(v / xmin) / Math.log10(xmax / xmin)) * plotW;
        const y = (v: number) => top + plotH - (Math.log10(v / ymin) / Math.log10(ymax / ymin)) * plotH;
        frame();
        const roofAt = (ai: number) => Math.min(roof.peak_gflops as number, ai * (roof.peak_gbps as number));
        const xs = [xmin, ridge, xmax];
        parts.push(`<polyline class="roof" points="${xs.map((v) => `${x(v).toFixed(1)},${y(Math.max(roofAt(v), ymin)).toFixed(1)}`).join(' ')}"/>`);
        parts.push(`<text x="${(x(ridge) + 6).toFixed(1)}" y="${(y(roof.peak_gflops) - 4).toFixed(1)}" class="tick">${num(roof.peak_gflops, 0)} GFLOP/s</text>`);
        parts.push(`<text x="${(x(xmin) + 6).toFixed(1)}" y="${(y(Math.max(roofAt(xmin), ymin)) - 6).toFixed(1)}" class="tick">${num(roof.peak_gbps, 0)} GB/s</text>`);
        parts.push(`<line x1="${x(roof.intensity).toFixed(1)}" y1="${top}" x2="${x(roof.intensity).toFixed(1)}" y2="${top + plotH}" class="intensity"/>`);
        for (const p of roof.points) {
            if (p.gflops) {
                parts.push(`<circle cx="${x(roof.intensity).toFixed(1)}" cy="${y(p.gflops).toFixed(1)}" r="${p.kind === 'verified' ? 4 : 6}" fill="${colour(p.kind)}" class="point ${p.kind}"><title>${escapeHtml(p.label)}: ${num(p.time_ms, 4)} ms, ${num(p.gflops, 1)} GFLOP/s</title></circle>`);
            }
        }
        parts.push(`<text x="${left + plotW / 2}" y="${height - 22}" text-anchor="middle" class="tick">FLOP/byte (log): ${num(roof.intensity, 3)}</text>`);
        parts.push(`<text x="14" y="${top + plotH / 2}" transform="rotate(-90 14 ${top + plotH / 2})" text-anchor="middle" class="tick">GFLOP/s (log)</text>`);
    } else {
        const peak = roof.peak_gbps ?? Math.max(1, ...roof.points.map((p) => p.gbps ?? 0));
        const max = Math.max(peak, ...roof.points.map((p) => p.gbps ?? 0)) * 1.1;
        const rows = roof.points.filter((p) => p.gbps !== null);
        const rowH = Math.min(28, plotH / Math.max(rows.length, 1));
        const x = (v: number) => left + (v / max) * plotW;
        frame();
        rows.forEach((p, i) => {
            const yy = top + i * rowH + 3;
            parts.push(`<rect x="${left}" y="${yy.toFixed(1)}" width="${(x(p.gbps as number) - left).toFixed(1)}" height="${(rowH - 6).toFixed(1)}" fill="${colour(p.kind)}" class="point ${p.kind}"><title>${escapeHtml(p.label)}: ${num(p.time_ms, 4)} ms, ${num(p.gbps, 1)} GB/s</title></rect>`,
                `<text x="${left - 4}" y="${(yy + rowH / 2).toFixed(1)}" text-anchor="end" class="tick">${escapeHtml(barLabel(p.label))}</text>`);
        });
        if (roof.peak_gbps) {
            parts.push(`<line x1="${x(roof.peak_gbps).toFixed(1)}" y1="${top}" x2="${x(roof.peak_gbps).toFixed(1)}" y2="${top + plotH}" class="roof"/>`,
                `<text x="${(x(roof.peak_gbps) - 4).toFixed(1)}" y="${top + 10}" text-anchor="end" class="tick">peak ${num(roof.peak_gbps, 0)} GB/s</text>`);
        }
        parts.push(`<text x="${left + plotW / 2}" y="${height - 22}" text-anchor="middle" class="tick">achieved GB/s (no FLOP count in the spec: bandwidth only)</text>`);
    }
    parts.push(`<g class="legend">${(['original', 'verified', 'floor'] as const).map((k, i) => `<circle cx="${left + 10 + i * 110}" cy="${height - 8}" r="5" fill="${colour(k)}"/><text x="${left + 20 + i * 110}" y="${height - 4}">${k === 'verified' ? 'verified version' : k}</text>`).join('')}</g>`);
    parts.push('</svg>');
    return parts.join('');
}

function seconds(c: ReportCandidate): string {
    return [c.compile_s, c.check_s, c.time_s].map((v) => num(v, 2)).join(' / ');
}

/** The table of every judged candidate, each row with a Diff button where its code is known. */
export function candidateTable(candidates: readonly ReportCandidate[]): string {
    const rows = candidates.map((c) => {
        const verdict = c.outcome === 'faster' || c.outcome === 'slower'
            ? `${escapeHtml(c.outcome)} ${num(c.speedup, 2, 'x')}` : escapeHtml(c.outcome);
        const why = c.outcome === 'faster' ? '' : escapeHtml(c.reason || (c.outcome === 'slower' ? 'not faster than the original' : ''));
        const diff = c.source !== undefined ? `<button data-diff="${c.index}" title="Compare with the searched code">Diff</button>` : '';
        return `<tr class="${escapeHtml(c.outcome)}"><td>${c.index}</td><td>${escapeHtml(pathText(c.techniques))}</td>`
            + `<td>${inlineCode(c.note)}</td><td>${verdict}</td><td class="why">${why}</td>`
            + `<td>${num(c.time_ms, 4)}</td><td>${seconds(c)}</td><td>${diff}</td></tr>`;
    });
    return '<table class="candidates"><thead><tr><th>#</th><th>technique path</th><th>parameters</th><th>verdict</th>'
        + '<th>why rejected</th><th>ms</th><th>compile / check / time s</th><th></th></tr></thead>'
        + `<tbody>${rows.join('')}</tbody></table>`;
}

function findingsSection(findings: readonly ReportFinding[]): string {
    if (!findings.length) {
        return '<section><h2>Findings</h2><p>None.</p></section>';
    }
    const items = findings.map((f) => {
        const rule = f.doc
            ? `<a href="#" data-doc="${escapeHtml(f.doc)}" title="Open the rule's documentation"><b>${escapeHtml(f.rule)}</b></a>`
            : `<b>${escapeHtml(f.rule)}</b>`;
        // a fix's title names code the way the card does (`x`): shown as code, not as backticks
        const fixes = f.fixes.length ? ` Quick fix: ${f.fixes.map(inlineCode).join('; ')}.` : '';
        return `<li>${rule} (${escapeHtml(f.severity)}, <a href="#" data-line="${f.line}">line ${f.line + 1}</a>): `
            + `${inlineCode(/[.!?)]$/.test(f.message) ? f.message : `${f.message}.`)} <span class="technique">Technique: <code>${escapeHtml(f.technique)}</code>.</span>${fixes}</li>`;
    });
    return `<section><h2>Findings (${findings.length})</h2><ul>${items.join('')}</ul></section>`;
}

function resourcesSection(data: ReportData): string {
    const r = data.resources;
    const t = data.timing;
    const parts: string[] = [];
    if (r) {
        const occupancy = r.occupancy !== null ? `${Math.round(r.occupancy * 100)}%${r.limiter ? ` (limited by ${escapeHtml(r.limiter)})` : ''}` : '–';
        parts.push(`<tr><th>registers/thread</th><td>${r.registers ?? '–'}</td></tr>`,
            `<tr><th>shared/block</th><td>${r.shared_bytes ?? '–'} B</td></tr>`,
            `<tr><th>spills</th><td>${r.spill_bytes ? `${r.spill_bytes} B` : r.spill_bytes === 0 ? 'none' : '–'}</td></tr>`,
            `<tr><th>occupancy${r.arch ? ` on ${escapeHtml(r.arch)}` : ''}</th><td>${occupancy}</td></tr>`);
    }
    if (t) {
        parts.push(`<tr><th>measured</th><td>median ${num(t.median_ms, 4)} ms (p10 ${num(t.p10_ms, 4)}, p90 ${num(t.p90_ms, 4)}; ${t.runs} runs)</td></tr>`);
    }
    const roof = data.roofline;
    if (roof && t) {
        const seconds = t.median_ms * 1e-3;
        const gbps = roof.bytes / seconds / 1e9;
        parts.push(`<tr><th>bandwidth</th><td>${num(gbps, 1)} GB/s of ${num(roof.peak_gbps, 0)} GB/s peak`
            + `${roof.peak_gbps ? ` (${Math.round((gbps / roof.peak_gbps) * 100)}%)` : ''}</td></tr>`);
        if (roof.flops) {
            const gflops = roof.flops / seconds / 1e9;
            parts.push(`<tr><th>compute</th><td>${num(gflops, 1)} GFLOP/s of ${num(roof.peak_gflops, 0)} GFLOP/s peak</td></tr>`);
        }
        if (roof.floor_ms) {
            parts.push(`<tr><th>roofline floor</th><td>${num(roof.floor_ms, 4)} ms: measured time is ${num(t.median_ms / roof.floor_ms, 1)}x the floor</td></tr>`);
        }
    }
    if (!parts.length) {
        return '<section><h2>Resources and time</h2><p>Not measured yet: background validation compiles and times the kernel where its benchmark spec and a CUDA GPU are present.</p></section>';
    }
    return `<section><h2>Resources and time</h2><table class="facts">${parts.join('')}</table></section>`;
}

function runSection(run: ReportRun | null): string {
    if (!run) {
        return '<section id="history"><h2>Last Optimize run</h2><p>No Optimize run yet in this session.</p>'
            + '<p><button data-rerun="1">Optimize</button></p></section>';
    }
    const c = run.counters;
    const head = run.best
        ? `<p class="result"><b>${num(run.best.speedup, 2, 'x')} faster</b> on ${escapeHtml(run.gpu ?? 'this GPU')}, verified`
            + `${run.best.checked ? ` (${escapeHtml(run.best.checked)})` : ''}: ${escapeHtml(pathText(run.best.techniques))}`
            + `${run.best.sanitizer ? `; compute-sanitizer ${escapeHtml(run.best.sanitizer)}` : ''}${run.applied ? `; ${escapeHtml(run.applied)}` : ''}.</p>`
        : `<p class="result"><b>${run.kind === 'cancelled' ? 'Cancelled' : 'No faster verified version'}</b>: ${inlineCode(run.reason || run.message)}</p>`;
    const figures = `<p>${c.generated} candidates judged of a budget of ${run.budget} (${c.compiled} compiled, ${c.correct} correct, ${c.faster} faster),`
        + ` strategy ${escapeHtml(run.strategy)}, ${num(run.wall_s, 1)} s${run.baseline_ms ? `; original ${num(run.baseline_ms, 4)} ms` : ''}.</p>`;
    const chart = run.candidates.length ? `<h3>Speedup per candidate, by technique</h3>${speedupChartSvg(run.candidates)}` : '';
    const table = run.candidates.length ? `<h3>Every judged candidate</h3>${candidateTable(run.candidates)}` : '';
    return `<section id="history"><h2>Last Optimize run</h2>${head}${figures}<p><button data-rerun="1">Re-run Optimize</button></p>${chart}${table}</section>`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 16px 24px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 2px; }
code, pre { font-family: var(--vscode-editor-font-family); }
pre { background: var(--vscode-textCodeBlock-background); padding: 8px; overflow-x: auto; }
a { color: var(--vscode-textLink-foreground); cursor: pointer; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 3px 10px; cursor: pointer; }
button:hover { background: var(--vscode-button-hoverBackground); }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; vertical-align: top; }
table.candidates td, table.candidates th { border-bottom: 1px solid var(--vscode-panel-border); }
tr.faster td:nth-child(4) { color: var(--vscode-testing-iconPassed, #59a14f); font-weight: bold; }
td.why { max-width: 28em; word-break: break-word; }
svg.chart { background: var(--vscode-editor-background); max-width: 100%; height: auto; }
svg .axis { stroke: var(--vscode-foreground); stroke-width: 1; } svg .unity { stroke: #999; stroke-dasharray: 4 3; }
svg .roof { stroke: var(--vscode-foreground); stroke-width: 2; fill: none; } svg .intensity { stroke: #999; stroke-dasharray: 2 3; }
svg .failed { stroke: #999; stroke-width: 1.5; } svg text { fill: var(--vscode-foreground); font-size: 11px; }
`;

/** The whole webview page. `cspSource` and `nonce`: the webview's content security policy;
 * `focusHistory`: scrolled to the last run ("Show why"). */
export function reportHtml(data: ReportData, cspSource: string, nonce: string, focusHistory = false): string {
    const signature = /```cuda\n([\s\S]*?)\n```/.exec(data.markdown);
    const path = data.technique_path.length ? `<p>Optimization path: ${data.technique_path.map(escapeHtml).join(' → ')}</p>` : '';
    const roofline = data.roofline
        ? `<section><h2>Roofline</h2>${rooflineSvg(data.roofline)}</section>`
        : '<section><h2>Roofline</h2><p>No measurement on a GPU yet (bytes, FLOPs and the device peaks come from background validation).</p></section>';
    return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${cspSource} data:; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0"><title>${escapeHtml(data.kernel)} report</title>
<style nonce="${nonce}">${STYLE}</style></head><body>
<h1>Kernel <code>${escapeHtml(data.kernel)}</code></h1>
${signature ? `<pre><code>${escapeHtml(signature[1])}</code></pre>` : ''}${path}
${resourcesSection(data)}
${roofline}
${findingsSection(data.findings)}
${runSection(data.run)}
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
document.addEventListener('click', (event) => {
  const el = event.target instanceof Element ? event.target.closest('[data-doc],[data-line],[data-diff],[data-rerun]') : null;
  if (!el) { return; }
  event.preventDefault();
  if (el.dataset.doc) { vscode.postMessage({ type: 'openDoc', uri: el.dataset.doc }); }
  else if (el.dataset.line) { vscode.postMessage({ type: 'openLine', line: Number(el.dataset.line) }); }
  else if (el.dataset.diff) { vscode.postMessage({ type: 'diff', index: Number(el.dataset.diff) }); }
  else if (el.dataset.rerun) { vscode.postMessage({ type: 'rerun' }); }
});
${focusHistory ? "document.getElementById('history').scrollIntoView();" : ''}
</script></body></html>`;
}

/** The buttons of the message that tells how an Optimize run ended. */
export function outcomeActions(message: string): string[] {
    return /^ReGraphT applied/.test(message) ? ['Show Report'] : ['Show why'];
}
