// `-p PROMPT`: one turn without the TUI, like `claude --resume <id> -p ...`: the same reply mode, rules
// and session record as an interactive turn, printed to stdout.
import fs from 'node:fs';
import type { ReplyConfig } from './reply.js';
import { frameReply, replyBody } from './reply.js';
import { digest, namedFile, promptPreview } from './rules.js';
import { applyWrites, writesIn, writeWorkFile } from './writes.js';
import { writeSession, type SessionRecord } from './session-store.js';

export function headlessTurn(session: SessionRecord, prompt: string, config: ReplyConfig, home: string): string {
  const readFile = (p: string) => {
    try {
      return fs.readFileSync(p);
    } catch {
      return undefined;
    }
  };
  const d = digest(prompt);
  const turn = { k: session.turns.length + 1, sessionId: session.id, prompt, digest: d };
  const file = namedFile(prompt, readFile);
  const asked = writesIn(prompt).length ? writesIn(prompt) : file ? writesIn(file.content.toString('utf8')) : [];
  const body = [...applyWrites(asked, process.cwd(), writeWorkFile), ...replyBody(prompt, config, readFile)];
  const lines = frameReply(config.replies, turn, body);
  const turns = [...session.turns, { prompt: promptPreview(prompt), ...d, reply: lines.join('\n') }];
  writeSession(home, {
    ...session,
    turns,
    updated: new Date().toISOString(),
    title: session.turns.length ? session.title : promptPreview(prompt).slice(0, 40),
  });
  return lines.join('\n');
}
