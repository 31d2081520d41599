// End-to-end test of the ReGraphT extension in a real VS Code: code-server (VS Code 1.100) from
// npm, driven by playwright-core with Debian's chromium. Run by scripts/vscode-e2e.sh.
//
// Steps (each must happen, or the test fails): install the .vsix; open examples/saxpy.cu (a copy);
// the status item reports the server; a diagnostic squiggle appears; hovering the kernel name
// shows the kernel card; a quick fix from the Ctrl+. menu changes the code; the kernel report
// command opens the long-form card. Screenshots, texts and logs go to test-artifacts/vscode/.
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

const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
const say = (msg) => console.log(`[e2e ${elapsed()}] ${msg}`);
const results = [];

for (const [what, file] of [['interpreter (REGRAPHT_PYTHON)', python], ['.vsix (npm run package)', vsix],
    ['code-server (scripts/vscode-e2e.sh installs it)', codeServer], ['chromium', browserPath]]) {
    if (!fs.existsSync(file)) {
        console.error(`e2e: missing ${what}: ${file}`);
        process.exit(2);
    }
}

fs.rmSync(artifacts, { recursive: true, force: true });
fs.mkdirSync(artifacts, { recursive: true });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'regrapht-vscode-e2e-'));
const home = path.join(work, 'home');
const userData = path.join(work, 'data');
const extensionsDir = path.join(work, 'extensions');
const workspace = path.join(work, 'workspace');
for (const d of [home, path.join(userData, 'User'), extensionsDir, workspace]) {
    fs.mkdirSync(d, { recursive: true });
}
// A copy: the quick fix edits and saves the file.
for (const f of ['saxpy.cu', 'saxpy.regrapht.toml']) {
    fs.copyFileSync(path.join(repo, 'examples', f), path.join(workspace, f));
}
fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
    'regrapht.python': python,
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
}, null, 2));

const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
};
const baseArgs = ['--user-data-dir', userData, '--extensions-dir', extensionsDir];

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

async function step(name, fn) {
    const start = Date.now();
    say(`step: ${name}`);
    try {
        const detail = await fn();
        results.push({ step: name, ok: true, ms: Date.now() - start, detail });
        say(`  ok (${((Date.now() - start) / 1000).toFixed(1)}s)${detail ? `: ${String(detail).slice(0, 200).replace(/\n/g, ' | ')}` : ''}`);
    } catch (error) {
        results.push({ step: name, ok: false, ms: Date.now() - start, error: String(error?.stack || error) });
        throw new Error(`step "${name}" failed: ${error?.message || error}`);
    }
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
            last = error;
        }
        await new Promise((r) => setTimeout(r, interval));
    }
    throw new Error(`timed out after ${timeout} ms waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
}

let server;
let browser;
let page;
let failure;
try {
    await step('install the .vsix into code-server', async () => {
        const r = spawnSync(codeServer, [...baseArgs, '--install-extension', vsix], { env, encoding: 'utf-8', timeout: 120_000 });
        const out = `${r.stdout}\n${r.stderr}`;
        fs.writeFileSync(path.join(artifacts, 'install-extension.log'), out);
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
        const logFile = fs.openSync(path.join(artifacts, 'code-server.log'), 'w');
        server = spawn(codeServer, ['--config', config, ...baseArgs, '--disable-workspace-trust', '--disable-telemetry',
            '--disable-update-check', '--disable-getting-started-override', workspace],
        { env, detached: true, stdio: ['ignore', logFile, logFile] });
        await poll('code-server /healthz', async () => (await fetch(`${url}/healthz`)).ok, 60_000, 500);
        return url;
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
        page.on('pageerror', (e) => fs.appendFileSync(path.join(artifacts, 'browser-console.log'), `pageerror: ${e.message}\n`));
        page.on('console', (m) => fs.appendFileSync(path.join(artifacts, 'browser-console.log'), `${m.type()}: ${m.text()}\n`));
        await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`, { waitUntil: 'domcontentloaded' });
        await page.locator('.monaco-workbench').waitFor({ timeout: STEP_TIMEOUT });
        await page.locator('.part.statusbar').waitFor({ timeout: STEP_TIMEOUT });
    });

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

    const squiggles = '.editor-instance .squiggly-error, .editor-instance .squiggly-warning, .editor-instance .squiggly-info, .editor-instance .squiggly-hint';
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

    await step('hover the kernel name shows the kernel card', async () => {
        const point = await pointOf('__global__', 'saxpy', 2);
        if (!point) {
            throw new Error('kernel name not found in the editor');
        }
        const hover = page.locator('.monaco-hover:not(.hidden)').filter({ hasText: 'saxpy' });
        const text = await poll('hover text', async () => {
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
        fs.writeFileSync(path.join(artifacts, 'hover.txt'), text + '\n');
        await page.screenshot({ path: path.join(artifacts, '03-hover.png') });
        await page.mouse.move(5, 300);
        await page.keyboard.press('Escape');
        return text;
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
        // The report opens as a read-only Markdown preview beside the source.
        const tab = page.locator('.tabs-container .tab', { hasText: /saxpy report/ }).first();
        await tab.waitFor({ timeout: STEP_TIMEOUT });
        await page.waitForTimeout(1500);
        await page.screenshot({ path: path.join(artifacts, '06-kernel-report.png') });
        return (await tab.innerText()).trim();
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
        await page.keyboard.insertText(JSON.stringify(settings, null, 2));
        await page.keyboard.press('Control+S');
        await page.waitForTimeout(500);
        await page.keyboard.press('Control+W');
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
} catch (error) {
    failure = error;
    console.error(`[e2e ${elapsed()}] FAILED: ${error.message}`);
    if (page) {
        await page.screenshot({ path: path.join(artifacts, 'failure.png') }).catch(() => undefined);
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
    // The extension's output channel (client log, server stderr) is a file in the logs folder.
    const logsRoot = path.join(userData, 'logs');
    const found = [];
    const walk = (dir) => {
        for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
            const p = path.join(dir, entry.name);
            if (entry.isDirectory()) {
                walk(p);
            } else if (/ReGraphT|exthost\.log|remoteexthost\.log/i.test(entry.name)) {
                found.push(p);
            }
        }
    };
    walk(logsRoot);
    for (const f of found) {
        fs.copyFileSync(f, path.join(artifacts, `log-${path.basename(path.dirname(f))}-${path.basename(f)}`));
    }
    fs.writeFileSync(path.join(artifacts, 'results.json'), JSON.stringify({ ok: !failure, seconds: (Date.now() - t0) / 1000, results }, null, 2));
    if (!keep) {
        fs.rmSync(work, { recursive: true, force: true });
    } else {
        say(`kept ${work}`);
    }
}
const shots = fs.readdirSync(artifacts).filter((f) => f.endsWith('.png')).map((f) => path.join('test-artifacts', 'vscode', f));
say(`screenshots: ${shots.join(', ')}`);
if (failure) {
    console.error('e2e: FAILED');
    process.exit(1);
}
say(`e2e: PASSED (${results.length} steps)`);
