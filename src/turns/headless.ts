// A turn run headless in the agent's pinned conversation (`claude --resume <id> -p ...`): the same
// handover file and pointer prompt as a pane turn, the CLI's printed answer as the reply artifact.
// The conversation's first turn uses the profile's first-turn arguments (the TUI writes no conversation
// before its first turn); a CLI that cannot take a session id (codex) tells the one it made. When the
// agent has a live pane, its TUI is stopped first and resumed after, so it sees the headless turn and
// never writes beside it (seen with all six real CLIs; see docs/handoffs-and-jobs.md). This file holds
// what a run is made of (its argv, what its output says); src/work/run-headless.ts runs it by phases.
import { JaggersError } from '../errors.js';
import { HEADLESS_IDS, HEADLESS_REPLIES } from '../clis/kinds.js';
import type { Profile } from '../profiles/schema.js';
import { fillTemplate } from '../agents/plan.js';

/** How the agent's CLI runs outside its pane: its environment, extra arguments and folder. */
export interface AgentLaunch {
  env: Record<string, string>;
  args: string[];
  cwd: string;
  /** What runs the CLI (`nice -n 5`, the agent's CPU priority); none: the CLI itself. */
  before?: string[];
  /** Told the run's process (its session's leader) once it started: its session group gets the agent's nice. */
  started?(pid: number): void;
}

/** The agent's live pane, when it has one: stopped before the headless turn, started again after. */
export interface HeadlessPane {
  stop(): Promise<void>;
  /** The pane already holds the placeholder (a run followed again after a restart): only tell the watcher. */
  hold(): void;
  /** Start the TUI again: resuming `sessionId` when the conversation exists, else starting it under that id. */
  resume(sessionId: string | null, conversation: boolean): Promise<void>;
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
  const text = (o.usesFile ? o.fileText : null) ?? HEADLESS_REPLIES[s.headlessReply](o.stdout);
  const made = s.headlessIdFrom ? HEADLESS_IDS[s.headlessIdFrom](o.stdout) : null;
  return { text: text.trim(), sessionId: o.sessionId ?? made };
}
