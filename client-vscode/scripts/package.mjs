// Package client-vscode/ into client-vscode/dist/regrapht.vsix and list what is in it.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const client = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(client, '..');
const vsce = path.join(repo, 'node_modules', '.bin', 'vsce');
const out = path.join(client, 'dist', 'regrapht.vsix');

function run(cmd, args) {
    const r = spawnSync(cmd, args, { cwd: client, stdio: 'inherit' });
    if (r.status !== 0) {
        console.error(`${path.basename(cmd)} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
        process.exit(1);
    }
}

if (!fs.readdirSync(path.join(client, 'bundled')).some((f) => f.endsWith('.whl'))) {
    console.error('package: no server wheel in client-vscode/bundled (run `npm run wheel`)');
    process.exit(1);
}
fs.rmSync(out, { force: true });
// Dependencies are bundled by esbuild, so vsce must not look at node_modules.
run(vsce, ['package', '--no-dependencies', '--allow-missing-repository', '--out', out]);
console.log('\nFiles in the .vsix:');
run(vsce, ['ls', '--no-dependencies']);
const size = fs.statSync(out).size;
console.log(`\npackage: ${path.relative(repo, out)} ${(size / 1024).toFixed(0)} KiB`);

// Guard: nothing that should stay out of the package.
const listing = spawnSync(vsce, ['ls', '--no-dependencies'], { cwd: client, encoding: 'utf-8' }).stdout;
const forbidden = listing.split('\n').filter((f) => /\.map$|DEVELOPMENT\.md$|(^|\/)node_modules\/|(^|\/)(src|test|out|scripts)\/|\.ts$/.test(f.trim()));
if (forbidden.length > 0) {
    console.error(`package: files that must not ship: ${forbidden.join(', ')}`);
    process.exit(1);
}
