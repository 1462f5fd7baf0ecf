// The dashboard's listener on real sockets (a bare fastify app for the API's): started on a free port
// the first time, kept after, moved only once the new address listens, its address kept in web.json for
// the next supervisor, beyond loopback only when asked; each open issues a new login token.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLog } from '../../src/logger.js';
import { WebListener, webConfigPath } from '../../src/web/listener.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jg-web-');
const listeners: WebListener[] = [];
const servers: net.Server[] = [];
afterEach(async () => {
  for (const l of listeners.splice(0)) await l.close();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

function make(dir: string) {
  const moves: (string | null)[] = [];
  const l = new WebListener({
    build: () => {
      const app = Fastify();
      app.get('/', async () => 'ok');
      return app;
    },
    jaggersDir: dir,
    token: async () => 'api-token',
    log: silentLog,
    moved: (a) => void moves.push(a),
  });
  listeners.push(l);
  return { l, moves };
}

const portOf = (address: string) => Number(address.split(':').at(-1));

describe('WebListener', () => {
  it('a free port on 127.0.0.1 the first time, the same after (127.0.0.1:0 included), a new token each time', async () => {
    const dir = await temp();
    const { l, moves } = make(dir);
    const a = await l.open({}, 'test');
    expect(a.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(a.url).toBe(`http://${a.address}/login?token=${a.token}`);
    expect(JSON.parse(await readFile(webConfigPath(dir), 'utf8'))).toEqual({ listen: a.address });
    const b = await l.open({}, 'test');
    const c = await l.open({ listen: '127.0.0.1:0' }, 'test');
    expect([b.address, c.address]).toEqual([a.address, a.address]);
    expect(new Set([a.token, b.token, c.token]).size).toBe(3);
    expect(moves).toEqual([a.address]);
  });

  it('a taken port is E_LISTEN naming it; the listener that works and web.json stay', async () => {
    const dir = await temp();
    const { l } = make(dir);
    const a = await l.open({}, 'test');
    const busy = net.createServer();
    servers.push(busy);
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const taken = (busy.address() as net.AddressInfo).port;
    await expect(l.open({ listen: `127.0.0.1:${taken}` }, 'web --listen')).rejects.toMatchObject({
      code: 'E_LISTEN',
      message: `cannot listen on 127.0.0.1:${taken}: the address is in use (EADDRINUSE); the web dashboard stays on ${a.address}, and .jaggers/web.json is unchanged`,
    });
    expect(l.address).toBe(a.address);
    expect(JSON.parse(await readFile(webConfigPath(dir), 'utf8'))).toEqual({ listen: a.address });
  });

  it('beyond this machine only with allowRemote', async () => {
    const { l } = make(await temp());
    await expect(l.open({ listen: '0.0.0.0:0' }, 'POST /v1/web body field `listen`')).rejects.toMatchObject({ code: 'E_USAGE' });
    const r = await l.open({ listen: '0.0.0.0:0', allowRemote: true }, 'test');
    expect(r.remote).toBe(true);
    expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?token=/);
  });

  it('the next supervisor listens where web.json says; stop forgets it', async () => {
    const dir = await temp();
    const first = make(dir);
    const a = await first.l.open({}, 'test');
    await first.l.close();
    const next = make(dir);
    expect(await next.l.restore()).toBeNull();
    expect(next.l.address).toBe(a.address);
    await next.l.stop();
    expect(next.moves).toEqual([a.address, null]);
    expect(existsSync(path.join(dir, 'web.json'))).toBe(false);
    expect(portOf(a.address)).toBeGreaterThan(0);
  });
});
