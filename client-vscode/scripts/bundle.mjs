// Bundle src/extension.ts (+ vscode-languageclient) into dist/extension.js; `vscode` stays external.
import * as esbuild from 'esbuild';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const production = !process.argv.includes('--dev');

const result = await esbuild.build({
    entryPoints: [path.join(root, 'src', 'extension.ts')],
    outfile: path.join(root, 'dist', 'extension.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['vscode'],
    minify: production,
    keepNames: true,
    sourcemap: production ? false : 'linked',
    metafile: true,
    logLevel: 'warning',
});
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`bundle: dist/extension.js ${(bytes / 1024).toFixed(0)} KiB (${production ? 'minified' : 'dev, with source map'})`);
