// A turn run headless in the agent's pinned conversation (`claude --resume <id> -p ...`): the same
// handover file and pointer prompt as a pane turn, the CLI's printed answer as the reply artifact.
// The conversation's first turn uses the profile's first-turn arguments (the TUI writes no conversation
// before its first turn); a CLI that cannot take a session id (codex) tells the one it made. When the
// agent has a live pane, its TUI is stopped first and resumed after, so it sees the headless turn and
// never writes beside it (seen with all six real CLIs; see docs/handoffs-and-jobs.md). This file holds
// what a run is made of (its argv, what its output says); src/work/run-headless.ts runs it by phases.
import { JaggersError } from '../errors.js';
import { jsonObjects } from '../handover/jsonl.js';
import type { Profile } from '../profiles/schema.js';
import { fillTemplate } from '../terminals/plan.js';

/** How the agent's CLI runs outside its pane: its environment, extra arguments and folder. */
export interface AgentLaunch {
  env: Record<string, string>;
  args: string[];
  cwd: string;
}

/** The agent's live pane, when it has one: stopped before the headless turn, started again after. */
export interface HeadlessPane {
  stop(): Promise<void>;
  /** The pane already holds the placeholder (a run followed again after a restart): only tell the watcher. */
  hold(): void;
  /** Start the TUI again: resuming `sessionId` when the conversation exists, else starting it under that id. */
  resume(sessionId: string | null, conversation: boolean): Promise<void>;
}

/** The session a first `codex exec --json` made: its `thread.started` event. */
export function threadIdFromJson(stdout: string): string | null {
  // Lines that are not JSON (warnings) are skipped.
  const e = jsonObjects(stdout).find((x) => x.type === 'thread.started' && typeof x.thread_id === 'string' && x.thread_id);
  return e ? (e.thread_id as string) : null;
}

/** One event a line of `opencode run --format json` (1.18.33): `{type, sessionID, part: {messageID, type, text}}`. */
interface OpencodeEvent {
  type?: unknown;
  sessionID?: unknown;
  part?: { messageID?: unknown; text?: unknown };
}

/**
 * What `opencode run --format json` printed: the session it ran in, and the reply, the text parts of its
 * last message that has text (a turn with a tool call has a message before the call and one after).
 */
export function opencodeRunJson(stdout: string): { sessionId: string | null; text: string } {
  let sessionId: string | null = null;
  const texts = new Map<string, string[]>();
  // Lines that are not JSON (warnings) are skipped.
  for (const e of jsonObjects(stdout) as OpencodeEvent[]) {
    if (sessionId === null && typeof e.sessionID === 'string' && e.sessionID) sessionId = e.sessionID;
    if (e.type === 'text' && typeof e.part?.text === 'string') {
      const id = typeof e.part.messageID === 'string' ? e.part.messageID : '';
      texts.set(id, [...(texts.get(id) ?? []), e.part.text]);
    }
  }
  return { sessionId, text: [...texts.values()].at(-1)?.join('') ?? '' };
}

/** A first turn refused because its session id is taken (someone talked in the pane first): run it as a later turn. */
export const IN_USE = /already (?:in use|exists)/i;

/** One headless run of a CLI: what to execute, and whether the reply comes in `replyFile`. */
export interface HeadlessArgv {
  command: string;
  args: string[];
  usesFile: boolean;
  first: boolean;
}

/**
 * The argv of a headless run: the profile's first-turn arguments for a conversation's first turn (where
 * it has them), else its later-turn ones with the pinned session.
 */
export function headlessArgv(
  profile: Profile,
  launch: AgentLaunch,
  o: { sessionId: string | null; first: boolean; prompt: string; replyFile: string; label: string },
): HeadlessArgv {
  const s = profile.session;
  if (!s.headlessArgs) throw new JaggersError('E_USAGE', `${o.label}: profile ${profile.name} has no session.headlessArgs`);
  const useFirst = o.first && s.headlessFirstArgs !== undefined;
  if (!useFirst && !o.sessionId)
    throw new JaggersError('E_NOT_PINNED', `${o.label}: no session is pinned yet and profile ${profile.name} has no session.headlessFirstArgs to start one`);
  const template = useFirst ? s.headlessFirstArgs! : s.headlessArgs;
  // `{promptWords}`, a whole argument: the prompt as one argument a word (opencode run quotes an
  // argument with a space in it before the model sees it, `"Read ..."`; words are joined as they are).
  const words = template.flatMap((a) => (a === '{promptWords}' ? o.prompt.split(/\s+/u).filter((w) => w !== '') : [a]));
  const args = fillTemplate(words, { sessionId: o.sessionId ?? '', prompt: o.prompt, replyFile: o.replyFile });
  return {
    command: profile.command,
    args: [...profile.args, ...launch.args, ...args],
    usesFile: template.some((a) => a.includes('{replyFile}')),
    first: useFirst,
  };
}

/** What a finished run says: the reply's text, and the session it ran in (the pinned one, or the one it made). */
export function headlessResult(
  profile: Profile,
  o: { stdout: string; fileText: string | null; usesFile: boolean; sessionId: string | null },
): { text: string; sessionId: string | null } {
  const s = profile.session;
  const json = s.headlessReply === 'opencode-json' || s.headlessIdFrom === 'opencode-json' ? opencodeRunJson(o.stdout) : null;
  const text = (o.usesFile ? o.fileText : null) ?? (s.headlessReply === 'opencode-json' ? json!.text : o.stdout);
  const made = s.headlessIdFrom === 'codex-json' ? threadIdFromJson(o.stdout) : s.headlessIdFrom === 'opencode-json' ? json!.sessionId : null;
  return { text: text.trim(), sessionId: o.sessionId ?? made };
}
