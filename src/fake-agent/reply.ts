// What a turn answers, in the chosen reply mode (`--replies`), for the TUI and `-p` alike:
// - `receipt` (the default, which many tests parse): `turn <k> of session <id8>`, the rule-chosen body
//   (`read <file> ...` / `answer: ...` / `You said: ...`), `received <n> bytes sha256:<hex>`, the nonces;
// - `work` (the demo): only the work the handover asks for, a plan, a diff or a review (work-reply.ts).
import type { Digest, ReadFile, Rule } from './rules.js';
import { findNonces, namedFile, ruleReply, userRuleReply } from './rules.js';
import { workReply } from './work-reply.js';

export const REPLY_MODES = ['receipt', 'work'] as const;
export type ReplyMode = (typeof REPLY_MODES)[number];

export interface ReplyConfig {
  replies: ReplyMode;
  rules: readonly Rule[];
  /** `JAGGERS_AGENT`: the work replies' hint at the agent's role. */
  agentName: string | undefined;
}

/** The reply's body: user rules first in both modes, then the mode's own answer. */
export function replyBody(prompt: string, config: ReplyConfig, readFile: ReadFile): string[] {
  switch (config.replies) {
    case 'receipt':
      return ruleReply(prompt, config.rules, readFile);
    case 'work': {
      const ruled = userRuleReply(prompt, config.rules);
      if (ruled) return ruled;
      const file = namedFile(prompt, readFile);
      return workReply(file ? file.content.toString('utf8') : prompt, { agentName: config.agentName });
    }
  }
}

export interface TurnFacts {
  /** 1-based number of the turn in its session. */
  k: number;
  sessionId: string;
  prompt: string;
  digest: Digest;
}

/** The whole reply as recorded and drawn: the body framed by the receipt lines, or (work) the body alone. */
export function frameReply(mode: ReplyMode, turn: TurnFacts, body: readonly string[]): string[] {
  if (mode === 'work') return [...body];
  return [
    `turn ${turn.k} of session ${turn.sessionId.slice(0, 8)}`,
    ...body,
    `received ${turn.digest.bytes} bytes sha256:${turn.digest.sha256}`,
    ...findNonces(turn.prompt).map((n) => `nonce ${n}`),
  ];
}
