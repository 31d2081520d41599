import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
    asReportData, barLabel, candidateTable, escapeHtml, inlineCode, outcomeActions, parseReportMessage, ReportCandidate, ReportData,
    reportHtml, rooflineSvg, speedupChartSvg, techniqueColours,
} from '../src/core/report';

function candidate(index: number, techniques: string[], outcome: string, speedup: number | null, reason = ''): ReportCandidate {
    return {
        index, techniques, note: 'block 256', outcome, reason, speedup, time_ms: speedup ? 1 / speedup : null,
        compile_s: 0.8, check_s: outcome === 'compile_error' ? null : 0.2, time_s: speedup ? 0.3 : null, source: `// ${index}`,
    };
}

const CANDIDATES = [
    candidate(1, ['restrict_const'], 'faster', 1.3),
    candidate(2, ['restrict_const', 'vectorize'], 'faster', 2.4),
    candidate(3, ['block_size'], 'wrong', null, 'y[17]: 3.0 != 2.0 (seed 2) <odd size>'),
    candidate(4, ['block_size'], 'slower', 0.9),
    candidate(5, ['fast_math'], 'compile_error', null, "error: expected ';'"),
];

function data(overrides: Partial<ReportData> = {}): ReportData {
    return {
        uri: 'file:///w/saxpy.cu', kernel: 'saxpy', markdown: '```cuda\n__global__ void saxpy(float *__restrict__ y)\n```\n',
        findings: [{ rule: 'R006', severity: 'warning', line: 3, message: '`x` is only read', technique: 'restrict_const',
            doc: 'file:///docs/rules/R006.md', fixes: ['Add const __restrict__ to x'] }],
        resources: { registers: 16, shared_bytes: 0, spill_bytes: 0, occupancy: 1, arch: 'sm_90', limiter: 'block size' },
        timing: { median_ms: 1, p10_ms: 0.9, p90_ms: 1.1, runs: 20 },
        technique_path: [],
        roofline: { bytes: 3e9, flops: 1e9, peak_gbps: 4000, peak_gflops: 50000, floor_ms: 0.75, intensity: 1 / 3,
            points: [{ label: 'original', kind: 'original', time_ms: 1, gbps: 3000, gflops: 1000 },
                { label: '#2 restrict_const -> vectorize', kind: 'verified', time_ms: 0.8, gbps: 3750, gflops: 1250 },
                { label: 'floor', kind: 'floor', time_ms: 0.75, gbps: 4000, gflops: 1333 }] },
        run: { kind: 'found', message: '2.40x faster', applied: 'applied', gpu: 'NVIDIA H200', arch: 'sm_90', strategy: 'mcgs',
            budget: 24, baseline_ms: 1, reason: '', wall_s: 12.5, cancelled: false,
            counters: { generated: 5, compiled: 4, correct: 3, faster: 2 },
            best: { speedup: 2.4, time_ms: 0.42, techniques: ['restrict_const', 'vectorize'], checked: '4 seeds, odd size', sanitizer: 'clean (memcheck)', numerics: 'exact' },
            original: '// original', candidates: CANDIDATES },
        ...overrides,
    };
}

test('server text is escaped; code spans become <code>', () => {
    assert.equal(escapeHtml('<a href="x">&\''), '&lt;a href=&quot;x&quot;&gt;&amp;&#39;');
    assert.equal(inlineCode('`__restrict__` on <x>'), '<code>__restrict__</code> on &lt;x&gt;');
});

test('report data is told from a plain Markdown answer', () => {
    assert.equal(asReportData('# card'), undefined);
    assert.equal(asReportData({ markdown: 'x' }), undefined);
    assert.equal(asReportData(data())?.kernel, 'saxpy');
});

test('webview messages are checked', () => {
    assert.deepEqual(parseReportMessage({ type: 'diff', index: 3 }), { type: 'diff', index: 3 });
    assert.deepEqual(parseReportMessage({ type: 'openDoc', uri: 'file:///docs/rules/R006.md' }), { type: 'openDoc', uri: 'file:///docs/rules/R006.md' });
    assert.equal(parseReportMessage({ type: 'openDoc', uri: 'command:workbench.action.quit' }), undefined);
    assert.equal(parseReportMessage({ type: 'diff', index: '3' }), undefined);
    assert.equal(parseReportMessage({ type: 'openLine', line: -1 }), undefined);
    assert.deepEqual(parseReportMessage({ type: 'rerun' }), { type: 'rerun' });
});

test('the candidate table has every candidate with verdict, why and seconds', () => {
    const html = candidateTable(CANDIDATES);
    assert.equal((html.match(/<tr class=/g) ?? []).length, 5);
    assert.match(html, /<td>restrict_const → vectorize<\/td>/);
    assert.match(html, /faster 2\.40x/);
    assert.match(html, /y\[17\]: 3\.0 != 2\.0 \(seed 2\) &lt;odd size&gt;/); // escaped
    assert.match(html, /not faster than the original/);
    assert.match(html, /0\.80 \/ – \/ –/); // compile only
    assert.match(html, /data-diff="5"/);
});

test('the speedup chart has a bar per verified candidate and a cross per failed one, coloured by technique', () => {
    const svg = speedupChartSvg(CANDIDATES);
    assert.equal((svg.match(/<rect [^>]*data-index=/g) ?? []).length, 3);
    assert.equal((svg.match(/class="failed"/g) ?? []).length, 2);
    const colours = techniqueColours(CANDIDATES);
    assert.deepEqual([...colours.keys()], ['restrict_const', 'vectorize', 'block_size', 'fast_math']);
    assert.ok(svg.includes(`fill="${colours.get('vectorize')}" data-index="2"`));
    assert.match(svg, />1x</);
});

test('the roofline draws the roofs and a point for the original, each verified version and the floor', () => {
    const roof = data().roofline;
    assert.ok(roof);
    const svg = rooflineSvg(roof);
    assert.match(svg, /<polyline class="roof"/);
    assert.equal((svg.match(/class="point /g) ?? []).length, 3);
    assert.match(svg, /class="point original"/);
    assert.match(svg, /class="point floor"/);
    assert.match(svg, /50000 GFLOP\/s/);
    assert.match(svg, /4000 GB\/s/);
    const bandwidthOnly = rooflineSvg({ ...roof, flops: null, intensity: null });
    assert.match(bandwidthOnly, /class="tick">#2<\/text>/);  // not "#2 restric", cut mid-word
    assert.equal(barLabel('#1 vectorized_access'), '#1');
    assert.equal(barLabel('original'), 'original');
    assert.match(bandwidthOnly, /bandwidth only/);
    assert.equal((bandwidthOnly.match(/class="point /g) ?? []).length, 3);
});

test('the page: escaped signature, rule doc links as messages, resources against peaks, run history, CSP', () => {
    const html = reportHtml(data(), 'vscode-resource:', 'N0NCE');
    assert.match(html, /<pre><code>__global__ void saxpy\(float \*__restrict__ y\)<\/code><\/pre>/);
    assert.match(html, /data-doc="file:\/\/\/docs\/rules\/R006\.md"[^>]*><b>R006<\/b><\/a>/);
    assert.ok(!html.includes('[R006]('));
    assert.match(html, /Quick fix: Add const __restrict__ to x\./);
    const recorded = reportHtml({ ...data(), findings: [{ ...data().findings[0], fixes: ['Declare `x` as const __restrict__'] }] }, 'vscode-resource:', 'N0NCE');
    assert.match(recorded, /Quick fix: Declare <code>x<\/code> as const __restrict__\./);  // as the H200 report's R006 fix reads
    const unstopped = reportHtml({ ...data(), findings: [{ ...data().findings[0], message: 'saxpy reaches 45% of the bandwidth; 0.106 ms per launch' }] }, 'vscode-resource:', 'N0NCE');
    assert.match(unstopped, /0\.106 ms per launch\. <span class="technique">/);  // a sentence before "Technique:"
    assert.match(html, /occupancy on sm_90<\/th><td>100% \(limited by block size\)/);
    assert.match(html, /3000\.0 GB\/s of 4000 GB\/s peak \(75%\)/);
    assert.match(html, /1\.3x the floor/);
    assert.match(html, /<b>2\.40x faster<\/b> on NVIDIA H200, verified \(4 seeds, odd size\): restrict_const → vectorize/);
    assert.match(html, /Re-run Optimize/);
    assert.match(html, /script-src 'nonce-N0NCE'/);
    assert.ok(!html.includes('scrollIntoView'));
    assert.match(reportHtml(data(), 'x', 'n', true), /getElementById\('history'\)\.scrollIntoView/);
});

test('no run and no measurement say so', () => {
    const html = reportHtml(data({ run: null, roofline: null, timing: null, resources: null }), 'x', 'n');
    assert.match(html, /No Optimize run yet/);
    assert.match(html, /No measurement on a GPU yet/);
    const nothing = reportHtml(data({ run: { ...data().run!, kind: 'nothing', best: null, reason: 'none of 5 candidates passed the differential check' } }), 'x', 'n');
    assert.match(nothing, /No faster verified version<\/b>: none of 5 candidates passed/);
});

test('outcome messages offer Show why, an applied one the report', () => {
    assert.deepEqual(outcomeActions('ReGraphT found no faster verified version of saxpy: x'), ['Show why']);
    assert.deepEqual(outcomeActions('ReGraphT: optimizing saxpy was cancelled; x'), ['Show why']);
    assert.deepEqual(outcomeActions('ReGraphT applied the 2.4x faster saxpy'), ['Show Report']);
});
