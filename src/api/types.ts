// The shapes the local API sends back (request bodies are validated by zod in src/supervisor/schemas.ts).
// Types only: clients import this without loading any code.
import type { JobRecord, MessageRecord } from '../sessions/work.js';
import type { TokenTotal } from '../usage/tokens.js';
import type { AgentStateName } from '../states.js';
import type { OverBudget } from '../usage/budget-schema.js';
import type { ContextView } from '../usage/context.js';

export type AgentState = AgentStateName;

export interface HealthView {
  pid: number;
  version: string;
  startedAt: string;
  uptimeMs: number;
  session: string;
  /** The tmux server, `-L name` or `-S path`. */
  tmux: string;
  project: string;
  /** The unix socket this API listens on, and the TCP address when `jaggers serve --listen` added one. */
  socket: string;
  tcp: string | null;
  /** The web dashboard's address while `jaggers web` serves it. */
  web: string | null;
  terminals: number;
  log: string;
  /** What the registry said when it repaired itself (a snapshot rebuilt after a crash), since this start. */
  warnings: string[];
  /** While the disk refuses writes (full, failing): the path whose write failed, its error and since when; new work gets E_DISK_FULL. */
  disk: { path: string; code: string; error: string; since: string } | null;
  /** The hosts this supervisor keeps a connection to (docs/hosts.md), each with its connection's state. */
  hosts?: {
    name: string;
    ssh: string;
    state: string;
    detail: string;
    root: string | null;
    /** Its supervisor as this one keeps it running (docs/hosts.md, Faults): `answering`, `not-answering`, `restarting`... */
    supervisor?: { state: string; detail: string; restarts: number };
  }[];
}

/** A screen reading: the status the profile's rules give it, the rule and the lines it matched. */
export interface Reading {
  status: string;
  rule: string | null;
  lines: string[];
}

export interface TerminalView {
  agent: string;
  terminalId: string | null;
  task: string | null;
  profile: string | null;
  window: string;
  windowIndex: number;
  pane: string;
  pid: number | null;
  /** The live machine's state (`settling` shows as `busy`). */
  state: AgentState;
  since: string | null;
  rule: string | null;
  lines: string[];
  /** What decided the state: `hook` (rule `hook <event>`), `state-file`, `screen`, `output`, `tmux`, `turn`. */
  source: string;
  turns: number;
  sessionId: string | null;
  exitStatus: number | null;
  /** What the machine waits for to leave this state, in words. */
  waitingFor: string | null;
  /** When waiting_input: the question on screen and the choices it offers. */
  question: { text: string; choices: string[]; selected?: number; layout?: 'row' } | null;
  /** A profile that could not be loaded: the pane is not watched. */
  problem: string | null;
  /** The tokens this agent's recorded turns spent (docs/usage.md); null: none recorded. */
  usage: TokenTotal | null;
  /**
   * State `limited` (docs/limits.md): when the limit resets (null: the CLI did not say), when its queue
   * is tried again (the reset, or a set wait when none was shown), and the words on screen that said so.
   */
  limit?: { seenAt: string; resetAt: string | null; retryAt: string; said: string | null; lines: string[] };
  /** The watchdog's latest finding on this agent (docs/limits.md), while it stands. */
  stuck?: { kind: string; since: string; reason: string } | null;
  /** How full its context is after its last turn: tokens, its model's window, percent (null: window unknown), threshold. */
  context?: ContextView | null;
}

/** `GET /v1/terminals/{agent}`: the view plus a fresh reading of what is on screen now. */
export interface TerminalDetail extends TerminalView {
  now: Reading & { screenLines: string[] };
  /** The agent's work items that have not ended, in the order they run, each with what it waits for. */
  queue: QueueEntry[];
  /** Its CLI's native hooks (issue 27), where its profile has them: installed, calls seen, a fallback warning. */
  hooks?: { kind: string; installed: boolean; calls: number; lastEvent: { event: string; at: string } | null; warning: string | null } | null;
}

/** One work item in an agent's queue (`why`): the one that runs now first. */
export interface QueueEntry {
  id: string;
  /** job, handoff, send, turn, flow, or message. */
  work: string;
  state: string;
  /** Why it has not gone in (null: it runs now). */
  waiting: string | null;
}

export interface ScreenView {
  agent: string;
  terminalId: string | null;
  pane: string;
  ansi: boolean;
  screen: string;
}

export type DeliveryEvidence = 'busy' | 'menu' | 'echo' | 'cleared' | 'unverified';

export interface AnswerResult {
  agent: string;
  pane: string;
  /** The question that was answered and its choices, as read from the screen. */
  question: { text: string; choices: string[]; selected?: number; layout?: 'row' };
  /** The choice picked: its number in the menu and its label. */
  chose: { number: number; label: string };
  /** The keys sent: the choice's number, and Enter when the number only moved the highlight. */
  keys: string[];
  /** The agent's state once the menu went away. */
  state: string;
}

export interface InputResult {
  /** The send's work item. */
  job?: string;
  agent: string;
  pane: string;
  bytes: number;
  submits: number;
  evidence: DeliveryEvidence;
  ms: number;
}

export interface HandoffReply {
  text: string;
  from: 'transcript' | 'screen' | 'headless' | 'hook';
  artifact: string;
}

export interface HandoffResult {
  /** The handoff's work item: `jaggers wait <job>` and `jaggers result <job>` follow it too. */
  job?: string;
  task: string;
  turn: number;
  agent: string;
  terminalId: string | null;
  artifact: string;
  pointer: string;
  delivery: { kind: 'delivered' | 'headless'; submits: number; evidence: DeliveryEvidence | null; ms: number };
  reply: HandoffReply | null;
  timings: { deliverMs: number; replyMs: number | null; totalMs: number };
  states: string[];
  /** How the turn's end was confirmed: the transcript's finished reply, or the screen. */
  confirmedBy: 'transcript' | 'screen' | 'headless' | 'hook' | null;
}

export type StreamEventType =
  'hello' | 'state' | 'turn' | 'pin' | 'fork' | 'notice' | 'job' | 'message' | 'task' | 'stuck' | 'gap' | 'budget' | 'context' | 'host';

/**
 * A background job as the registry holds it; `attach` says where to answer an agent that waits for a
 * person, `waiting` why a queued job has not started (its agent is busy, no worker slot...).
 */
export type JobView = JobRecord & {
  attach: string | null;
  waiting: string | null;
  /** A queued item that a reached budget holds (docs/usage.md, Budgets): which budget, spent and limit. */
  overBudget?: OverBudget | null;
};

export interface JobResultView {
  job: JobView;
  /** The reply's text (from its artifact), once the job is done. */
  reply: string | null;
  /** The reply artifact, relative to the project. */
  artifact: string | null;
}

export type MessageView = MessageRecord;

export interface InboxView {
  agent: string;
  terminalId: string;
  /** Why pending messages wait (the agent is busy, its pane is down...); null when none wait. */
  waiting: string | null;
  pending: number;
  messages: MessageView[];
}

/** Data of `job` events: the job's new state. */
export interface JobEventData {
  id: string;
  name: string | null;
  state: JobRecord['state'];
  reason: string;
  agent: string | null;
  terminalId: string | null;
  [k: string]: unknown;
}

export interface StreamEvent<T = Record<string, unknown>> {
  id: number;
  type: StreamEventType;
  at: string;
  data: T;
}

export interface StateEventData {
  agent: string;
  terminalId: string | null;
  task: string | null;
  pane: string;
  state: AgentState;
  rule: string | null;
  turns: number;
  since: string;
  /** Decided by a CLI's hook: ms from the hook bridge's start (the CLI fired it) to the supervisor applying it. */
  hookLagMs?: number;
  /** State `limited`: when the limit resets (null: not shown) and when the agent's queue is tried again. */
  resetAt?: string | null;
  retryAt?: string;
}

export interface TurnEventData {
  phase: 'written' | 'delivered' | 'done' | 'failed';
  /** The work item whose turn it is. */
  job?: string;
  agent: string;
  terminalId: string | null;
  task: string;
  turn: number;
  artifact: string;
  reply?: string;
  error?: string;
}

export interface ApiErrorBody {
  error: { code: string; message: string };
}

/** One turn of a workflow task. */
export interface TaskTurnView {
  seq: number;
  step: string;
  agent: string;
  round: number;
  /** The job that ran it (the one that finished, else the latest try). */
  job: string | null;
  attempts: number;
  state: string;
  reason: string | null;
  /** Its handover file and its reply's, relative to the project. */
  prompt: string | null;
  reply: string | null;
  /** The agent's conversation the turn went to (from its handover file; `show` only). */
  sessionId: string | null;
  started: string | null;
  ended: string | null;
  ms: number | null;
}

/** A task: a workflow run (`jaggers run`), or the task of an `up --task` or a handoff. */
export interface TaskView {
  id: string;
  workflow: string;
  /** created, running, waiting, interrupted, done, failed, cancelled. */
  status: string;
  reason: string | null;
  step: string | null;
  agent: string | null;
  text: string | null;
  source: string | null;
  roles: Record<string, string>;
  detached: boolean;
  created: string;
  updated: string | null;
  /** The last reply of a task that is done, relative to the project. */
  final: string | null;
  outcome: string | null;
  seq: number;
  /** Its machine runs in this supervisor now. */
  live: boolean;
  attach: string | null;
  agents: Record<string, { terminalId: string; sessionId: string | null; turns: number }>;
  turns: TaskTurnView[];
  /** The tokens its turns spent, all its agents together (docs/usage.md); null: none recorded. */
  usage?: TokenTotal | null;
}

/** A terminal's pinned conversation (`jaggers sessions`). */
export interface PinRow {
  task: string | null;
  agent: string;
  terminalId: string;
  profile: string;
  sessionId: string | null;
  previous: string[];
  window: string | null;
  created: string;
}

/** `POST /v1/up`: the windows opened, restarted or kept, and the agents not started. */
export interface UpView {
  windows: {
    agent: string;
    terminalId: string;
    windowId: string;
    paneId: string;
    action: 'keep' | 'create' | 'respawn';
    launch: { sessionId: string | null } | null;
    /** An agent on another host (docs/hosts.md): that host's name; its terminal is that host's supervisor's. */
    host?: string;
  }[];
  /** Agents not started: their command is not found on the PATH their pane would get; `install`, how to get it (its profile's). */
  missing: { agent: string; command: string; path: string; install: string | null }[];
}

/** An agent of a host's supervisor (docs/hosts.md), as the local supervisor passes it on: `host` names the host. */
export type HostTerminalView = TerminalView & { host: string };

/** `GET /v1/hosts/terminals`: one entry per host the local supervisor keeps a connection to (docs/hosts.md). */
export interface HostAgentsView {
  host: string;
  ssh: string;
  /** The connection's state: connecting, connected, lost, retrying, closed. */
  state: string;
  /** The state in words: `retrying in 8 s (the connection dropped ...)`. */
  detail: string;
  /** Its agents, from its supervisor through the forwarded socket; null when they cannot be asked (`problem` says why). */
  agents: HostTerminalView[] | null;
  /** The agents' names: those listed, else the ones its record names. */
  names: string[];
  /** Why its agents are not shown (the connection is not up, its supervisor did not answer), or null. */
  problem: string | null;
}
