// What a CLI folder offers, by the kind names profiles use: each map's keys are values a profile field
// accepts (the kinds module of this folder gathers them from every folder; the profile schema checks them).
import type { Classification } from '../detect/reading.js';
import type { ByModel, Tokens } from '../usage/tokens.js';
import type { DiscoveryResult } from './shared/pick-session.js';

export interface CliFolder {
  /** `session.transcript`: the reply to a prompt, from the CLI's own record of the session. */
  transcripts?: Readonly<Record<string, TranscriptReader>>;
  /** `detect.stateFile`: where the CLI writes its own status and what the file says. */
  stateFiles?: Readonly<Record<string, StateFileFormat>>;
  /** `session.discover`: the session a CLI made that could not be given an id; null: named, not read yet (pins nothing). */
  discoverers?: Readonly<Record<string, SessionDiscoverer | null>>;
  /** `session.headlessIdFrom`: the session a first headless run made, from what it printed. */
  headlessIds?: Readonly<Record<string, (stdout: string) => string | null>>;
  /** `session.headlessReply`: the reply, from what a headless run printed. */
  headlessReplies?: Readonly<Record<string, (stdout: string) => string>>;
  /** `mcp.via`: how the CLI is told of jaggers' MCP server. */
  mcpFormats?: Readonly<Record<string, McpFormat>>;
  /** `jaggers exec <command> ...`, by the command's file name: "resume the latest" made "resume the pinned one". */
  execCommands?: Readonly<Record<string, ResumeRewriter>>;
  /** `detect.hooks`: how the CLI is made to call jaggers' hook bridge, and what its calls say. */
  hooks?: Readonly<Record<string, HookKit>>;
  /** `sharedFolders.via`: how the CLI is let read folders outside its own (jaggers' shared folders), its own way. */
  folderAccess?: Readonly<Record<string, FolderAccess>>;
  /** `session.usage`: the tokens a session has spent so far, per model, from the CLI's own records (docs/usage.md). */
  usage?: Readonly<Record<string, UsageReader>>;
}

/** Where a session's records are: the agent's HOME and environment (CODEX_HOME...), its folder, the session. */
export interface UsageQuery {
  home: string;
  cwd: string;
  sessionId: string;
  env: Readonly<Record<string, string | undefined>>;
}

export interface SessionUsage {
  /** Every token the session's records show so far, per model. */
  byModel: ByModel;
  /** Usage records counted (API answers, after dedupe). */
  records: number;
  /** Lines of its files that could not be read (torn, not JSON): skipped. */
  skipped: number;
  /** The files read. */
  files: string[];
  /** The last API answer of the session's main file (not its subagents'): model, tokens, and when its record says it was written (ms). */
  last?: { model: string; tokens: Tokens; at?: number };
}

/**
 * The session's usage so far; null when the CLI has no record of it (yet). Reads only the bytes added
 * since its last call for the same file (src/clis/shared/jsonl-follow.ts); never throws on a file's content.
 */
export type UsageReader = (q: UsageQuery) => Promise<SessionUsage | null>;

/**
 * The arguments and environment that let the CLI's file tools read `folders` (absolute paths outside its
 * working folder) without asking; `env` is the environment it starts with otherwise (a value of the
 * person's own is joined, not replaced). Pure.
 */
export type FolderAccess = (folders: readonly string[], env: Readonly<Record<string, string | undefined>>) => { args: string[]; env: Record<string, string> };

/**
 * What one of a CLI's native hook calls says, in jaggers' terms (issue 27). Several may come of one
 * call, or none (an event jaggers has no use for, a payload it cannot read).
 */
export type HookSignal =
  /** The CLI took a prompt: its turn runs (claude UserPromptSubmit, gemini BeforeAgent...). */
  | { kind: 'turn-start'; sessionId?: string }
  /**
   * The turn ended (claude/codex/qwen Stop with `last_assistant_message`, gemini AfterAgent, opencode
   * `session.idle`, copilot agentStop); `reply` when the payload holds the reply itself, exactly.
   */
  | { kind: 'turn-end'; sessionId?: string; reply?: string; transcriptPath?: string }
  /** The CLI waits for a person (a permission request); `question` when the payload names it. */
  | { kind: 'waiting'; sessionId?: string; question?: string }
  /** The CLI is in this conversation now (SessionStart; a new id after `/clear` is a fork to follow). */
  | { kind: 'session'; sessionId: string; transcriptPath?: string }
  /** The CLI is about to call a tool (claude PreToolUse): for the watchdog's loop check only, never a state. */
  | { kind: 'tool'; sessionId?: string; tool: string; input: string };

/** Where and how one pane's hooks are installed. */
export interface HookInstallContext {
  /**
   * The bridge's command line, to which the CLI's own event name is appended as one more argument
   * (`sh /abs/bin/jaggers-hook <spool folder> <terminalId>`): the CLI runs `<bridge...> <event>` with the
   * payload on stdin, or `<bridge...> <event> <payload>` when it passes the payload as an argument
   * (codex `notify`). A POSIX sh script that drops the payload into a folder the supervisor watches
   * (inotify) and exits 0 at once, printing nothing. Already shell-quoted in `bridgeShell` for CLIs that
   * take a command string.
   */
  bridge: readonly string[];
  bridgeShell: string;
  /** A folder jaggers owns for this pane (under `.jaggers/hooks/<terminalId>/`), emptied on `down`. */
  dir: string;
  /** The pane's working folder. */
  cwd: string;
  /** The CLI's version, when known (`null`: unknown): a kit may install differently per release. */
  version: string | null;
  /**
   * The environment the CLI starts with, before the kit's own additions: the supervisor's (which tmux
   * gives every pane), then the profile's and the agent's. A kit that must find the person's own files
   * reads HOME (and its CLI's own variables) here. Absent: the supervisor's own.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** What the launcher adds to a pane's start so that the CLI calls the bridge. */
export interface HookInstall {
  args: string[];
  env: Record<string, string>;
  /** Files to write before the start, each under `dir` (the launcher refuses any other path). */
  files: { path: string; text: string }[];
  /** Symbolic links to make before the start, each `path` under `dir` (what is there is replaced); `target` may be anywhere and need not exist. */
  links?: { path: string; target: string }[];
  /** Folders under `dir` removed before the files and links are written: what the CLI left in them on an earlier start goes. */
  fresh?: string[];
  /**
   * Folders outside `dir` made (when missing) before the start: only folders the CLI itself makes at
   * every start, made a moment earlier so that links to them resolve (gemini's `~/.gemini/tmp`).
   */
  folders?: string[];
  /**
   * Set when this CLI cannot be hooked here (gemini with a settings file it cannot join its hooks to):
   * why, for `doctor`/`profile check`. args, env and files are then empty and the screen decides.
   */
  unavailable?: string;
}

export interface HookKit {
  /** The flags, environment and files that make this CLI call the bridge (never the user's own settings). */
  install(ctx: HookInstallContext): HookInstall;
  /**
   * One call of the bridge: the CLI's event name and its payload (parsed JSON, or the raw text when it
   * was not JSON). Pure and defensive: a payload of another shape gives [] and never throws.
   */
  read(event: string, payload: unknown): HookSignal[];
  /**
   * What a person should know before this kit's hooks run on this machine (`doctor`, `profile check`),
   * read from the CLI's own folders under the person's `env` (HOME, XDG_CONFIG_HOME); null: nothing.
   */
  caveat?(env: NodeJS.ProcessEnv): string | null;
}

export interface TranscriptReply {
  text: string;
  /** The turn has ended (claude: see claude/transcript.ts for the evidence); the text is then all of it. */
  finished: boolean;
}

/** The reply to the prompt that carried `tag` (`[jg:<nonce>]`); null when there is no transcript (yet) or no such prompt. */
export type TranscriptReader = (home: string, cwd: string, sessionId: string, tag: string) => Promise<TranscriptReply | null>;

export interface StateFileReading {
  classification: Classification | null;
  /** The conversation the CLI is in now: it changes under us when the CLI forks (claude's /clear). */
  sessionId: string | null;
}

export interface StateFileFormat {
  /** Where the CLI writes its own status, by the pid of its process and its HOME. */
  path(home: string, pid: number): string;
  /** What the file's parsed JSON says; nulls for anything missing or unknown. */
  parse(data: unknown, file: string): StateFileReading;
}

export interface DiscoverQuery {
  /** The environment the agent's CLI runs with (HOME, CODEX_HOME, XDG folders...). */
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  /** The folder the CLI was started in; only sessions recorded there count. */
  cwd: string;
  /** When jaggers made the terminal: earlier sessions are not ours. */
  since: Date;
  /** Session ids pinned to other terminals. */
  exclude: ReadonlySet<string>;
  /** The tag (`[jg:<nonce>]`) of the prompt that made the session, when known. */
  tag?: string;
  /** The profile's `session.listArgs`. */
  listArgs?: readonly string[];
  /** Runs the agent's CLI with these arguments, in its folder and with its environment: its stdout. */
  run(args: readonly string[]): Promise<string>;
}

export type SessionDiscoverer = (q: DiscoverQuery) => Promise<DiscoveryResult>;

/** jaggers' MCP server entry as the CLI should run it (`command`, `args`, `env`, and the profile's `mcp.server` fields). */
export interface McpEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
  [field: string]: unknown;
}

export type McpFormat =
  /** On the command line, nothing written to disk; `how` says so in `jaggers mcp --print-config`. */
  | { args(entry: McpEntry): string[]; how: string }
  /** A config file under .jaggers/mcp/: its JSON. */
  | { config(entry: McpEntry, server: Readonly<Record<string, unknown>>): unknown };

export interface ExecRewrite {
  args: string[];
  rewritten: boolean;
}

/** Who the pinned session belongs to, for the error message. */
export interface RewriteContext {
  agent?: string;
  task?: string | null;
}

/** `jaggers exec`'s arguments with any "resume the latest" form resuming `pinned`; throws E_NOT_PINNED when one needs it and nothing is pinned. */
export type ResumeRewriter = (args: readonly string[], pinned: string | null, context: RewriteContext) => ExecRewrite;
