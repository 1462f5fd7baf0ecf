// codex's native hooks (issue 27): on the command line only, `-c hooks.<Event>=[...]` per event and
// `-c hooks.state={...}` trusting exactly those hooks for this process, so nothing is written to the
// codex home and the user's own hooks keep their review. Releases before 0.169.0: `notify` instead.
import { createHash } from 'node:crypto';
import type { HookInstall, HookInstallContext, HookKit, HookSignal } from '../types.js';

/** The events jaggers listens to, with the names codex's trust keys and hashes use. */
const EVENTS = {
  SessionStart: 'session_start',
  UserPromptSubmit: 'user_prompt_submit',
  PermissionRequest: 'permission_request',
  Stop: 'stop',
} as const;

/** The event name the bridge is given for a `notify` call (codex passes the payload as one more argument). */
export const NOTIFY_EVENT = 'notify';

/** Seconds codex waits for the bridge before it gives up on it (the bridge exits at once). */
const TIMEOUT_S = 5;

/** The first release whose hooks jaggers has run (0.169.0: the events, payloads and trust keys below). */
const HOOKS_SINCE = [0, 169, 0] as const;

/** Where codex files `-c` overrides: the trust key of a hook is `<that path>:<event>:<group>:<handler>`. */
const SESSION_FLAGS_SOURCE = '/<session-flags>/config.toml';

/** A TOML basic string: JSON's escapes are TOML's, and TOML wants DEL escaped too. */
const tomlString = (s: string): string => JSON.stringify(s).replace(/\x7f/g, '\\u007f');

/**
 * The hash codex 0.169.0 trusts a hook by: sha256 of the compact JSON, keys sorted, of the hook's
 * group as it reads it (checked against the hashes its "Trust all" writes into config.toml).
 */
export function codexHookHash(event: string, command: string, timeoutS: number): string {
  const identity = `{"event_name":${JSON.stringify(event)},"hooks":[{"async":false,"command":${JSON.stringify(command)},"timeout":${timeoutS},"type":"command"}]}`;
  return `sha256:${createHash('sha256').update(identity).digest('hex')}`;
}

/** Whether `version` (x.y.z...) is older than the first release with the hooks used here; unknown: no. */
function beforeHooks(version: string | null): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version ?? '');
  if (!m) return false;
  for (let i = 0; i < 3; i++) {
    const d = Number(m[i + 1]) - HOOKS_SINCE[i]!;
    if (d !== 0) return d < 0;
  }
  return false;
}

export function installCodexHooks(ctx: HookInstallContext): HookInstall {
  // `-c notify=` replaces the user's own notify program, and fires for codex's title thread too: only
  // where there are no hooks.
  if (beforeHooks(ctx.version)) return { args: ['-c', `notify=${JSON.stringify([...ctx.bridge, NOTIFY_EVENT])}`], env: {}, files: [] };
  const args: string[] = [];
  const trust: string[] = [];
  for (const [event, key] of Object.entries(EVENTS)) {
    const command = `${ctx.bridgeShell} ${event}`;
    args.push('-c', `hooks.${event}=[{hooks=[{type="command",command=${tomlString(command)},timeout=${TIMEOUT_S}}]}]`);
    trust.push(`${tomlString(`${SESSION_FLAGS_SOURCE}:${key}:0:0`)}={trusted_hash=${tomlString(codexHookHash(key, command, TIMEOUT_S))}}`);
  }
  args.push('-c', `hooks.state={${trust.join(',')}}`);
  return { args, env: {}, files: [] };
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** `{kind, sessionId?, ...}` without the fields that are undefined. */
function signal<S extends HookSignal>(s: S): S {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) as S;
}

/** A payload the bridge could not parse comes as text: codex's notify argument is JSON all the same. */
function asObject(payload: unknown): Json | undefined {
  if (isObject(payload)) return payload;
  if (typeof payload !== 'string') return undefined;
  try {
    const v: unknown = JSON.parse(payload);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * codex's TUI names each conversation with a side thread whose one turn also ends in a notify: its
 * answer is a JSON object holding only the title (`{"title":"..."}`).
 */
function isTitleThread(reply: string | undefined): boolean {
  if (reply === undefined || !reply.startsWith('{')) return false;
  try {
    const v: unknown = JSON.parse(reply);
    return isObject(v) && Object.keys(v).length === 1 && typeof v.title === 'string';
  } catch {
    return false;
  }
}

/** The question a permission request puts to a person: the tool and the command it wants to run. */
function questionOf(p: Json): string | undefined {
  const tool = str(p.tool_name);
  const input = isObject(p.tool_input) ? p.tool_input : {};
  const what = str(input.command) ?? str(input.cmd);
  if (tool && what) return `${tool}: ${what}`;
  return tool ?? what;
}

/**
 * One bridge call from codex. No event comes when a person presses Esc in a turn (codex logs
 * `Interrupt`), nor when a hook blocks the prompt: the screen still catches those.
 */
export function readCodexHook(event: string, payload: unknown): HookSignal[] {
  const p = asObject(payload);
  if (p === undefined) return [];
  const sessionId = str(p.session_id);
  switch (event) {
    case 'SessionStart':
      return sessionId ? [signal({ kind: 'session', sessionId, transcriptPath: str(p.transcript_path) })] : [];
    case 'UserPromptSubmit':
      return [signal({ kind: 'turn-start', sessionId })];
    case 'PermissionRequest':
      return [signal({ kind: 'waiting', sessionId, question: questionOf(p) })];
    case 'Stop': {
      // The reply exactly as codex sent it; none when the turn ended without a message.
      const reply = typeof p.last_assistant_message === 'string' ? p.last_assistant_message : undefined;
      return [signal({ kind: 'turn-end', sessionId, reply, transcriptPath: str(p.transcript_path) })];
    }
    case NOTIFY_EVENT: {
      if (p.type !== 'agent-turn-complete') return [];
      const reply = typeof p['last-assistant-message'] === 'string' ? p['last-assistant-message'] : undefined;
      if (isTitleThread(reply)) return [];
      return [signal({ kind: 'turn-end', sessionId: str(p['thread-id']), reply })];
    }
    default:
      return [];
  }
}

export const codexHooks: HookKit = { install: installCodexHooks, read: readCodexHook };
