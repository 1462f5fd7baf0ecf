// Every id format of jaggers, in one place, and the makers of new ids. Light (node:crypto only): the
// client commands check ids with it before they ask the supervisor.
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
 * A task (`--task`, `run`): letters, digits, `.`, `-`, `_`; 1 to 64 of them; never a name every object
 * already has (`__proto__`, `constructor`, `toString`...), which a lookup by key would find anyway.
 */
export const TASK_ID =
  /^(?!(?:__proto__|__defineGetter__|__defineSetter__|__lookupGetter__|__lookupSetter__|constructor|hasOwnProperty|isPrototypeOf|propertyIsEnumerable|toLocaleString|toString|valueOf)$)[A-Za-z0-9_.-]{1,64}$/;
export const TASK_ID_RULE = "1-64 letters, digits, '.', '-' or '_' (not a name like __proto__ or constructor)";
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
