import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { bottomLines } from '../detect/classify.js';
import type { Profile } from '../profiles/schema.js';
import { capturePane } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';

export interface ReplySource {
  client: ControlClient;
  paneId: string;
  profile: Profile;
  /** The nonce the pointer prompt carried: the reply starts after its echo. */
  nonce: string;
  sessionId: string | null;
  home: string;
  cwd: string;
}

/** The last reply in the CLI's own transcript of the pinned session, where the CLI keeps one. */
export async function replyFromTranscript(
  kind: Profile['session']['transcript'],
  home: string,
  cwd: string,
  sessionId: string,
  nonce: string,
): Promise<string | null> {
  const tag = `[jg:${nonce}]`;
  try {
    if (kind === 'fake-agent') {
      const s = JSON.parse(await readFile(path.join(home, '.fake-agent', 'sessions', `${sessionId}.json`), 'utf8')) as {
        turns?: { prompt?: string; reply?: string }[];
      };
      // The turn whose prompt carried our nonce, not merely the last one.
      return s.turns?.findLast((t) => t.prompt?.includes(tag))?.reply ?? null;
    }
    if (kind === 'claude') {
      // claude names the folder after the cwd with every character but letters and digits as '-'.
      const file = path.join(home, '.claude', 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
      type Entry = { type?: string; message?: { content?: string | { type: string; text?: string }[] } };
      const entries = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Entry);
      const textOf = (e: Entry) =>
        typeof e.message?.content === 'string' ? e.message.content : (e.message?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
      const asked = entries.findLastIndex((e) => e.type === 'user' && textOf(e).includes(tag));
      if (asked < 0) return null;
      const replies = entries.slice(asked + 1).filter((e) => e.type === 'assistant').map(textOf).filter(Boolean);
      return replies.length ? replies.join('\n') : null;
    }
  } catch {
    return null;
  }
  return null;
}

/**
 * The reply as the screen shows it: the lines after the prompt's echo (found by its nonce), up to
 * the input area at the bottom (the lines the idle rule looks at).
 */
export function replyFromScreen(screen: string, nonce: string, profile: Profile): string {
  const lines = screen.split('\n').map((l) => l.trimEnd());
  let start = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]!.includes(`[jg:${nonce}]`)) {
      start = i + 1;
      break;
    }
  }
  const idleRegion = Math.max(0, ...profile.detect.rules.filter((r) => r.status === 'idle').map((r) => r.lines));
  const bottom = new Set(bottomLines(screen, idleRegion));
  let body = lines.slice(Math.max(0, start));
  while (body.length && (body.at(-1)!.trim() === '' || bottom.has(body.at(-1)!))) body = body.slice(0, -1);
  if (profile.detect.replyMarker) {
    const re = new RegExp(profile.detect.replyMarker, 'u');
    const first = body.findIndex((l) => re.test(l));
    if (first >= 0) body = body.slice(first);
  }
  return body.join('\n').trim();
}

export async function captureReply(src: ReplySource): Promise<{ text: string; from: 'transcript' | 'screen' }> {
  const kind = src.profile.session.transcript;
  if (kind && src.sessionId) {
    const t = await replyFromTranscript(kind, src.home, src.cwd, src.sessionId, src.nonce);
    if (t !== null) return { text: t, from: 'transcript' };
  }
  const screen = await capturePane(src.client, src.paneId, { history: 3000 });
  return { text: replyFromScreen(screen, src.nonce, src.profile), from: 'screen' };
}

/**
 * Whether the turn that carried `nonce` has really finished: its reply is in the CLI's transcript, or
 * (screen only) the prompt's echo is on screen above the input area. A `done` seen before that is a
 * previous turn's summary still on screen.
 */
export async function turnConfirmed(src: ReplySource): Promise<boolean> {
  const kind = src.profile.session.transcript;
  if (kind && src.sessionId) return (await replyFromTranscript(kind, src.home, src.cwd, src.sessionId, src.nonce)) !== null;
  const screen = await capturePane(src.client, src.paneId, { history: 3000 });
  const tag = `[jg:${src.nonce}]`;
  const idleRegion = Math.max(0, ...src.profile.detect.rules.filter((r) => r.status === 'idle').map((r) => r.lines));
  return screen.includes(tag) && !bottomLines(screen, idleRegion).some((l) => l.includes(tag));
}
