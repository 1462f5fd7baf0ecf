// A stand-in for jaggers' hook bridge in the hook tests: a sh script that, like the bridge, prints
// nothing and exits at once, and records each call (its arguments, its stdin, when it started) as files
// in a folder the test reads back.

import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HookInstall, HookInstallContext } from '../../src/clis/types.js';

export interface HookCall {
  /** When the script started (ms since the epoch, from `date +%s%N`). */
  at: number;
  /** Its arguments after the script's own two (the folder, the terminal id): the event, then any more. */
  args: string[];
  event: string;
  stdin: string;
  /** stdin parsed as JSON, or the text when it is not JSON. */
  payload: unknown;
}

export interface HookCapture {
  bridge: string[];
  bridgeShell: string;
  calls(): HookCall[];
}

const SCRIPT = `#!/bin/sh
# Records one hook call: <folder>/<ns>.<pid>.stdin, then .args (NUL-separated) last, as the sign it is whole.
t=$(date +%s%N)
dir=$1
f="$dir/$t.$$"
cat > "$f.stdin"
for a in "$@"; do printf '%s\\0' "$a"; done > "$f.tmp"
mv "$f.tmp" "$f.args"
exit 0
`;

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** `root/hook-calls/` gets the calls; the script itself goes to `root/hook-capture.sh`. */
export function createHookCapture(root: string, terminalId = 'term-1'): HookCapture {
  const dir = join(root, 'hook-calls');
  mkdirSync(dir, { recursive: true });
  const script = join(root, 'hook-capture.sh');
  writeFileSync(script, SCRIPT);
  chmodSync(script, 0o755);
  const bridge = ['sh', script, dir, terminalId];
  return {
    bridge,
    bridgeShell: bridge.map(shellQuote).join(' '),
    calls() {
      const out: HookCall[] = [];
      for (const name of readdirSync(dir)) {
        if (!name.endsWith('.args')) continue;
        const base = name.slice(0, -'.args'.length);
        const args = readFileSync(join(dir, name), 'utf8').split('\0').slice(2, -1);
        const stdin = existsSync(join(dir, `${base}.stdin`)) ? readFileSync(join(dir, `${base}.stdin`), 'utf8') : '';
        let payload: unknown = stdin;
        try {
          payload = JSON.parse(stdin) as unknown;
        } catch {
          // not JSON: kept as text
        }
        out.push({ at: Number(base.split('.')[0]) / 1e6, args, event: args[0] ?? '', stdin, payload });
      }
      return out.sort((a, b) => a.at - b.at);
    },
  };
}

/** Writes a kit's files (each must be under `ctx.dir`, as the launcher insists). */
export function writeInstall(ctx: HookInstallContext, install: HookInstall): void {
  for (const f of install.files) {
    if (!f.path.startsWith(`${ctx.dir}/`)) throw new Error(`${f.path} is not under ${ctx.dir}`);
    mkdirSync(join(f.path, '..'), { recursive: true });
    writeFileSync(f.path, f.text);
  }
}

/** Saves a payload as test/fixtures/hooks/<name>.json (only when JAGGERS_CAPTURE_HOOKS=1). */
export function saveHookFixture(name: string, payload: unknown): void {
  if (process.env.JAGGERS_CAPTURE_HOOKS !== '1') return;
  const dir = join(import.meta.dirname, '..', 'fixtures', 'hooks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(payload, null, 2)}\n`);
}

/**
 * Milliseconds from the end of the stub's last answer before `at` to `at`: how long the CLI took to
 * call its end-of-turn hook after the model finished.
 */
export function latencyAfterStub(requests: readonly { purpose: string; endedAt?: number }[], at: number): number | undefined {
  const ends = requests.filter((r) => r.purpose === 'turn' && r.endedAt !== undefined && r.endedAt <= at).map((r) => r.endedAt ?? 0);
  return ends.length === 0 ? undefined : at - Math.max(...ends);
}
