// The fake agent's session file (`~/.fake-agent/sessions/<id>.json`, src/fake-agent/session-store.ts):
// `{turns: [{prompt, reply}]}`, a turn's reply written once it is finished.
import path from 'node:path';
import { readText } from '../shared/read-text.js';
import type { TranscriptReader } from '../types.js';

export const fakeAgentReply: TranscriptReader = async (home, _cwd, sessionId, tag) => {
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
};
