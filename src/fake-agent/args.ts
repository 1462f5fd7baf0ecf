// Command-line parsing for the fake agent: argv in, a tagged result out (no I/O).
import type { ReplyMode } from './reply.js';
import { REPLY_MODES } from './reply.js';

export const VERSION = '1.0.0';

export interface FakeAgentOptions {
  /** Milliseconds the `Starting fake agent...` screen shows before the first idle screen. */
  bootMs: number;
  /** Milliseconds each turn stays busy. */
  thinkMs: number;
  /** An Enter this soon after the end of a paste becomes a newline; 0 turns that off. */
  pasteBurstMs: number;
  /** Show a completion picker for `/` and `@` that eats the first Enter. */
  picker: boolean;
  rulesFile: string | undefined;
  sessionId: string | undefined;
  resume: string | undefined;
  /** `-p PROMPT`: answer one prompt without the TUI (headless), in the chosen session, and exit. */
  print: string | undefined;
  /** What replies say: `receipt` (hash and nonce, for tests) or `work` (a plan, diff or review, for the demo). */
  replies: ReplyMode;
  /** `--mcp-config FILE` (claude's flag): MCP servers a `mcp: <tool> {json}` line in a prompt calls. */
  mcpConfig: string | undefined;
  /** `--hooks FILE`: `{"hooks": {"<event>": "<command line>"}}`, run at session start, prompt submit, stop, permission request. */
  hooksFile: string | undefined;
  /** `--no-hooks`: ignore `--hooks` (a release whose hooks never fire). */
  noHooks: boolean;
  /** `--claude-transcript`: also keep the session as claude does, with token usage (src/fake-agent/claude-transcript.ts). */
  claudeTranscript: boolean;
}

export type ParsedArgs =
  { kind: 'run'; options: FakeAgentOptions } | { kind: 'version' } | { kind: 'help' } | { kind: 'list-sessions' } | { kind: 'error'; message: string };

export const USAGE = `usage: jaggers-fake-agent [options]

A scriptable stand-in for an agent CLI (jaggers demo agent).

  --boot-ms N          show "Starting fake agent..." for N ms first (default 0)
  --think-ms N         stay busy N ms per turn (default 1500)
  --paste-burst-ms N   an Enter within N ms after a paste becomes a newline (default 0: off)
  --picker             "/" and "@" open a completion picker that eats the first Enter
  --rules FILE         JSON array of {"match": "<regex>", "reply": "<text with $1..>"}
  --replies MODE       receipt (default): turn, answer, hash and nonce lines; work: a plan,
                       a diff or a review, made from the handover (the demo's agents)
  --session-id UUID    start a new session with this id (fails if it is in use)
  -r, --resume ID      resume a session by uuid, or "latest" (the newest of any session)
  --mcp-config FILE    {"mcpServers": {...}} as claude takes it: a line "mcp: <tool> {json}" in a
                       prompt (or in the file it names) calls that tool and replies with its result
  --hooks FILE         {"hooks": {"SessionStart"|"UserPromptSubmit"|"Stop"|"PermissionRequest": "<sh
                       command>"}}: each run as claude runs its hooks, the payload JSON on stdin, waited for
  --no-hooks           ignore --hooks (a release whose hooks never fire)
  --claude-transcript  also write the session as claude's transcript, with token usage
                       (~/.claude/projects/<cwd as dashes>/<session>.jsonl)
  -p, --print PROMPT   answer one prompt headless in the session and exit
  --list-sessions      print the stored sessions, oldest first, and exit
  --version            print the version and exit
  -h, --help           print this help and exit
`;

const NUMBER_FLAGS = { '--boot-ms': 'bootMs', '--think-ms': 'thinkMs', '--paste-burst-ms': 'pasteBurstMs' } as const;
const STRING_FLAGS = {
  '--rules': 'rulesFile',
  '--session-id': 'sessionId',
  '--resume': 'resume',
  '-r': 'resume',
  '-p': 'print',
  '--print': 'print',
  '--mcp-config': 'mcpConfig',
  '--hooks': 'hooksFile',
} as const;

export function defaultOptions(): FakeAgentOptions {
  return {
    bootMs: 0,
    thinkMs: 1500,
    pasteBurstMs: 0,
    picker: false,
    rulesFile: undefined,
    sessionId: undefined,
    resume: undefined,
    print: undefined,
    replies: 'receipt',
    mcpConfig: undefined,
    hooksFile: undefined,
    noHooks: false,
    claudeTranscript: false,
  };
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const options = defaultOptions();
  let listSessions = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const takeValue = (): string | { error: string } => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined) return { error: `option '${flag}' needs a value` };
      i++;
      return next;
    };

    if (flag === '--version' || flag === '-v') return { kind: 'version' };
    if (flag === '--help' || flag === '-h') return { kind: 'help' };
    if (flag === '--list-sessions') {
      listSessions = true;
    } else if (flag === '--picker') {
      options.picker = true;
    } else if (flag === '--no-hooks') {
      options.noHooks = true;
    } else if (flag === '--claude-transcript') {
      options.claudeTranscript = true;
    } else if (flag === '--replies') {
      const value = takeValue();
      if (typeof value !== 'string') return { kind: 'error', message: value.error };
      const mode = REPLY_MODES.find((m) => m === value);
      if (mode === undefined) return { kind: 'error', message: `option '--replies' must be ${REPLY_MODES.join(' or ')}, got '${value}'` };
      options.replies = mode;
    } else if (flag in NUMBER_FLAGS) {
      const value = takeValue();
      if (typeof value !== 'string') return { kind: 'error', message: value.error };
      const n = parseMs(value);
      if (n === undefined) {
        return { kind: 'error', message: `option '${flag}' needs a whole number of milliseconds, got '${value}'` };
      }
      options[NUMBER_FLAGS[flag as keyof typeof NUMBER_FLAGS]] = n;
    } else if (flag in STRING_FLAGS) {
      const value = takeValue();
      if (typeof value !== 'string') return { kind: 'error', message: value.error };
      if (value === '') return { kind: 'error', message: `option '${flag}' needs a non-empty value` };
      options[STRING_FLAGS[flag as keyof typeof STRING_FLAGS]] = value;
    } else if (flag.startsWith('-')) {
      return { kind: 'error', message: `unknown option '${flag}' (see --help)` };
    } else {
      return { kind: 'error', message: `unexpected argument '${arg}' (see --help)` };
    }
  }
  if (listSessions) return { kind: 'list-sessions' };
  if (options.sessionId !== undefined && options.resume !== undefined) {
    return { kind: 'error', message: `options '--session-id' and '--resume' cannot be used together` };
  }
  return { kind: 'run', options };
}

function parseMs(value: string): number | undefined {
  if (!/^\d{1,9}$/.test(value)) return undefined;
  return Number(value);
}
