// Gemini CLI's hooks (0.61.0). Per process, the one way that writes nothing outside jaggers' folder is
// `GEMINI_CLI_SYSTEM_DEFAULTS_PATH` naming a settings file of the lowest rank (hook lists are joined with
// the user's own, not replaced). gemini reads that file only if it and every folder above it belong to
// root and no group or other may write them (else it skips it with a "Security Warning" on screen): so
// hooks work when jaggers runs as root in a folder whose parents are root's (containers, CI), and never
// for an ordinary user. The other ways all write elsewhere: `<cwd>/.gemini/settings.json` (the project;
// its first start also writes `~/.gemini/trusted_hooks.json` and shows a warning block), extensions
// (`~/.gemini/extensions/`), or `GEMINI_CLI_HOME` (a whole new home: the person's sign-in, settings,
// trusted folders and conversations are not there). Where none fits, `install` says why and adds
// nothing; the screen decides. Hooks run only in a trusted folder, and block gemini until they exit.
// Payloads: test/fixtures/hooks/gemini-*.json.
import { lstatSync, statSync } from 'node:fs';
import path from 'node:path';
import type { HookInstall, HookInstallContext, HookKit, HookSignal } from '../types.js';

export const GEMINI_HOOK_EVENTS = ['SessionStart', 'BeforeAgent', 'AfterAgent', 'Notification'] as const;

export const GEMINI_DEFAULTS_FILE = 'gemini-system-defaults.json';

/** The owner and mode of a path (following symlinks), and whether the path itself is a symlink owned by `linkUid`. */
export interface PathInfo {
  uid: number;
  mode: number;
  link?: { uid: number };
}

/** What `install` needs to know of the machine: who we are and who owns the folders above `dir`. */
export interface GeminiProbe {
  uid(): number | undefined;
  /** null: the path does not exist (yet). */
  info(p: string): PathInfo | null;
}

export const nodeProbe: GeminiProbe = {
  uid: () => process.getuid?.(),
  info(p) {
    try {
      const l = lstatSync(p);
      const s = l.isSymbolicLink() ? statSync(p) : l;
      return { uid: s.uid, mode: s.mode, ...(l.isSymbolicLink() ? { link: { uid: l.uid } } : {}) };
    } catch {
      return null;
    }
  },
};

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** Hook timeout (ms): the bridge returns at once; this bounds how long a broken one could hold gemini. */
const TIMEOUT_MS = 5_000;

export function geminiHookSettings(bridgeShell: string): Json {
  const hooks: Json = {};
  for (const event of GEMINI_HOOK_EVENTS) {
    hooks[event] = [{ hooks: [{ type: 'command', name: `jaggers-${event}`, command: `${bridgeShell} ${event}`, timeout: TIMEOUT_MS }] }];
  }
  return { hooks };
}

const GROUP_OR_OTHER_WRITE = 0o022;

/**
 * Why gemini would refuse a system settings file in `dir` (null: it would read it): the check gemini
 * 0.61 makes (`isFileAndDirectorySecureSync`) on every folder from `dir` up to `/`, and on the file,
 * which jaggers (as root) then creates.
 */
export function whyNotSecure(dir: string, probe: GeminiProbe): string | null {
  const uid = probe.uid();
  if (uid !== 0) {
    return `gemini reads a per-process settings file (GEMINI_CLI_SYSTEM_DEFAULTS_PATH) only when root owns it and every folder above it; jaggers runs as uid ${uid ?? 'unknown'}, and the other ways (the project's .gemini/settings.json, ~/.gemini) write outside .jaggers/`;
  }
  for (let p = path.resolve(dir); ; p = path.dirname(p)) {
    const info = probe.info(p);
    if (info !== null) {
      if (info.link !== undefined && info.link.uid !== 0)
        return `gemini refuses its settings file under ${p}: a symlink owned by uid ${info.link.uid}, not root`;
      if (info.uid !== 0) return `gemini refuses its settings file under ${p}: owned by uid ${info.uid}, not root`;
      if ((info.mode & GROUP_OR_OTHER_WRITE) !== 0)
        return `gemini refuses its settings file under ${p}: group or others may write it (mode ${(info.mode & 0o7777).toString(8)})`;
    }
    if (path.dirname(p) === p) return null;
  }
}

export function geminiInstaller(probe: GeminiProbe): (ctx: HookInstallContext) => HookInstall {
  return (ctx): HookInstall => {
    const why = whyNotSecure(ctx.dir, probe);
    if (why !== null) return { args: [], env: {}, files: [], unavailable: why };
    const file = path.join(ctx.dir, GEMINI_DEFAULTS_FILE);
    return {
      args: [],
      env: { GEMINI_CLI_SYSTEM_DEFAULTS_PATH: file },
      files: [{ path: file, text: `${JSON.stringify(geminiHookSettings(ctx.bridgeShell), null, 2)}\n` }],
    };
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

export const geminiHooks: HookKit = { install: geminiInstaller(nodeProbe), read };
