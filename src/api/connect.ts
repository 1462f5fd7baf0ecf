// How a command reaches the supervisor: one request on the unix socket; when nobody answers, the
// supervisor is started again in window 0 (the slow path, loaded only then) and the request sent once more.
import type { Context } from '../context.js';
import { ApiClient, isConnectFailure } from './client.js';
import { apiSocketPath } from './paths.js';

export function clientFor(ctx: Context): ApiClient {
  return new ApiClient({ socketPath: apiSocketPath(ctx.jaggersDir) }, ctx.session);
}

/**
 * Run `fn` against the supervisor. If the connection cannot be made (no supervisor, or a dead one's
 * socket), start it and run `fn` again: the request never reached anyone, so nothing runs twice.
 */
export async function withApi<T>(ctx: Context, fn: (api: ApiClient) => Promise<T>): Promise<T> {
  const api = clientFor(ctx);
  try {
    return await fn(api);
  } catch (e) {
    if (!isConnectFailure(e)) throw e;
  }
  const { startSupervisor } = await import('./ensure.js');
  await startSupervisor(ctx, api);
  return fn(api);
}
