import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { inputAreaLines, splitAtInputArea } from '../delivery/evidence.js';
import { classify, regexOf } from '../detect/classify.js';
import type { Profile } from '../profiles/schema.js';
import { capturePane } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import { claudeReply, claudeTranscriptFile } from './claude-transcript.js';

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

export interface TranscriptReply {
  text: string;
  /** The turn has ended (claude: see claude-transcript.ts for the evidence); the text is then all of it. */
  finished: boolean;
}

/**
 * The reply to the prompt that carried `nonce`, from the CLI's own transcript of the pinned session:
 * null when there is no transcript (yet) or no prompt with the nonce in it; while the turn runs, the
 * text so far with `finished: false`.
 */
export async function readTranscriptReply(
  kind: Profile['session']['transcript'],
  home: string,
  cwd: string,
  sessionId: string,
  nonce: string,
): Promise<TranscriptReply | null> {
  const tag = `[jg:${nonce}]`;
  if (kind === 'fake-agent') {
    const text = await readText(path.join(home, '.fake-agent', 'sessions', `${sessionId}.json`));
    if (text === null) return null;
    try {
      const s = JSON.parse(text) as { turns?: { prompt?: string; reply?: string }[] };
      // The turn whose prompt carried our nonce, not merely the last one.
      const turn = s.turns?.findLast((t) => t.prompt?.includes(tag));
      if (turn === undefined) return null;
      return typeof turn.reply === 'string' ? { text: turn.reply, finished: true } : { text: '', finished: false };
    } catch {
      return null;
    }
  }
  if (kind === 'claude') {
    const text = await readText(claudeTranscriptFile(home, cwd, sessionId));
    const reply = text === null ? null : claudeReply(text, tag);
    return reply && { text: reply.text, finished: reply.finished };
  }
  return null;
}

/** The reply in the CLI's own transcript, once its turn has finished; null before that. */
export async function replyFromTranscript(
  kind: Profile['session']['transcript'],
  home: string,
  cwd: string,
  sessionId: string,
  nonce: string,
): Promise<string | null> {
  const r = await readTranscriptReply(kind, home, cwd, sessionId, nonce);
  return r?.finished ? r.text : null;
}

/** A file's text; null when it cannot be read (not written yet, say). */
async function readText(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return null;
  }
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
