import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The same code runs from src/ (tests) and dist/src/ (installed), so find the root by its package.json.
function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'profiles'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('jaggers: cannot find the package root');
    dir = up;
  }
}

export const packageRoot = findRoot();
export const builtinProfilesDir = path.join(packageRoot, 'profiles');
export const binDir = path.join(packageRoot, 'bin');
export const cliEntry = path.join(packageRoot, 'bin', 'jaggers.js');
/** Window 0's program, the supervisor without the CLI (src/supervise.ts, bundled by `npm run build`). */
export const superviseEntry = path.join(packageRoot, 'dist', 'bundle', 'supervise.js');

/** The version in package.json, for `jaggers --version`. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * Node flags of the supervisor's process. A young generation of 2 MiB semi-spaces instead of node's
 * default keeps its memory low for a process that lives for days (with 100 idle agents, 87 against
 * 115 MiB; BENCHMARKS.md). `--always-sparkplug` gives a function V8's baseline code at its first call
 * rather than after some hundred runs in the interpreter: the message path is wide, each function runs
 * a few times per message, and a supervisor just started spent much of a burst interpreting them
 * (BENCHMARKS.md, "Baseline code at once"). V8 takes a code cache only from a node run with the same
 * flags: the build makes the supervisor's with these.
 */
export const SUPERVISOR_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--always-sparkplug'];
