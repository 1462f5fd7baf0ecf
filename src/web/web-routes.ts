// The dashboard's own routes, on its listener only: the login that trades a one-time token for the session
// cookie, the page (`/`) and its files (`/assets/...`). Every answer says the page must not be framed,
// sniffed or referred from.
import type { FastifyInstance } from 'fastify';
import { JaggersError } from '../errors.js';
import { assetParts, findAsset, takesGzip, type ReadFile } from './assets.js';
import type { WebSessions } from './sessions.js';

export interface WebRouteOptions {
  sessions: Pick<WebSessions, 'login'>;
  /** The session cookie's name. */
  cookie(): string;
  /** dist/web/: index.html and assets/. */
  root: string;
  read: ReadFile;
}

/** The page's scripts and styles come from its own files only; nobody may frame it. */
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export function registerWebRoutes(app: FastifyInstance, o: WebRouteOptions): void {
  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('content-security-policy', CSP);
    return payload;
  });

  app.get('/login', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const token = typeof q.token === 'string' ? q.token : '';
    const session = o.sessions.login(token);
    if (!session)
      throw new JaggersError(
        'E_UNAUTHORIZED',
        token
          ? 'GET /login: this login token was used already, or is not one of this supervisor: run `jaggers web` for a new URL'
          : 'GET /login: no token: open the URL `jaggers web` prints',
      );
    return reply
      .code(303)
      .header('set-cookie', `${o.cookie()}=${session}; HttpOnly; SameSite=Strict; Path=/`)
      .header('cache-control', 'no-store')
      .header('location', '/')
      .send();
  });

  const serve = async (parts: string[], accept: string | undefined, immutable: boolean, what: string) => {
    const a = await findAsset(o.root, parts, takesGzip(accept), o.read, immutable);
    if (!a) throw new JaggersError('E_NOT_FOUND', `${what}: no such file in the page's files (${o.root}; \`npm run build\` makes them)`);
    return a;
  };

  app.get('/', async (req, reply) => {
    const a = await serve(['index.html'], req.headers['accept-encoding'], false, 'GET /');
    return reply.code(200).headers(a.headers).send(a.body);
  });

  app.get('/assets/*', async (req, reply) => {
    const name = (req.params as { '*': string })['*'];
    const parts = assetParts(name);
    const what = `GET /assets/${name.slice(0, 200)}`;
    if (!parts) throw new JaggersError('E_NOT_FOUND', `${what}: not a name the page's files have`);
    const a = await serve(['assets', ...parts], req.headers['accept-encoding'], true, what);
    return reply.code(200).headers(a.headers).send(a.body);
  });
}
