// Qwen Code's hooks (0.15.10, 0.24.4): per process through `QWEN_CODE_SYSTEM_DEFAULTS_PATH`, a settings
// file of the lowest rank that qwen merges under the user's own (hook lists are joined, not replaced),
// so neither `~/.qwen/settings.json` nor the project's `.qwen/` is touched. qwen rewrites a settings file
// that lacks `"$version": 4` (its current format), so the file carries it. Each hook is `"async": true`:
// qwen does not wait for the bridge, which prints nothing (what a hook prints on UserPromptSubmit or
// SessionStart would go to the model). No `timeout`: 0.15 reads it in milliseconds, 0.24 in seconds.
// Payloads: test/fixtures/hooks/qwen-*.json.
import path from 'node:path';
import type { HookInstall, HookInstallContext, HookKit, HookSignal } from '../types.js';

/** The events jaggers listens to (qwen also has PreToolUse, SessionEnd...: no use to us). */
export const QWEN_HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'Stop', 'StopFailure', 'PermissionRequest', 'Notification'] as const;

/** The format version qwen 0.15-0.24 write (`SETTINGS_VERSION`); without it qwen rewrites the file. */
const SETTINGS_VERSION = 4;

export const QWEN_DEFAULTS_FILE = 'qwen-system-defaults.json';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

export function qwenHookSettings(bridgeShell: string): Json {
  const hooks: Json = {};
  for (const event of QWEN_HOOK_EVENTS) {
    const hook = { type: 'command', name: 'jaggers', command: `${bridgeShell} ${event}`, async: true };
    // Notification: only a permission prompt. qwen keeps the stdin of its `idle_prompt` Notification
    // (after every turn) open until it exits, so each such bridge would linger for the session's life.
    hooks[event] = [event === 'Notification' ? { matcher: 'permission_prompt', hooks: [hook] } : { hooks: [hook] }];
  }
  return { $version: SETTINGS_VERSION, hooks };
}

function install(ctx: HookInstallContext): HookInstall {
  const file = path.join(ctx.dir, QWEN_DEFAULTS_FILE);
  return {
    args: [],
    env: { QWEN_CODE_SYSTEM_DEFAULTS_PATH: file },
    files: [{ path: file, text: `${JSON.stringify(qwenHookSettings(ctx.bridgeShell), null, 2)}\n` }],
  };
}

function read(event: string, payload: unknown): HookSignal[] {
  if (!isObject(payload)) return [];
  const sessionId = nonEmpty(payload.session_id);
  const id = sessionId === undefined ? {} : { sessionId };
  switch (event) {
    case 'SessionStart':
      return sessionId === undefined ? [] : [{ kind: 'session', sessionId, ...pathOf(payload) }];
    case 'UserPromptSubmit':
      // It fires again after each tool result with an empty prompt (and, in 0.24, no `submitted_prompt`):
      // the same turn going on, not a new one.
      return nonEmpty(payload.submitted_prompt) !== undefined || nonEmpty(payload.prompt) !== undefined ? [{ kind: 'turn-start', ...id }] : [];
    case 'Stop': {
      const reply = str(payload.last_assistant_message);
      return [{ kind: 'turn-end', ...id, ...(reply === undefined ? {} : { reply }), ...pathOf(payload) }];
    }
    case 'StopFailure':
      // An API error or a loop ended the turn: its `last_assistant_message` is the error text, not a reply.
      return [{ kind: 'turn-end', ...id }];
    case 'PermissionRequest':
      return [{ kind: 'waiting', ...id, ...questionOf(payload) }];
    case 'Notification':
      return payload.notification_type === 'permission_prompt' ? [{ kind: 'waiting', ...id, ...questionOf(payload) }] : [];
    default:
      return [];
  }
}

function pathOf(payload: Json): { transcriptPath?: string } {
  const p = nonEmpty(payload.transcript_path);
  return p === undefined ? {} : { transcriptPath: p };
}

/** What the person is asked: the notification's message, else the tool and its command. */
function questionOf(payload: Json): { question?: string } {
  const message = nonEmpty(payload.message);
  if (message !== undefined) return { question: message };
  const tool = nonEmpty(payload.tool_name);
  if (tool === undefined) return {};
  const input = isObject(payload.tool_input) ? payload.tool_input : {};
  const command = nonEmpty(input.command);
  return { question: command === undefined ? tool : `${tool}: ${command}` };
}

export const qwenHooks: HookKit = { install, read };
