// `jaggers web` (and `jaggers serve --web`): the supervisor serves the dashboard on 127.0.0.1 (a free port
// the first time, the same one after, kept in .jaggers/web.json) and issues a one-time login token; this
// prints the URL with it, as Jupyter does. An address beyond this machine needs --allow-remote and comes
// with a warning, as the TCP API's does.
import { withApi } from '../api/connect.js';
import type { Context } from '../context.js';

export interface WebResult {
  /** The login URL (with its one-time token); null once stopped. */
  url: string | null;
  address: string | null;
  token: string | null;
  remote: boolean;
}

export async function web(ctx: Context, o: { listen?: string; allowRemote?: boolean; stop?: boolean }): Promise<WebResult> {
  if (o.stop) {
    await withApi(ctx, (api) => api.call('DELETE', '/v1/web'));
    return { url: null, address: null, token: null, remote: false };
  }
  const body = { ...(o.listen !== undefined ? { listen: o.listen } : {}), ...(o.allowRemote ? { allowRemote: true } : {}) };
  const r = await withApi(ctx, (api) => api.call<{ url: string; address: string; token: string; remote?: boolean }>('POST', '/v1/web', body));
  return { url: r.url, address: r.address, token: r.token, remote: r.remote === true };
}

/** What `web` prints; a listener beyond this machine comes with a warning (on stderr). */
export function renderWeb(r: WebResult): { out: string; warning: string | null } {
  if (!r.url) return { out: 'stopped serving the web dashboard\n', warning: null };
  return {
    out: `the dashboard is at ${r.address}; open this URL to log in (its token works once):\n  ${r.url}\n`,
    warning: r.remote
      ? `the dashboard on ${r.address} can be reached from beyond this machine: whoever logs in drives your agents, and the login and its cookie travel unencrypted (plain HTTP)`
      : null,
  };
}
