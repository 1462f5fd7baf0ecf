import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { inputAreaLines, splitAtInputArea } from '../delivery/evidence.js';
import { classify, regexOf } from '../detect/classify.js';
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
 * The reply as the screen shows it: the lines after the prompt's echo (found by its nonce), up to the
 * input area at the bottom (the lines the idle rule looks at) and without the screen furniture just
 * above it (the profile's `chrome`: hints, rules, a turn summary). The CLI's reply marker (`✦`, `●`,
 * `•`) is taken off the start of each reply block, and the blocks' indentation with it.
 */
export function replyFromScreen(screen: string, nonce: string, profile: Profile): string {
  const { above } = splitAtInputArea(screen, inputAreaLines(profile));
  const start = above.findLastIndex((l) => l.includes(`[jg:${nonce}]`)) + 1;
  let body = above.slice(start);
  const chrome = profile.detect.chrome ? new RegExp(profile.detect.chrome, 'u') : null;
  while (body.length && (body.at(-1)!.trim() === '' || chrome?.test(body.at(-1)!))) body = body.slice(0, -1);
  if (profile.detect.replyMarker) body = unmark(body, new RegExp(profile.detect.replyMarker, 'u'));
  return body.join('\n').trim();
}

/** From the first line the marker starts on: the marker off each block's first line, the blocks' indent off the rest. */
function unmark(lines: string[], marker: RegExp): string[] {
  const first = lines.findIndex((l) => marker.test(l));
  if (first < 0) return lines;
  const width = marker.exec(lines[first]!)![0].length;
  const indent = ' '.repeat(width);
  return lines.slice(first).map((l) => {
    const m = marker.exec(l);
    if (m && m.index === 0 && m[0].length === width) return l.slice(width);
    return l.startsWith(indent) ? l.slice(width) : l.trimStart();
  });
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
 * (screen only) `screenShowsTurnEnd`. A `done` seen before that is a previous turn's summary still on
 * screen (after a resume, say) while the prompt has only just gone in.
 */
export async function turnConfirmed(src: ReplySource): Promise<boolean> {
  const kind = src.profile.session.transcript;
  if (kind && src.sessionId) return (await replyFromTranscript(kind, src.home, src.cwd, src.sessionId, src.nonce)) !== null;
  return screenShowsTurnEnd(await capturePane(src.client, src.paneId, { history: 3000 }), src.nonce, src.profile);
}

/**
 * The prompt's echo is above the input area, nothing after it is busy or asking, and where the CLI
 * marks a finished turn (a `done` rule, e.g. `Worked for 3s`) that mark comes after the echo.
 */
export function screenShowsTurnEnd(screen: string, nonce: string, profile: Profile): boolean {
  const { above, input } = splitAtInputArea(screen, inputAreaLines(profile));
  const echo = above.findLastIndex((l) => l.includes(`[jg:${nonce}]`));
  if (echo < 0) return false;
  const after = [...above.slice(echo + 1), ...input];
  const rules = profile.detect.rules.filter((r) => r.region !== 'raw');
  const status = classify({ screen: after.join('\n'), raw: '', rules }).status;
  if (status === 'busy' || status === 'waiting_input') return false;
  const doneRules = rules.filter((r) => r.status === 'done');
  return doneRules.length === 0 || doneRules.some((r) => after.some((l) => regexOf(r.pattern).test(l)));
}
