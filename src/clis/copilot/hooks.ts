// GitHub Copilot CLI 1.0.102's hooks: a plugin folder of jaggers' own (`--plugin-dir`) whose
// hooks/hooks.json runs jaggers' hook bridge, and what its calls say.
import type { HookInstall, HookInstallContext, HookKit, HookSignal } from '../types.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
/** A permission's question is for a status line: a command of any length is cut. */
const QUESTION_MAX = 500;

/**
 * The events hooked, by their camelCase names (copilot then sends camelCase payloads: `sessionId`,
 * `transcriptPath`...; PascalCase names get Claude-style snake_case ones).
 */
export const COPILOT_EVENTS = ['sessionStart', 'userPromptSubmitted', 'agentStop', 'permissionRequest', 'notification'] as const;

/**
 * A hook command blocks copilot until it exits; the bridge exits at once and prints nothing (a
 * permissionRequest hook that prints a decision would answer the prompt for the person). The timeout
 * only bounds a bridge that hangs.
 */
export function copilotInstall(ctx: HookInstallContext): HookInstall {
  const dir = ctx.dir.replace(/\/+$/, '');
  const hooks = Object.fromEntries(COPILOT_EVENTS.map((event) => [event, [{ type: 'command', bash: `${ctx.bridgeShell} ${event}`, timeoutSec: 5 }]]));
  const manifest = {
    name: 'jaggers-hooks',
    version: '1.0.0',
    description: "Tells jaggers when this pane's turns start and end (written by jaggers, removed on `jaggers down`).",
  };
  return {
    args: ['--plugin-dir', dir],
    env: {},
    files: [
      { path: `${dir}/.plugin/plugin.json`, text: `${JSON.stringify(manifest, null, 2)}\n` },
      { path: `${dir}/hooks/hooks.json`, text: `${JSON.stringify({ version: 1, hooks }, null, 2)}\n` },
    ],
  };
}

/** One hook call: the event name jaggers installed it under, and copilot's JSON payload. */
export function copilotRead(event: string, payload: unknown): HookSignal[] {
  if (!isObject(payload)) return [];
  const sessionId = nonEmpty(payload.sessionId);
  const withSession = sessionId === undefined ? {} : { sessionId };
  const transcriptPath = nonEmpty(payload.transcriptPath);
  const withTranscript = transcriptPath === undefined ? {} : { transcriptPath };
  switch (event) {
    case 'sessionStart':
      // Fired lazily, at the first prompt (just before userPromptSubmitted), with no transcript path.
      return sessionId === undefined ? [] : [{ kind: 'session', sessionId, ...withTranscript }];
    case 'userPromptSubmitted':
      return [{ kind: 'turn-start', ...withSession }];
    case 'agentStop':
      return [{ kind: 'turn-end', ...withSession, ...withTranscript }];
    case 'permissionRequest': {
      return [{ kind: 'waiting', ...withSession, ...question(questionOf(payload)) }];
    }
    case 'notification':
      // Also sent for finished shell commands, dialogs and agent completion: only the permission prompt counts.
      return payload.notification_type === 'permission_prompt' ? [{ kind: 'waiting', ...withSession, ...question(nonEmpty(payload.message)) }] : [];
    default:
      return [];
  }
}

const question = (text: string | undefined): { question?: string } => (text === undefined ? {} : { question: text.slice(0, QUESTION_MAX) });

/** `bash: touch approved.txt` from `{toolName, toolInput: {command}}`. */
function questionOf(payload: Json): string | undefined {
  const tool = nonEmpty(payload.toolName);
  const command = isObject(payload.toolInput) ? nonEmpty(payload.toolInput.command) : undefined;
  if (tool === undefined) return undefined;
  return command === undefined ? tool : `${tool}: ${command}`;
}

export const copilotHooks: HookKit = { install: copilotInstall, read: copilotRead };
