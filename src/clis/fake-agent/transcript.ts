// The fake agent's session file (`~/.fake-agent/sessions/<id>.json`, src/fake-agent/session-store.ts):
// `{turns: [{prompt, reply}]}`, a turn's reply written once it is finished.
import path from 'node:path';
import { readText } from '../shared/read-text.js';
import type { TranscriptReader } from '../types.js';

type Session = { turns?: { prompt?: string; reply?: string }[] };

/** The last text parsed per session file: an unchanged file (the same string) is not parsed again. */
const parsed = new Map<string, { text: string; session: Session | null }>();

function parse(file: string, text: string): Session | null {
  const known = parsed.get(file);
  if (known?.text === text) return known.session;
  let session: Session | null;
  try {
    session = JSON.parse(text) as Session;
  } catch {
    session = null;
  }
  if (parsed.size >= 64) parsed.delete(parsed.keys().next().value!);
  parsed.set(file, { text, session });
  return session;
}

export const fakeAgentReply: TranscriptReader = async (home, _cwd, sessionId, tag) => {
  const file = path.join(home, '.fake-agent', 'sessions', `${sessionId}.json`);
  const text = await readText(file);
  if (text === null) return null;
  const s = parse(file, text);
  // The turn whose prompt carried our nonce, not merely the last one.
  const turn = Array.isArray(s?.turns) ? s.turns.findLast((t) => typeof t?.prompt === 'string' && t.prompt.includes(tag)) : undefined;
  if (turn === undefined) return null;
  return typeof turn.reply === 'string' ? { text: turn.reply, finished: true } : { text: '', finished: false };
};
