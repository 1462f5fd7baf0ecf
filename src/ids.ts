// Every id format of jaggers, in one place, and the makers of new ids. Light (node:crypto only): the
// client commands check ids with it before they ask the supervisor.
import { JaggersError } from './errors.js';
import { createHash, randomBytes } from 'node:crypto';

/**
 * A work item (`assign`, `handoff`, `send`, a workflow turn, a flow run): `j-` + 12 hex, random or
 * derived (newJobId, derivedJobId); 8 to 16 are accepted, for the 8 hex ids of older versions' registries.
 */
export const JOB_ID = /^j-[0-9a-f]{8,16}$/;
/** How many hex digits a new job id has. */
export const JOB_ID_HEX = 12;
/** An inbox message: `m-` + 8 to 16 hex. */
export const MESSAGE_ID = /^m-[0-9a-f]{8,16}$/;
/** An agent's terminal (its window's `@jaggers_terminal_id`, `JAGGERS_TERMINAL_ID`): `jg-` + hex. */
export const TERMINAL_ID = /^jg-[0-9a-f]+$/;
/**
 * Keys every plain object has without being given them: a lookup by one of these in a record finds
 * something (`data.tasks['constructor']` is a function) even when nothing was stored under it.
 */
const OBJECT_KEYS = [
  '__proto__',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'constructor',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  'toString',
  'valueOf',
] as const;
const NOT_OBJECT_KEY = `(?!(?:${OBJECT_KEYS.join('|')})$)`;

/**
 * The one name rule: every name or id a client, an agent or a file gives (agent, profile, workflow,
 * flow, role, job, task, terminal) meets it before it is looked up or made part of a file's name:
 * letters, digits, `.`, `-`, `_`, 1 to 128 of them, not starting with `.` or `-` (so never a path
 * like `..`), and never a name every object already has (`__proto__`, `constructor`, `toString`...).
 * Each kind may have a narrower format of its own (agent names are lower-case); none is wider.
 */
export const NAME = new RegExp(`^${NOT_OBJECT_KEY}[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`);
export const NAME_RULE =
  "1-128 letters, digits, '.', '-' or '_', not starting with '.' or '-', and not a name every object has (__proto__, constructor, toString...)";

export function isName(s: string): boolean {
  return NAME.test(s);
}

/** Why `s` breaks the name rule (for `what`, e.g. "agent"), or null when it keeps it. */
export function nameProblem(what: string, s: string): string | null {
  if (isName(s)) return null;
  const shown = JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s);
  return `${shown} is not a valid ${what} name: must be ${NAME_RULE}`;
}

/** An agent as commands and routes take it: its name, its terminal id, or a task's window of it (`coder+t-1a2b3c4d`). */
export function isAgentRef(s: string): boolean {
  if (isName(s)) return true;
  const plus = s.indexOf('+');
  return plus > 0 && isName(s.slice(0, plus)) && TASK_ID.test(s.slice(plus + 1));
}

/** For a command: the agent as given when it is one (see isAgentRef); else E_USAGE naming the command and the value. */
export function givenAgent(command: string, what: string, name: string): string {
  if (isAgentRef(name)) return name;
  throw new JaggersError('E_USAGE', `${command}: ${nameProblem(what, name) ?? JSON.stringify(name)}`);
}

/** `record[key]` when `key` is the record's own key (never something every object has); else undefined. */
export function own<T>(record: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** A task (`--task`, `run`): a name (the one rule above) of at most 64 characters. */
export const TASK_ID = new RegExp(`^${NOT_OBJECT_KEY}[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`);
export const TASK_ID_RULE = "1-64 letters, digits, '.', '-' or '_', not starting with '.' or '-' (and not a name like __proto__ or constructor)";
/** The name of a worker window a profile job opened (`claude-j-1a2b3c4d5e6f`): not an agent of the team. */
export const WORKER_AGENT = /-j-[0-9a-f]{8,16}$/;

/** A new work item's id: `j-` + 12 random hex. */
export function newJobId(): string {
  return `j-${randomBytes(JOB_ID_HEX / 2).toString('hex')}`;
}

/** A work item's id made from what it is (a flow's tick, a task's turn and attempt): the same parts, the same id, in newJobId's format. */
export function derivedJobId(...parts: readonly (string | number)[]): string {
  return `j-${createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, JOB_ID_HEX)}`;
}

export function newMessageId(): string {
  return `m-${randomBytes(6).toString('hex')}`;
}

export function newTerminalId(): string {
  return `jg-${randomBytes(4).toString('hex')}`;
}

/** A new task id: `t-` + 8 hex. */
export function newTaskId(): string {
  return `t-${randomBytes(4).toString('hex')}`;
}

/** Agent windows are this size unless `--size`, jaggers.json or the profile says otherwise. */
export const DEFAULT_WINDOW_SIZE: { readonly width: number; readonly height: number } = { width: 200, height: 50 };
