// A stand-in for jaggers' hook bridge in the real-CLI hook tests: a sh script that records each call
// (its arguments, its stdin, the time in ns) as files in a folder and exits 0 at once, printing nothing.
// `installContext` gives a HookKit the same context the launcher would, with this script as `bridge`.

import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HookInstall, HookInstallContext } from '../../src/clis/types.js';

const SCRIPT = `#!/bin/sh
# capture <calls dir> <args...>: stdin to <ns>-<pid>.in, then the arguments to <ns>-<pid>.argv (last: a
# reader that sees .argv finds .in complete).
d=$1; shift
f="$d/$(date +%s%N)-$$"
cat > "$f.in"
date +%s%N > "$f.end"
printf '%s\\n' "$@" > "$f.argv.tmp" && mv "$f.argv.tmp" "$f.argv"
`;

export interface HookCall {
  /** The call's file name in the calls folder (`<ns>-<pid>`). */
  id: string;
  /** When the script ran (ms since the epoch, fractional). */
  atMs: number;
  /** When the CLI closed its stdin (ms): a bridge that reads stdin to the end waits that long. */
  stdinClosedMs: number;
  /** The arguments after the calls folder: the CLI's event name last. */
  argv: string[];
  event: string;
  stdin: string;
  /** stdin as JSON, or the raw text. */
  payload: unknown;
}

const quote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export interface HookCapture {
  calls(): HookCall[];
  /** `env`: the CLI's environment (its HOME): a kit that reads the person's files (gemini) must get the rig's, not the test runner's. */
  context(opts: { dir: string; cwd: string; version: string | null; env?: Record<string, string> }): HookInstallContext;
}

export function createHookCapture(root: string): HookCapture {
  const script = join(root, 'capture-hook.sh');
  const callsDir = join(root, 'hook-calls');
  mkdirSync(callsDir, { recursive: true });
  writeFileSync(script, SCRIPT);
  chmodSync(script, 0o755);
  const bridge = ['sh', script, callsDir];
  return {
    context: ({ dir, cwd, version, env }) => ({ bridge, bridgeShell: bridge.map(quote).join(' '), dir, cwd, version, ...(env ? { env } : {}) }),
    calls() {
      const names = readdirSync(callsDir)
        .filter((n) => n.endsWith('.argv'))
        .sort((a, b) => (BigInt(a.split('-')[0]!) < BigInt(b.split('-')[0]!) ? -1 : 1));
      return names.map((n) => {
        const base = join(callsDir, n.slice(0, -'.argv'.length));
        const argv = readFileSync(`${base}.argv`, 'utf8').split('\n').slice(0, -1);
        const stdin = existsSync(`${base}.in`) ? readFileSync(`${base}.in`, 'utf8') : '';
        let payload: unknown = stdin;
        try {
          payload = JSON.parse(stdin) as unknown;
        } catch {
          // not JSON: kept as text
        }
        const ns = (t: string): number => Number(BigInt(t.trim()) / 1000n) / 1000;
        return {
          id: n.slice(0, -'.argv'.length),
          atMs: ns(n.split('-')[0]!),
          stdinClosedMs: ns(readFileSync(`${base}.end`, 'utf8')),
          argv,
          event: argv.at(-1) ?? '',
          stdin,
          payload,
        };
      });
    },
  };
}

/** Writes an install's files and links as the launcher would (src/agents/hooks-install.ts writeHookFiles). */
export function writeInstall(install: HookInstall): void {
  for (const f of install.fresh ?? []) rmSync(f, { recursive: true, force: true });
  for (const d of install.folders ?? []) mkdirSync(d, { recursive: true });
  for (const f of install.files) {
    mkdirSync(join(f.path, '..'), { recursive: true, mode: 0o755 });
    writeFileSync(f.path, f.text, { mode: 0o644 });
  }
  for (const l of install.links ?? []) {
    mkdirSync(join(l.path, '..'), { recursive: true, mode: 0o755 });
    rmSync(l.path, { recursive: true, force: true });
    symlinkSync(l.target, l.path);
  }
}

/** Saves a payload as test/fixtures/hooks/<name>.json when JAGGERS_CAPTURE_HOOKS=1. */
export function saveFixture(name: string, payload: unknown): void {
  if (process.env.JAGGERS_CAPTURE_HOOKS !== '1') return;
  const dir = join(import.meta.dirname, '..', 'fixtures', 'hooks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(payload, null, 2)}\n`);
}

/** The time from the stub's last answer that ended before `at` (its last byte) to `at` (ms); undefined when none had. */
export function latencyAfterStub(requests: readonly { purpose: string; endedAt?: number }[], at: number): number | undefined {
  const ends = requests.filter((r) => r.purpose === 'turn' && r.endedAt !== undefined && r.endedAt <= at).map((r) => r.endedAt ?? 0);
  return ends.length === 0 ? undefined : at - Math.max(...ends);
}
