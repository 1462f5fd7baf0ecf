// How a command reaches the supervisor: one request on the unix socket; when nobody answers, the
// supervisor is started again in window 0 (the slow path, loaded only then) and the request sent once more.
import type { Context } from '../context.js';
import path from 'node:path';
import { JaggersError } from '../errors.js';
import { checkPrivateFolder } from '../fs/private-dir.js';
import { ApiClient, notTaken } from './client.js';
import { apiSocketPath, hostSocketPath } from './paths.js';

/**
 * The socket's folder, when it exists, must be ours and closed to others (E_UNSAFE_FOLDER otherwise):
 * under the temp folder another user could have made it first and put their own socket in it.
 */
export function checkSocketFolder(ctx: Context): string {
  const socket = apiSocketPath(ctx.jaggersDir);
  checkPrivateFolder(path.dirname(socket));
  return socket;
}

export function clientFor(ctx: Context): ApiClient {
  return new ApiClient({ socketPath: checkSocketFolder(ctx) }, ctx.session);
}

/**
 * The API of a host's supervisor (docs/hosts.md), through the socket the local supervisor forwards to it
 * (`.jaggers/hosts/<host>.sock`): nobody answers there while its connection is down.
 */
export function hostApi(ctx: Context, host: string): ApiClient {
  return new ApiClient({ socketPath: hostSocketPath(ctx.jaggersDir, host) }, ctx.session);
}

/**
 * Run `fn` against the supervisor. If the connection cannot be made (no supervisor, or a dead one's
 * socket) or a stopping supervisor refused the request, start the next one and run `fn` again: the
 * request was not taken, so nothing runs twice.
 * `readOnly` requests are sent again also when the supervisor dropped the connection before answering
 * (it was dying as they arrived); a request that changes something never is, as it may have been taken.
 */
export async function withApi<T>(ctx: Context, fn: (api: ApiClient) => Promise<T>, o: { readOnly?: boolean } = {}): Promise<T> {
  const api = clientFor(ctx);
  try {
    return await fn(api);
  } catch (e) {
    const dropped = e instanceof JaggersError && e.code === 'E_SUPERVISOR_DOWN';
    if (!notTaken(e) && !(o.readOnly && dropped)) throw e;
  }
  const { startSupervisor } = await import('./ensure.js');
  await startSupervisor(ctx, api);
  return fn(api);
}
