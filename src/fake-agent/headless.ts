// `-p PROMPT`: one turn without the TUI, like `claude --resume <id> -p ...`: the same reply rules and
// the same session record as an interactive turn, printed to stdout.
import fs from 'node:fs';
import { digest, findNonces, promptPreview, ruleReply, type Rule } from './rules.js';
import { writeSession, type SessionRecord } from './session-store.js';

export function headlessTurn(session: SessionRecord, prompt: string, rules: readonly Rule[], home: string): string {
  const readFile = (p: string) => {
    try {
      return fs.readFileSync(p);
    } catch {
      return undefined;
    }
  };
  const d = digest(prompt);
  const lines = [
    `turn ${session.turns.length + 1} of session ${session.id.slice(0, 8)}`,
    ...ruleReply(prompt, rules, readFile),
    `received ${d.bytes} bytes sha256:${d.sha256}`,
    ...findNonces(prompt).map((n) => `nonce ${n}`),
  ];
  const turns = [...session.turns, { prompt: promptPreview(prompt), ...d, reply: lines.join('\n') }];
  writeSession(home, { ...session, turns, updated: new Date().toISOString(), title: session.turns.length ? session.title : promptPreview(prompt).slice(0, 40) });
  return lines.join('\n');
}
