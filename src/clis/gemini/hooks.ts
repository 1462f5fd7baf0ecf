// Gemini CLI's hooks (0.61.0), for every user: gemini runs with `GEMINI_CLI_HOME` naming an overlay home
// under the pane's hook folder (./overlay.ts): its `.gemini/settings.json` is the person's own with
// jaggers' hooks joined in (their hook lists kept, ours put first), and every other entry links to the
// person's real `~/.gemini`, so sign-in, sessions, trust and history stay theirs. Neither `~/.gemini`
// nor the project's `.gemini/` gets jaggers' hooks; the overlay goes with the hook folder on `down`.
// (gemini's other per-process way, `GEMINI_CLI_SYSTEM_DEFAULTS_PATH`, is read only when root owns the
// file and every folder above it, so it served root alone.) Hooks run only in a trusted folder, and
// block gemini until they exit. Payloads: test/fixtures/hooks/gemini-*.json.
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HookInstall, HookInstallContext, HookKit, HookSignal } from '../types.js';
import { planOverlay, type GeminiHomeReader } from './overlay.js';
import { parseSettings } from './settings-join.js';

export const GEMINI_HOOK_EVENTS = ['SessionStart', 'BeforeAgent', 'AfterAgent', 'Notification'] as const;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
const code = (e: unknown): unknown => (e as NodeJS.ErrnoException | null)?.code;

/** The person's files, as the machine has them. */
export const nodeReader: GeminiHomeReader = {
  list(dir) {
    try {
      return readdirSync(dir);
    } catch (e) {
      if (code(e) === 'ENOENT') return null;
      throw e;
    }
  },
  read(file) {
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      if (code(e) === 'ENOENT') return null;
      throw e;
    }
  },
  exists(p) {
    try {
      lstatSync(p);
      return true;
    } catch {
      return false;
    }
  },
};

/** Hook timeout (ms): the bridge returns at once; this bounds how long a broken one could hold gemini. */
const TIMEOUT_MS = 5_000;

/** jaggers' hook definitions, per event. */
export function geminiHookDefinitions(bridgeShell: string): Record<string, unknown[]> {
  const hooks: Record<string, unknown[]> = {};
  for (const event of GEMINI_HOOK_EVENTS) {
    hooks[event] = [{ hooks: [{ type: 'command', name: `jaggers-${event}`, command: `${bridgeShell} ${event}`, timeout: TIMEOUT_MS }] }];
  }
  return hooks;
}

/** The home gemini uses in a pane with this environment: `GEMINI_CLI_HOME`, else HOME (a relative one from the pane's folder). */
export function geminiHomeOf(env: Readonly<Record<string, string | undefined>>, cwd: string, fallback: () => string = os.homedir): string {
  return path.resolve(cwd, nonEmpty(env.GEMINI_CLI_HOME) ?? nonEmpty(env.HOME) ?? fallback());
}

export function geminiInstaller(
  reader: GeminiHomeReader,
  supervisorEnv: () => NodeJS.ProcessEnv = () => process.env,
): (ctx: HookInstallContext) => HookInstall {
  return (ctx): HookInstall => {
    const env = ctx.env ?? supervisorEnv();
    const got = planOverlay(
      {
        dir: ctx.dir,
        realHome: geminiHomeOf(env, ctx.cwd),
        hooks: geminiHookDefinitions(ctx.bridgeShell),
        trustedFoldersSet: nonEmpty(env.GEMINI_CLI_TRUSTED_FOLDERS_PATH) !== undefined,
      },
      reader,
    );
    if (!got.ok) return { args: [], env: {}, files: [], unavailable: got.why };
    const { plan } = got;
    return { args: [], env: plan.env, files: [plan.settings], links: plan.links, fresh: [plan.home], folders: plan.folders };
  };
}

/** What to know before the hooks run: the person's settings turn every hook off (`hooksConfig.enabled: false`), jaggers' too. */
export function geminiCaveat(reader: GeminiHomeReader): (env: NodeJS.ProcessEnv) => string | null {
  return (env) => {
    const file = path.join(geminiHomeOf(env, process.cwd()), '.gemini', 'settings.json');
    let text: string | null;
    try {
      text = reader.read(file);
    } catch {
      return null;
    }
    const parsed = text === null ? null : parseSettings(text, file);
    const config = parsed?.ok ? parsed.settings.hooksConfig : undefined;
    return isObject(config) && config.enabled === false
      ? `${file} turns gemini's hooks off (hooksConfig.enabled: false), jaggers' with them: the screen decides`
      : null;
  };
}

function read(event: string, payload: unknown): HookSignal[] {
  if (!isObject(payload)) return [];
  const sessionId = nonEmpty(payload.session_id);
  const id = sessionId === undefined ? {} : { sessionId };
  const transcriptPath = nonEmpty(payload.transcript_path);
  switch (event) {
    case 'SessionStart':
      if (sessionId === undefined) return [];
      // On --resume its transcript_path names a new file that stays empty (the turns go to the old one).
      return [{ kind: 'session', sessionId, ...(transcriptPath !== undefined && payload.source !== 'resume' ? { transcriptPath } : {}) }];
    case 'BeforeAgent':
      return [{ kind: 'turn-start', ...id }];
    case 'AfterAgent':
      // `prompt_response` is not the reply (streamed chunks joined with spaces, repeated): no `reply`.
      return [{ kind: 'turn-end', ...id, ...(transcriptPath === undefined ? {} : { transcriptPath }) }];
    case 'Notification':
      if (payload.notification_type !== 'ToolPermission') return [];
      return [{ kind: 'waiting', ...id, ...questionOf(payload) }];
    default:
      return [];
  }
}

function questionOf(payload: Json): { question?: string } {
  const message = nonEmpty(payload.message);
  return message === undefined ? {} : { question: message };
}

export const geminiHooks: HookKit = { install: geminiInstaller(nodeReader), read, caveat: geminiCaveat(nodeReader) };
