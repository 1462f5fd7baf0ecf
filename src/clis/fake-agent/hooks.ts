// The fake agent's hooks (src/fake-agent/hooks.ts runs them): a settings file given with `--hooks`
// names a command line per event, run with `sh -c` with the payload JSON on stdin and waited for, as
// claude runs its hooks. Its payloads copy claude's fields (`session_id`, `last_assistant_message`).
import path from 'node:path';
import type { HookInstall, HookInstallContext, HookKit, HookSignal } from '../types.js';

/** The events the fake agent fires, in its settings file's keys. */
export const FAKE_AGENT_HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'Stop', 'PermissionRequest'] as const;

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
/** A field of a payload that is an object: a string of at most `max` characters, else undefined. */
function str(o: Record<string, unknown>, key: string, max = 16 * 1024 * 1024): string | undefined {
  const v = o[key];
  return typeof v === 'string' && v.length <= max ? v : undefined;
}

export const fakeAgentHooks: HookKit = {
  install(ctx: HookInstallContext): HookInstall {
    const file = path.join(ctx.dir, 'fake-agent-hooks.json');
    const hooks = Object.fromEntries(FAKE_AGENT_HOOK_EVENTS.map((e) => [e, `${ctx.bridgeShell} ${e}`]));
    return { args: ['--hooks', file], env: {}, files: [{ path: file, text: `${JSON.stringify({ hooks }, null, 2)}\n` }] };
  },
  read(event: string, payload: unknown): HookSignal[] {
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return [];
    const p = payload as Record<string, unknown>;
    const raw = str(p, 'session_id', 128);
    const sessionId = raw !== undefined && ID.test(raw) ? raw : undefined;
    const sid = sessionId ? { sessionId } : {};
    switch (event) {
      case 'SessionStart': {
        const transcriptPath = str(p, 'transcript_path', 4096);
        return sessionId ? [{ kind: 'session', sessionId, ...(transcriptPath ? { transcriptPath } : {}) }] : [];
      }
      case 'UserPromptSubmit':
        return [{ kind: 'turn-start', ...sid }];
      case 'Stop': {
        const reply = str(p, 'last_assistant_message');
        return [{ kind: 'turn-end', ...sid, ...(reply !== undefined ? { reply } : {}) }];
      }
      case 'PermissionRequest': {
        const question = str(p, 'message', 4096);
        return [{ kind: 'waiting', ...sid, ...(question ? { question } : {}) }];
      }
      default:
        return [];
    }
  },
};
