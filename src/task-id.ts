import { randomBytes } from 'node:crypto';

/** A new task id: `t-` + 8 hex. Light: the client commands use it too. */
export function newTaskId(): string {
  return `t-${randomBytes(4).toString('hex')}`;
}
