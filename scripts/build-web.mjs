#!/usr/bin/env node
// The dashboard's page (web/, issue 29), bundled by esbuild into dist/web/: index.html and
// assets/<name>-<hash>.js|.css, each with a .gz beside it for the supervisor to send as it is. Everything
// the page needs is in there (no CDN): it works with no network. Run by `npm run build`.
import { build } from 'esbuild';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, constants } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist', 'web');
const assets = path.join(outdir, 'assets');

await rm(outdir, { recursive: true, force: true });
await mkdir(assets, { recursive: true });
const r = await build({
  absWorkingDir: root,
  entryPoints: { app: 'web/main.ts' },
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  // The last two releases of Chromium and Firefox, with room to spare.
  target: ['chrome110', 'firefox115'],
  outdir: assets,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  tsconfig: 'web/tsconfig.json',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
});

const outputs = Object.keys(r.metafile.outputs).map((f) => path.relative(assets, path.join(root, f)));
const js = outputs.filter((f) => f.endsWith('.js'));
const css = outputs.filter((f) => f.endsWith('.css'));
const tags = [...css.map((f) => `<link rel="stylesheet" href="/assets/${f}" />`), ...js.map((f) => `<script type="module" src="/assets/${f}"></script>`)];
const html = (await readFile(path.join(root, 'web', 'index.html'), 'utf8')).replace('<!-- assets -->', tags.join('\n    '));
await writeFile(path.join(outdir, 'index.html'), html);

let raw = 0;
let gz = 0;
for (const f of outputs) {
  const data = await readFile(path.join(assets, f));
  const z = gzipSync(data, { level: constants.Z_BEST_COMPRESSION });
  await writeFile(path.join(assets, `${f}.gz`), z);
  if (f.endsWith('.txt')) continue;
  raw += data.length;
  gz += z.length;
}
console.log(`web: dist/web/ ${outputs.filter((f) => !f.endsWith('.txt')).join(', ')}: ${(raw / 1024).toFixed(0)} KB, ${(gz / 1024).toFixed(0)} KB gzipped`);
