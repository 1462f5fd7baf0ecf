// `--claude-transcript`: the fake agent also keeps its session as Claude Code keeps a transcript
// (`~/.claude/projects/<cwd as dashes>/<session>.jsonl`), each turn a prompt and an answer with token
// usage, so that the usage path (the `claude` usage reader, the registry's sums) can be tested without a
// model. An answer is written as claude writes one with a text and a tool call: two entries with the
// same message id and request id (read once). Turn k (from 1) spends: input 100k + its prompt's bytes,
// output the reply's characters, cache read 1000(k-1), cache write 50. The whole file is written again
// through a rename at each save, its earlier lines unchanged.
import path from 'node:path';
import type { SessionRecord } from './session-store.js';
import { writeUnderHome } from './session-store.js';

export const FAKE_MODEL = 'claude-sonnet-4-5';

/** The tokens the fake agent's turn `k` (from 1) reports. */
export function fakeTurnUsage(k: number, promptBytes: number, reply: string) {
  return { input_tokens: 100 * k + promptBytes, output_tokens: reply.length, cache_read_input_tokens: 1000 * (k - 1), cache_creation_input_tokens: 50 };
}

export function claudeTranscriptText(s: SessionRecord): string {
  const lines: unknown[] = [];
  let parent: string | null = null;
  const base = { sessionId: s.id, cwd: s.cwd, version: '2.1.330', isSidechain: false, userType: 'external' };
  s.turns.forEach((t, i) => {
    const k = i + 1;
    const at = new Date(Date.parse(s.created) + k * 1000).toISOString();
    const user = `fake-u-${k}`;
    lines.push({ ...base, type: 'user', uuid: user, parentUuid: parent, timestamp: at, message: { role: 'user', content: t.prompt } });
    const usage = fakeTurnUsage(k, t.bytes, t.reply);
    const message = { id: `msg_fake_${s.id.slice(0, 8)}_${k}`, model: FAKE_MODEL, role: 'assistant', stop_reason: 'end_turn', usage };
    const requestId = `req_fake_${s.id.slice(0, 8)}_${k}`;
    lines.push({
      ...base,
      type: 'assistant',
      uuid: `fake-a-${k}`,
      parentUuid: user,
      timestamp: at,
      requestId,
      message: { ...message, content: [{ type: 'text', text: t.reply }] },
    });
    lines.push({
      ...base,
      type: 'assistant',
      uuid: `fake-b-${k}`,
      parentUuid: `fake-a-${k}`,
      timestamp: at,
      requestId,
      message: { ...message, content: [{ type: 'tool_use', id: `toolu_fake_${k}`, name: 'Noop', input: {} }] },
    });
    parent = `fake-b-${k}`;
  });
  return lines.map((l) => `${JSON.stringify(l)}\n`).join('');
}

export function writeClaudeTranscript(home: string, s: SessionRecord): void {
  writeUnderHome(home, path.join(home, '.claude', 'projects', s.cwd.replace(/[^A-Za-z0-9]/g, '-'), `${s.id}.jsonl`), claudeTranscriptText(s));
}
