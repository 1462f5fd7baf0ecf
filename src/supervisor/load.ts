// How window 0's program (src/supervise.ts) gets the supervisor's code. Built, it is one CommonJS bundle
// (dist/bundle/supervisor.cjs) compiled with the V8 code cache `npm run build` made beside it: V8 then
// skips parsing and compiling most of it, which halves the time a supervisor takes to load (and so to
// answer after a restart). Node 20 has no such cache for ES modules. From the sources (tests), its modules.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { JaggersError } from '../errors.js';
import { packageRoot } from '../package-root.js';
import type * as Supervisor from './main.js';

export type SupervisorModule = typeof Supervisor;

export const supervisorBundle = path.join(packageRoot, 'dist', 'bundle', 'supervisor.cjs');
export const supervisorCodeCache = `${supervisorBundle}.cache`;

export async function loadSupervisor(): Promise<SupervisorModule> {
  if (!import.meta.url.includes('/dist/bundle/')) return import('./main.js');
  if (!existsSync(supervisorBundle)) throw new JaggersError('E_SUPERVISOR_START', `${supervisorBundle} is missing: run \`npm run build\``);
  return requireWithCodeCache(supervisorBundle, supervisorCodeCache).module as SupervisorModule;
}

/**
 * Run a CommonJS file as `require` would, compiled with the code cache in `cacheFile` when there is one
 * (V8 refuses a cache made from other source or by another V8, and then compiles as usual). `produce`
 * writes that cache instead, after the file ran: it then holds every function its loading compiled.
 * The build makes the bundle and its cache together, in a folder it empties first.
 */
export function requireWithCodeCache(
  file: string,
  cacheFile: string,
  o: { produce?: boolean } = {},
): { module: unknown; cache: 'used' | 'rejected' | 'none' | 'written' } {
  const source = readFileSync(file, 'utf8');
  let cachedData: Buffer | undefined;
  if (!o.produce) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // no cache: compiled as usual
    }
  }
  // One line, as node wraps a module: line numbers in stack traces stay the file's.
  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${source}\n})`;
  const script = new vm.Script(wrapped, { filename: file, ...(cachedData ? { cachedData } : {}) });
  const mod = { exports: {} as unknown };
  const fn = script.runInThisContext() as (e: unknown, r: NodeJS.Require, m: { exports: unknown }, f: string, d: string) => void;
  fn.call(mod.exports, mod.exports, createRequire(file), mod, file, path.dirname(file));
  if (o.produce) {
    writeFileSync(cacheFile, script.createCachedData());
    return { module: mod.exports, cache: 'written' };
  }
  return { module: mod.exports, cache: cachedData ? (script.cachedDataRejected ? 'rejected' : 'used') : 'none' };
}

/**
 * `text`, a file of JavaScript, with each character beyond ASCII written as a `\u` escape. esbuild writes
 * strings and templates ASCII-only but leaves such characters as they are in regular expressions and
 * comments (the screen patterns' pointer and box-drawing characters, zod's and XState's comments), and one
 * of them makes V8 hold the whole file as two-byte source: reading, checking and compiling the 3.7 MB
 * supervisor took about 100 ms more at each start (BENCHMARKS.md, 2026-11-27). The escape means the same
 * there: a character beyond U+FFFF becomes a pair, as in strings (in a /u pattern the pair reads as the one
 * character), and one escaped by a backslash (`\✦`, the same as the character) loses that backslash.
 * Those lines' columns move a little in the source maps.
 */
export function asciiOnlySource(text: string): string {
  return text.replace(
    /(\\*)([^\x00-\x7f])/g,
    (_, bs: string, c: string) => (bs.length % 2 === 1 ? bs.slice(1) : bs) + `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
