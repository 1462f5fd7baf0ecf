// How a command reaches the supervisor: one request on the unix socket; when nobody answers, the
// supervisor is started again in window 0 (the slow path, loaded only then) and the request sent once more.
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { ApiClient, isConnectFailure } from './client.js';
import { apiSocketPath } from './paths.js';

export function clientFor(ctx: Context): ApiClient {
  return new ApiClient({ socketPath: apiSocketPath(ctx.jaggersDir) }, ctx.session);
}

/**
 * Run `fn` against the supervisor. If the connection cannot be made (no supervisor, or a dead one's
 * socket), start it and run `fn` again: the request never reached anyone, so nothing runs twice.
 * `readOnly` requests are sent again also when the supervisor dropped the connection before answering
 * (it was dying as they arrived); a request that changes something never is, as it may have been taken.
 */
export async function withApi<T>(ctx: Context, fn: (api: ApiClient) => Promise<T>, o: { readOnly?: boolean } = {}): Promise<T> {
  const api = clientFor(ctx);
  try {
    return await fn(api);
  } catch (e) {
    const dropped = e instanceof JaggersError && e.code === 'E_SUPERVISOR_DOWN';
    if (!isConnectFailure(e) && !(o.readOnly && dropped)) throw e;
  }
  const { startSupervisor } = await import('./ensure.js');
  await startSupervisor(ctx, api);
  return fn(api);
}
