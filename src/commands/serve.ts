// `jaggers serve --listen HOST:PORT`: the supervisor also serves its API on TCP (kept across its
// restarts in .jaggers/serve.json), behind the bearer token in .jaggers/token. The supervisor listens on
// the new address before it lets go of the old one: an address it cannot listen on (in use) is an error
// naming it, and the listener that worked and serve.json stay as they were. An address beyond this
// machine (0.0.0.0, a LAN address) needs --allow-remote.
import { rm } from 'node:fs/promises';
import { withApi } from '../api/connect.js';
import { serveConfigPath, tokenPath } from '../api/paths.js';
import type { Context } from '../context.js';
import { writeFileAtomic } from '../fs/durable.js';

export interface ServeResult {
  listen: string | null;
  token: string | null;
  /** Reachable beyond this machine (--allow-remote). */
  remote: boolean;
}

export async function serve(ctx: Context, o: { listen?: string; stop?: boolean; allowRemote?: boolean }): Promise<ServeResult> {
  if (o.stop) {
    await rm(serveConfigPath(ctx.jaggersDir), { force: true });
    await withApi(ctx, (api) => api.call('DELETE', '/v1/listen'));
    return { listen: null, token: null, remote: false };
  }
  const listen = o.listen ?? '127.0.0.1:7420';
  const body = { listen, ...(o.allowRemote ? { allowRemote: true } : {}) };
  const r = await withApi(ctx, (api) => api.call<{ listen: string; remote?: boolean }>('POST', '/v1/listen', body));
  await writeFileAtomic(serveConfigPath(ctx.jaggersDir), `${JSON.stringify({ listen: r.listen, ...(r.remote ? { allowRemote: true } : {}) })}\n`);
  return { listen: r.listen, token: tokenPath(ctx.jaggersDir), remote: r.remote === true };
}

/** What `serve` prints; a listener beyond this machine comes with a warning (on stderr). */
export function renderServe(r: ServeResult): { out: string; warning: string | null } {
  if (!r.listen) return { out: 'stopped serving on TCP\n', warning: null };
  return {
    out: `serving the API on http://${r.listen} (bearer token in ${r.token})\n`,
    warning: r.remote
      ? `the API on ${r.listen} can be reached from beyond this machine: whoever reaches it with the token drives your agents, and the token travels unencrypted (plain HTTP)`
      : null,
  };
}
