// The fake agent's hooks, run as claude runs its own: a command line per event from the `--hooks`
// settings file, `sh -c` with the payload JSON on stdin, waited for (bounded), its output ignored.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

export type HookCommands = Readonly<Record<string, string>>;

/** The settings file's hooks; an error names the file and what is wrong. */
export function loadHooks(file: string): { ok: true; hooks: HookCommands } | { ok: false; message: string } {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    return { ok: false, message: `--hooks ${file}: ${(e as Error).message}` };
  }
  const hooks = (data as { hooks?: unknown } | null)?.hooks;
  if (typeof hooks !== 'object' || hooks === null || Array.isArray(hooks))
    return { ok: false, message: `--hooks ${file}: needs {"hooks": {"<event>": "<command>"}}` };
  for (const [k, v] of Object.entries(hooks)) if (typeof v !== 'string') return { ok: false, message: `--hooks ${file}: hooks.${k} must be a command line` };
  return { ok: true, hooks: hooks as HookCommands };
}

/** Run the event's command, if any, with the payload on stdin; waits for it (at most 10 s). */
export function runHook(hooks: HookCommands, event: string, payload: Record<string, unknown>): void {
  const cmd = hooks[event];
  if (!cmd) return;
  spawnSync('sh', ['-c', cmd], { input: JSON.stringify({ hook_event_name: event, ...payload }), stdio: ['pipe', 'ignore', 'ignore'], timeout: 10_000 });
}
