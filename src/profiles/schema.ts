import { z } from 'zod';
import { isName, NAME_RULE } from '../ids.js';
import { AGENT_STATES } from '../states.js';
import {
  DISCOVER_KINDS,
  FOLDER_ACCESS_KINDS,
  HEADLESS_ID_KINDS,
  HEADLESS_REPLY_KINDS,
  HOOK_KINDS,
  MCP_VIA_KINDS,
  STATE_FILE_KINDS,
  TRANSCRIPT_KINDS,
  USAGE_KINDS,
} from '../clis/kinds.js';

export const AGENT_STATUSES = AGENT_STATES;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

const regex = z.string().refine(
  (s) => {
    try {
      new RegExp(s, 'u');
      return true;
    } catch {
      return false;
    }
  },
  { message: 'must be a valid regular expression' },
);

/** A detection rule: a regex over one region of the screen; the first rule that matches decides. */
export const DetectRuleSchema = z.strictObject({
  name: z.string().min(1),
  status: z.enum(['starting', 'idle', 'busy', 'waiting_input', 'limited', 'done', 'error']),
  pattern: regex,
  /**
   * `bottom`: the last `lines` non-empty lines; `top`: the first `lines` non-empty lines; `screen`: all
   * of it; `raw`: recent raw output (with escapes stripped).
   */
  region: z.enum(['bottom', 'top', 'screen', 'raw']).default('bottom'),
  lines: z.number().int().positive().default(12),
});
export type DetectRule = z.output<typeof DetectRuleSchema>;

export const DetectSchema = z.strictObject({
  /** Rules in order; busy evidence should come before idle evidence. */
  rules: z.array(DetectRuleSchema).default([]),
  /** How long a quiet screen must stay unchanged before a turn counts as done. */
  settleMs: z.number().int().nonnegative().default(300),
  /**
   * After the CLI starts, how long its first quiet screen must stay so before it counts as ready: for a
   * CLI that draws a ready-looking screen and then loads more (gemini, resuming a conversation).
   */
  startSettleMs: z.number().int().nonnegative().default(0),
  /**
   * Text that, arriving in the pane's output, says busy by itself (a spinner line the CLI redraws while
   * it works): output that matches needs no screen capture. Escape sequences are stripped first; the
   * screen is still captured once the output stops, so a match in a reply cannot hold a pane busy.
   */
  outputBusy: z.array(regex).default([]),
  /** Where the CLI writes its own state to disk, used as stronger evidence than the screen. */
  stateFile: z.enum(STATE_FILE_KINDS).optional(),
  /**
   * The CLI's native hooks (issue 27): jaggers installs them per pane (src/clis/<cli>/hooks.ts) and
   * their calls decide busy, done, waiting and the session id before the state file and the screen.
   */
  hooks: z.enum(HOOK_KINDS).optional(),
  /**
   * The CLI shows nothing busy while it streams (codex): a quiet screen after busy is not enough,
   * only `done` evidence (its turn summary) ends the turn.
   */
  doneNeedsEvidence: z.boolean().default(false),
  /** Lines that start a reply on screen (e.g. `✦` or `⏺`), for reply capture from the screen. */
  replyMarker: regex.optional(),
  /**
   * Lines that are the CLI's own screen furniture (a hint line, a rule, a turn summary) and never end
   * a reply: trimmed off the end of a reply read from the screen.
   */
  chrome: regex.optional(),
});

export const SessionSchema = z.strictObject({
  /** pre-generated: pass our UUID at start; discovered: read it from disk after the first turn; none: no pinning. */
  pin: z.enum(['pre-generated', 'discovered', 'none']).default('none'),
  startArgs: z.array(z.string()).default([]),
  resumeArgs: z.array(z.string()).default([]),
  /**
   * A headless turn in the pinned conversation: `{sessionId}`, `{prompt}` (and `{replyFile}`) are filled
   * in; an argument that is exactly `{promptWords}` becomes the prompt's words, one argument each.
   */
  headlessArgs: z.array(z.string()).optional(),
  /**
   * A headless turn that is the conversation's first (the TUI writes none before its first turn, so the
   * resume arguments find nothing): e.g. `--session-id {sessionId} -p {prompt}`. Without it, headlessArgs.
   */
  headlessFirstArgs: z.array(z.string()).optional(),
  /** How a first headless turn tells the session it made, for a CLI that cannot take one up front. */
  headlessIdFrom: z.enum(HEADLESS_ID_KINDS).optional(),
  /**
   * How a headless turn prints its reply: `text` (the reply alone, or the `{replyFile}` it names),
   * `opencode-json` (`opencode run --format json` events: the last message's text parts).
   */
  headlessReply: z.enum(HEADLESS_REPLY_KINDS).default('text'),
  /**
   * Where a `discovered` pin is read: `codex-rollout` (codex's rollout files), `opencode-session-list`
   * (the CLI run with `listArgs`, JSON; `export <id>` tells apart several new sessions).
   */
  discover: z.enum(DISCOVER_KINDS).optional(),
  listArgs: z.array(z.string()).optional(),
  /** Where the CLI keeps its own transcript of the pinned session, for reply capture. */
  transcript: z.enum(TRANSCRIPT_KINDS).optional(),
  /** Whose reader gives the tokens the pinned session spent, per turn (docs/usage.md). */
  usage: z.enum(USAGE_KINDS).optional(),
});

export const DeliverySchema = z.strictObject({
  ready: z.array(z.enum(['idle', 'done', 'starting', 'waiting_input', 'busy'])).default(['idle', 'done']),
  /** Wait after the paste before the submit key: TUIs take an early Enter as part of the paste. */
  settleMs: z.number().int().nonnegative().default(200),
  submitKeys: z.array(z.string().min(1)).default(['Enter']),
  /**
   * Keys that empty a non-empty input box, sent before a paste when the box still holds another jaggers
   * prompt (typed by a supervisor killed before its Enter); none: such a pane is refused instead.
   */
  clearKeys: z.array(z.string().min(1)).default(['C-c']),
  /** Keys that stop the agent's turn (`jaggers cancel` on a running job): Escape in the CLIs seen so far. */
  interruptKeys: z.array(z.string().min(1)).default(['Escape']),
  maxSubmitRetries: z.number().int().nonnegative().default(2),
  verifyTimeoutMs: z.number().int().positive().default(30_000),
  readyTimeoutMs: z.number().int().positive().default(60_000),
  pointer: z.string().default('Read {file} and do what it asks. [jg:{nonce}]'),
});

/**
 * How jaggers' MCP server is offered to this CLI, per process (never in the user's settings):
 * `config-file`: jaggers writes `{"mcpServers": {"jaggers": {...}}}` under .jaggers/mcp/ and adds `args`
 * and `env`, where `{mcpConfig}` is that file's path; `codex-overrides`: `-c mcp_servers.jaggers.*=...`
 * arguments; `opencode-config`: as `config-file`, in opencode's format (`{"mcp": {"jaggers": {"type":
 * "local", "command": [...], "environment": {...}}}}`). `server` adds fields to the server's entry (a
 * CLI's own options: timeouts, trust).
 */
export const McpSchema = z.strictObject({
  via: z.enum(MCP_VIA_KINDS),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  server: z.record(z.string(), z.unknown()).default({}),
});

/**
 * How the CLI is let read the files jaggers hands it (the shared folders of .jaggers/: handover files,
 * messages, job prompts) when they are outside its working folder (an agent in a git worktree, or with
 * a `cwd` of its own): CLIs refuse such a path (gemini) or ask a person first (claude, qwen, opencode,
 * copilot). `args` are added once per folder, `{folder}` its absolute path; `via` is a CLI's own way
 * (`opencode-permission`: allowed in OPENCODE_PERMISSION). Each folder is made before the CLI starts.
 */
export const SharedFoldersSchema = z.strictObject({
  args: z.array(z.string()).default([]),
  via: z.enum(FOLDER_ACCESS_KINDS).optional(),
});

const Size = z.strictObject({
  width: z.number().int().min(20).max(1000),
  height: z.number().int().min(5).max(1000),
});

export const ProfileSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]*$/, 'must be lower-case letters, digits, - or _')
    .refine(isName, `must be ${NAME_RULE}`),
  description: z.string().default(''),
  command: z.string().min(1),
  /** How a person installs the CLI (`npm install -g @openai/codex`): `up` and `doctor` say it when the command is not found. */
  install: z.string().min(1).optional(),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  size: Size.optional(),
  /** The CLI's versions the rules were checked against, oldest first (`doctor` compares the installed one with the last). */
  versions: z.array(z.string().regex(/^\d+\.\d+\.\d+/, 'must be a version like 1.2.3')).default([]),
  /** Older profiles named one checked version; it counts as `versions: [version]`. */
  version: z.string().optional(),
  /** How to ask the CLI its version (`doctor`, `profile check`): the first x.y.z it prints counts. */
  versionArgs: z.array(z.string()).default(['--version']),
  detect: DetectSchema.default(DetectSchema.parse({})),
  session: SessionSchema.default(SessionSchema.parse({})),
  delivery: DeliverySchema.default(DeliverySchema.parse({})),
  mcp: McpSchema.optional(),
  sharedFolders: SharedFoldersSchema.optional(),
  /**
   * The CLI's own command that compacts its conversation (`/compact`, `/compress`): typed between turns,
   * as a work item of its own, when the agent's context passes `compactAt` with `autoCompact` (docs/usage.md).
   */
  compactCommand: z.string().min(1).max(200).optional(),
});

export type Profile = z.output<typeof ProfileSchema>;
