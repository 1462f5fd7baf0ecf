#!/usr/bin/env node
// The program as bin/jaggers.js runs it, bundled by esbuild into dist/bundle/ (after `tsc`, which still
// type-checks and builds dist/src/ for the fake agent, the scripts and the tests):
// - cli.js: src/cli.ts as an ES module, with one chunk per part it imports lazily (a command's module...),
//   so a command reads a few files instead of hundreds of modules;
// - supervise.js: window 0's program (src/supervise.ts), the supervisor's entry without the CLI;
// - supervisor.cjs: the supervisor as one CommonJS file, and supervisor.cjs.cache, V8's code cache of it
//   once its modules have loaded (src/supervisor/load.ts runs it with that cache);
// - meta.json: which sources went into each file (test/unit/cli-program.test.ts reads it).
// Every .js file is then made ASCII-only (see asciiOnly), before the code cache is made.
// node-pty is native: it stays a package.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist', 'bundle');
const common = { absWorkingDir: root, bundle: true, platform: 'node', target: 'node20', external: ['node-pty'], sourcemap: 'linked', logLevel: 'warning' };

/** supervise.js leaves out the supervisor's modules: it runs supervisor.cjs (src/supervisor/load.ts). */
const supervisorApart = {
  name: 'supervisor-apart',
  setup(b) {
    b.onResolve({ filter: /^\.\/main\.js$/ }, (a) =>
      a.importer === path.join(root, 'src', 'supervisor', 'load.ts') ? { path: a.path, external: true } : undefined,
    );
  },
};

/** CommonJS packages inside an ES module still call require() for node's own modules. */
const esmRequire = { js: "import { createRequire as __jaggersRequire } from 'node:module'; const require = __jaggersRequire(import.meta.url);" };

await rm(outdir, { recursive: true, force: true });
const cli = await build({
  ...common,
  entryPoints: ['src/cli.ts'],
  outdir,
  splitting: true,
  format: 'esm',
  chunkNames: 'chunks/[name]-[hash]',
  banner: esmRequire,
  metafile: true,
});
// Window 0's program: the supervisor's entry without the CLI (no commander, no commands' table), on its own
// so that the CLI's chunks stay as they are.
await build({
  ...common,
  entryPoints: ['src/supervise.ts'],
  outfile: path.join(outdir, 'supervise.js'),
  format: 'esm',
  banner: esmRequire,
  plugins: [supervisorApart],
});
await build({
  ...common,
  entryPoints: ['src/supervisor/main.ts'],
  // fastify's default compilers: src/supervisor/app.ts gives it zod's, so these are never required.
  external: ['node-pty', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'],
  outfile: path.join(outdir, 'supervisor.cjs'),
  format: 'cjs',
  // No import(): code compiled by node:vm could not run it. The sources' import.meta.url, from the file.
  supported: { 'dynamic-import': false },
  define: { 'import.meta.url': '__jaggersUrl' },
  banner: { js: "var __jaggersUrl = require('node:url').pathToFileURL(__filename).href;" },
});
await writeFile(path.join(outdir, 'meta.json'), JSON.stringify(cli.metafile));

// esbuild leaves some characters beyond ASCII (in regular expressions and comments); one such character
// makes V8 hold a whole file as two-byte source (src/supervisor/load.ts, asciiOnlySource).
const load = pathToFileURL(path.join(root, 'dist', 'src', 'supervisor', 'load.js')).href;
const { asciiOnlySource } = await import(load);
const asciiOnly = async (file) => {
  const text = await readFile(file, 'utf8');
  const ascii = asciiOnlySource(text);
  if (ascii !== text) await writeFile(file, ascii);
};
const chunks = await readdir(path.join(outdir, 'chunks'));
for (const f of ['cli.js', 'supervise.js', 'supervisor.cjs', ...chunks.filter((c) => c.endsWith('.js')).map((c) => path.join('chunks', c))]) {
  await asciiOnly(path.join(outdir, f));
}

// The code cache, made by a node of its own as the supervisor's would be: load the bundle, then save.
const { SUPERVISOR_NODE_FLAGS } = await import(pathToFileURL(path.join(root, 'dist', 'src', 'package-root.js')).href);
execFileSync(
  process.execPath,
  [
    // The flags the supervisor runs with: V8 refuses a cache made under other ones.
    ...SUPERVISOR_NODE_FLAGS,
    '--input-type=module',
    '-e',
    `const l = await import(${JSON.stringify(load)}); l.requireWithCodeCache(l.supervisorBundle, l.supervisorCodeCache, { produce: true }); process.exit(0);`,
  ],
  // Without NODE_OPTIONS: V8 takes a cache only from a node run with the same flags as the one using it.
  { stdio: 'inherit', env: { ...process.env, NODE_OPTIONS: '' } },
);
