// `jaggers serve --listen` on a real supervisor: a new address that cannot be listened on (the port is
// taken) is an error naming it, and the listener that worked stays, as does serve.json; an address beyond
// this machine needs --allow-remote, and then comes with a warning.
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthView } from '../../src/api/types.js';
import { api, raw } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('jaggers serve', () => {
  let rig: Rig;
  let token = '';
  let busy: net.Server;
  let busyPort = 0;
  const serveJson = () => path.join(rig.root, '.jaggers', 'serve.json');

  beforeAll(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    const up = await rig.run(['up']);
    expect(up.code, up.stderr).toBe(0);
    // Somebody else's server on a port of this machine.
    busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as net.AddressInfo).port;
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => busy?.close(resolve));
    await rig.cleanup();
  });

  const health = (port: number) => raw({ host: '127.0.0.1', port }, 'GET', '/v1/health', undefined, { authorization: `Bearer ${token}` });

  it('a port in use is an error naming the address; the listener that worked and serve.json stay', async () => {
    const first = await rig.run(['serve', '--listen', '127.0.0.1:0']);
    expect(first.code, first.stderr).toBe(0);
    const port = Number(/http:\/\/127\.0\.0\.1:(\d+)/.exec(first.stdout)?.[1]);
    token = (await readFile(path.join(rig.root, '.jaggers', 'token'), 'utf8')).trim();
    expect((await health(port)).status).toBe(200);
    const saved = await readFile(serveJson(), 'utf8');
    expect(JSON.parse(saved)).toEqual({ listen: `127.0.0.1:${port}` });

    const taken = await rig.run(['serve', '--listen', `127.0.0.1:${busyPort}`]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe(
      `jaggers: cannot listen on 127.0.0.1:${busyPort}: the address is in use (EADDRINUSE); the API stays on 127.0.0.1:${port}, and .jaggers/serve.json is unchanged\n`,
    );
    expect((await health(port)).status).toBe(200);
    expect(await readFile(serveJson(), 'utf8')).toBe(saved);
    expect((await api(rig).call<HealthView>('GET', '/v1/health')).tcp).toBe(`127.0.0.1:${port}`);

    // The same address again is no change (not a failure on its own port).
    const again = await rig.run(['serve', '--listen', `127.0.0.1:${port}`]);
    expect(again.code, again.stderr).toBe(0);
    expect((await health(port)).status).toBe(200);
  });

  it('an address beyond this machine is refused without --allow-remote, and comes with a warning with it', async () => {
    const before = await api(rig).call<HealthView>('GET', '/v1/health');
    const saved = await readFile(serveJson(), 'utf8');
    const open = await rig.run(['serve', '--listen', '0.0.0.0:0']);
    expect(open.code).toBe(1);
    expect(open.stderr).toMatch(
      /^jaggers: POST \/v1\/listen body field `listen`: 0\.0\.0\.0:0 is not a loopback address: whoever reaches it with the token drives your agents/,
    );
    expect(open.stderr).toMatch(/add --allow-remote/);
    expect((await api(rig).call<HealthView>('GET', '/v1/health')).tcp).toBe(before.tcp);
    expect(await readFile(serveJson(), 'utf8')).toBe(saved);

    const allowed = await rig.run(['serve', '--listen', '0.0.0.0:0', '--allow-remote']);
    expect(allowed.code, allowed.stderr).toBe(0);
    const port = Number(/http:\/\/0\.0\.0\.0:(\d+)/.exec(allowed.stdout)?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(allowed.stderr).toMatch(/^jaggers: warning: the API on 0\.0\.0\.0:\d+ can be reached from beyond this machine: .*the token travels unencrypted/);
    expect(JSON.parse(await readFile(serveJson(), 'utf8'))).toEqual({ listen: `0.0.0.0:${port}`, allowRemote: true });
    expect((await health(port)).status).toBe(200);
    // The old listener was let go once the new one listened.
    await expect(health(Number(before.tcp!.split(':')[1]))).rejects.toThrow(/ECONNREFUSED/);

    const stopped = await rig.run(['serve', '--stop']);
    expect(stopped.code).toBe(0);
    await expect(health(port)).rejects.toThrow(/ECONNREFUSED/);
  });
});
