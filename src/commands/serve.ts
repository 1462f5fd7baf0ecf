// `jaggers serve --listen HOST:PORT`: the supervisor also serves its API on TCP (kept across its
// restarts in .jaggers/serve.json), behind the bearer token in .jaggers/token.
import { rm } from 'node:fs/promises';
import { withApi } from '../api/connect.js';
import { serveConfigPath, tokenPath } from '../api/paths.js';
import type { Context } from '../context.js';
import { writeFileAtomic } from '../fs/durable.js';

export async function serve(ctx: Context, o: { listen?: string; stop?: boolean }): Promise<{ listen: string | null; token: string | null }> {
  if (o.stop) {
    await rm(serveConfigPath(ctx.jaggersDir), { force: true });
    await withApi(ctx, (api) => api.call('DELETE', '/v1/listen'));
    return { listen: null, token: null };
  }
  const listen = o.listen ?? '127.0.0.1:7420';
  const r = await withApi(ctx, (api) => api.call<{ listen: string }>('POST', '/v1/listen', { listen }));
  await writeFileAtomic(serveConfigPath(ctx.jaggersDir), `${JSON.stringify({ listen: r.listen })}\n`);
  return { listen: r.listen, token: tokenPath(ctx.jaggersDir) };
}
