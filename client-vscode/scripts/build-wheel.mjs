// Build the server wheel that ships inside the .vsix: client-vscode/bundled/regrapht-*.whl.
// Equivalent to `python3 -m pip wheel --no-deps -w client-vscode/bundled .` from the repo root.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const client = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(client, '..');
const outDir = path.join(client, 'bundled');
const venvPython = path.join(repo, '.venv', 'bin', 'python');
const python = process.env.REGRAPHT_BUILD_PYTHON || (fs.existsSync(venvPython) ? venvPython : 'python3');

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });
const args = ['-m', 'pip', 'wheel', '--no-deps', '--disable-pip-version-check', '-w', path.relative(repo, outDir), '.'];
console.log(`$ (cd ${repo} && ${python} ${args.join(' ')})`);
const run = spawnSync(python, args, { cwd: repo, stdio: 'inherit' });
if (run.status !== 0) {
    console.error(`wheel: pip exited with ${run.status ?? run.signal}`);
    process.exit(1);
}
const wheels = fs.readdirSync(outDir).filter((f) => /^regrapht-.*\.whl$/.test(f));
if (wheels.length !== 1) {
    console.error(`wheel: expected one regrapht wheel in ${outDir}, found ${JSON.stringify(wheels)}`);
    process.exit(1);
}
const size = fs.statSync(path.join(outDir, wheels[0])).size;
console.log(`wheel: client-vscode/bundled/${wheels[0]} ${(size / 1024).toFixed(0)} KiB`);
