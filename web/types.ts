// The API's shapes as the page uses them: the supervisor's own types (src/api/types.ts, types only, so
// nothing of the server is bundled), plus the few views that live elsewhere in the server, as far as the
// page reads them.
export type {
  AgentState,
  AnswerResult,
  ApiErrorBody,
  HostAgentsView,
  HostTerminalView,
  InboxView,
  JobEventData,
  JobView,
  MessageView,
  StateEventData,
  StreamEventType,
  TaskTurnView,
  TaskView,
} from '../src/api/types.js';
import type { TerminalView as ApiTerminalView } from '../src/api/types.js';

/** An agent's pane as the page keeps it: `host` for an agent on another host (`GET /v1/hosts/terminals`). */
export type TerminalView = ApiTerminalView & { host?: string };

/** `GET /v1/worktrees`: the fields a card shows (src/agents/isolation.ts has the whole view). */
export interface WorktreeInfo {
  name: string;
  path: string;
  branch: string | null;
  agent: string | null;
  job: string | null;
  /** Made on that host, for an agent there (docs/hosts.md). */
  host?: string;
}

/** `GET /v1/flows` (src/flows/scheduler.ts's FlowView, as far as the page shows it). */
export interface FlowInfo {
  name: string;
  file: string;
  schedule: string | null;
  target: { kind: string; name: string } | null;
  enabled: boolean;
  next: string | null;
  last: { kind: string; id: string; tick: string; how: string; state: string | null } | null;
  runs: number;
  problem: string | null;
}

/** One event of `GET /v1/events`, as the page gets it: the SSE id, its type, and the frame's `{at, data}`. */
export interface PageEvent {
  id: number | null;
  type: string;
  at: string;
  data: Record<string, unknown>;
}
