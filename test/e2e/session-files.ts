// Where each real CLI keeps a conversation on disk (under its HOME), to check pinning and resume.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { CliName } from './clis.js';

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

/** claude and qwen name the project folder after the cwd with every non-alphanumeric as `-`. */
export const projectDirName = (cwd: string): string => cwd.replace(/[^A-Za-z0-9]/g, '-');

/**
 * gemini's name for the project in `cwd` (its folder under `~/.gemini/tmp/`), from the `projects.json`
 * of each gemini home in `geminiDirs` (the person's `~/.gemini`, and with hooks on the overlay's
 * `.jaggers/hooks/<id>/home/.gemini`, where gemini's rename leaves its own copy); undefined when none names it.
 */
export function geminiSlug(geminiDirs: string[], cwd: string): string | undefined {
  for (const dir of geminiDirs) {
    const file = join(dir, 'projects.json');
    if (!existsSync(file)) continue;
    const slug = (JSON.parse(readFileSync(file, 'utf8')) as { projects?: Record<string, string> }).projects?.[cwd];
    if (slug) return slug;
  }
  return undefined;
}

/**
 * The session file of conversation `id`, or undefined if the CLI has not written it. gemini's folder is
 * `slug` when given, else the cwd's basename (gemini's slug when no other project took it first).
 */
export function sessionFile(cli: CliName, home: string, cwd: string, id: string, slug?: string): string | undefined {
  const candidates: string[] = (() => {
    switch (cli) {
      case 'opencode':
        // One SQLite database for every session (see opencodeSessions for the ids in it).
        return [join(home, '.local', 'share', 'opencode', 'opencode.db')];
      case 'claude':
        return [join(home, '.claude', 'projects', projectDirName(cwd), `${id}.jsonl`)];
      case 'qwen':
        return [join(home, '.qwen', 'projects', projectDirName(cwd), 'chats', `${id}.jsonl`)];
      case 'gemini':
        // session-<date>-<first 8 of the uuid>.jsonl; its first line carries the full sessionId.
        return walk(join(home, '.gemini', 'tmp', slug ?? basename(cwd), 'chats')).filter((f) => basename(f).endsWith(`-${id.slice(0, 8)}.jsonl`));
      case 'codex':
        return walk(join(home, '.codex', 'sessions')).filter((f) => basename(f).endsWith(`-${id}.jsonl`));
      case 'copilot':
        // A folder per session: events.jsonl (session.start, user.message, assistant.message, ...).
        return [join(home, '.copilot', 'session-state', id, 'events.jsonl')];
    }
  })();
  return candidates.find((f) => existsSync(f));
}

/** First line of a JSONL file, parsed. */
export function firstJsonLine(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8').split('\n')[0] ?? '{}') as Record<string, unknown>;
}

/** codex session ids, from line 1 (`session_meta.payload.id`) of each rollout file, oldest first. */
export function codexSessionIds(home: string): string[] {
  return walk(join(home, '.codex', 'sessions'))
    .filter((f) => /rollout-.*\.jsonl$/.test(basename(f)))
    .sort()
    .map((f) => {
      const meta = firstJsonLine(f);
      const payload = meta.payload as { id?: unknown } | undefined;
      return meta.type === 'session_meta' && typeof payload?.id === 'string' ? payload.id : undefined;
    })
    .filter((id): id is string => id !== undefined);
}

export interface OpencodeSession {
  id: string;
  directory: string;
  created: number;
}

/** opencode's sessions of the project in `cwd`, newest first, as `opencode session list --format json` prints them. */
export function opencodeSessions(bin: string, env: Record<string, string>, cwd: string): OpencodeSession[] {
  const out = execFileSync(bin, ['session', 'list', '--format', 'json'], { cwd, env, encoding: 'utf8', timeout: 30_000 });
  return out.trim() === '' ? [] : (JSON.parse(out) as OpencodeSession[]);
}

/** opencode's record of one session (`opencode export <id>`: its info and every message, as JSON text). */
export function opencodeExport(bin: string, env: Record<string, string>, cwd: string, id: string): string {
  return execFileSync(bin, ['export', id], { cwd, env, encoding: 'utf8', timeout: 30_000 });
}
