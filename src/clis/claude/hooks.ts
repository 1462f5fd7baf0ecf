// Claude Code's native hooks (issue 27): a settings file of our own passed with `--settings`, whose
// hooks call jaggers' bridge, and what each call's payload says. Checked on 2.1.197 and 2.1.330
// (test/e2e/hooks-claude.test.ts, payloads in test/fixtures/hooks/claude-*).
import path from 'node:path';
import type { HookInstall, HookInstallContext, HookKit, HookSignal } from '../types.js';

/** The events installed, and for each the `matcher` (none: every call of the event). */
const EVENTS: readonly { event: string; matcher?: string }[] = [
  { event: 'SessionStart' },
  { event: 'UserPromptSubmit' },
  { event: 'Stop' },
  { event: 'PermissionRequest' },
  // Comes ~6 s after a permission menu opens, or never; also MCP servers' questions (elicitation).
  { event: 'Notification', matcher: 'permission_prompt|elicitation_dialog' },
  // Every tool call: the watchdog's check for a turn that calls the same tool again and again.
  { event: 'PreToolUse' },
];

/** Seconds before claude gives up on a hook call: the bridge returns at once, this bounds a stuck one. */
const TIMEOUT_S = 10;

export const SETTINGS_FILE = 'claude-settings.json';

/** The `--settings` file: claude adds its hooks to those of the user's own settings (they all run). */
export function claudeHookSettings(bridgeShell: string): unknown {
  const hooks: Record<string, unknown[]> = {};
  for (const { event, matcher } of EVENTS) {
    const entry = { type: 'command', command: `${bridgeShell} ${event}`, timeout: TIMEOUT_S };
    hooks[event] = [{ ...(matcher === undefined ? {} : { matcher }), hooks: [entry] }];
  }
  return { hooks };
}

function install(ctx: HookInstallContext): HookInstall {
  const file = path.join(ctx.dir, SETTINGS_FILE);
  return {
    args: ['--settings', file],
    env: {},
    files: [{ path: file, text: `${JSON.stringify(claudeHookSettings(ctx.bridgeShell), null, 2)}\n` }],
  };
}

type Payload = Record<string, unknown>;

const asObject = (v: unknown): Payload => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Payload) : {});
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A question is for a person to read in `status`/`why`: one line, bounded. */
const MAX_QUESTION = 300;
function oneLine(s: string): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_QUESTION ? `${flat.slice(0, MAX_QUESTION - 1)}…` : flat;
}

/**
 * A prompt no person typed: 2.1.330 hands a finished background task back to the model as a
 * `<task-notification>` prompt (its `source` is then `system`); older releases send no `source`.
 */
function injectedPrompt(p: Payload): boolean {
  const source = text(p.source);
  if (source !== undefined && source !== 'user' && source !== 'sdk') return true;
  return typeof p.prompt === 'string' && p.prompt.trimStart().startsWith('<task-notification>');
}

/**
 * Background work that will wake the session with a `<task-notification>` prompt when it ends
 * (2.1.330's `background_tasks` on Stop): the turn goes on. Only agents and workflows count: a
 * background shell or monitor may run for ever (a dev server), so it does not hold the turn open.
 */
function awaitsBackgroundWork(p: Payload): boolean {
  if (!Array.isArray(p.background_tasks)) return false;
  return p.background_tasks.some((t) => {
    const { type } = asObject(t);
    return type === 'subagent' || type === 'workflow';
  });
}

/** `Bash: touch approved.txt`, or the question an AskUserQuestion call puts to the person. */
function permissionQuestion(p: Payload): string | undefined {
  const tool = text(p.tool_name);
  const input = asObject(p.tool_input);
  const questions = Array.isArray(input.questions) ? input.questions : [];
  const asked = text(asObject(questions[0]).question);
  if (asked !== undefined) return oneLine(asked);
  const detail = text(input.command) ?? text(input.file_path) ?? text(input.url) ?? text(input.description);
  if (tool === undefined) return detail === undefined ? undefined : oneLine(detail);
  return oneLine(detail === undefined ? tool : `${tool}: ${detail}`);
}

function read(event: string, payload: unknown): HookSignal[] {
  const p = asObject(payload);
  const sessionId = text(p.session_id);
  const transcriptPath = text(p.transcript_path);
  const ids = sessionId === undefined ? {} : { sessionId };
  switch (event) {
    case 'SessionStart':
      return sessionId === undefined ? [] : [{ kind: 'session', sessionId, ...(transcriptPath === undefined ? {} : { transcriptPath }) }];
    case 'UserPromptSubmit':
      return injectedPrompt(p) ? [] : [{ kind: 'turn-start', ...ids }];
    case 'Stop': {
      if (awaitsBackgroundWork(p)) return [];
      const reply = typeof p.last_assistant_message === 'string' ? { reply: p.last_assistant_message } : {};
      return [{ kind: 'turn-end', ...ids, ...reply, ...(transcriptPath === undefined ? {} : { transcriptPath }) }];
    }
    case 'PermissionRequest': {
      const question = permissionQuestion(p);
      return [{ kind: 'waiting', ...ids, ...(question === undefined ? {} : { question }) }];
    }
    case 'PreToolUse': {
      const tool = text(p.tool_name);
      if (tool === undefined) return [];
      return [{ kind: 'tool', ...ids, tool, input: JSON.stringify(p.tool_input ?? null).slice(0, 2000) }];
    }
    case 'Notification': {
      const type = text(p.notification_type);
      if (type !== 'permission_prompt' && type !== 'elicitation_dialog') return [];
      const message = text(p.message);
      return [{ kind: 'waiting', ...ids, ...(message === undefined ? {} : { question: oneLine(message) }) }];
    }
    default:
      return [];
  }
}

export const claudeHooks: HookKit = { install, read };
