// `why <agent>` of an agent on another host (src/commands/status.ts) against fake supervisors on unix
// sockets: the host's view with the items still held here for the agent; the host out of reach, E_SSH
// with the connection's state and the items that wait here for it.
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiSocketPath, hostSocketPath } from '../../src/api/paths.js';
import { why } from '../../src/commands/status.js';
import { resolveContext } from '../../src/context.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jg-hostwhy-');

function serve(socket: string, routes: Record<string, unknown>): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    const body = routes[req.url ?? ''];
    if (body === undefined) {
      res.statusCode = 404;
      return res.end(JSON.stringify({ error: { code: 'E_NOT_FOUND', message: `no route ${req.url}` } }));
    }
    res.end(JSON.stringify(body));
  });
  return new Promise((r) => server.listen(socket, () => r(server)));
}

const close = (s: http.Server) => new Promise((r) => s.close(r));

async function project() {
  const root = await temp();
  const dir = path.join(root, '.jaggers');
  await mkdir(path.join(dir, 'hosts'), { recursive: true, mode: 0o700 });
  await writeFile(path.join(dir, 'hosts', 'box.json'), JSON.stringify({ root: '/srv/p', socket: '/x', startedAt: '', agents: ['far'] }));
  const ctx = await resolveContext({ session: 'web' }, { HOME: '/home/me' }, root);
  const jobs = [
    { id: 'j-000000000001', host: 'box', agent: 'far', state: 'running', work: 'job', seq: 1, waiting: null, reason: 'on host box: far took it' },
    { id: 'j-000000000002', host: 'box', agent: 'far', state: 'queued', work: 'job', seq: 3, waiting: 'behind job j-000000000001 (running) for far' },
    { id: 'j-000000000003', host: 'box', agent: 'far', state: 'done', work: 'job', seq: 0, waiting: null },
    { id: 'j-000000000004', host: null, agent: 'near', state: 'queued', work: 'job', seq: 4, waiting: 'x' },
  ];
  const inbox = {
    agent: 'far',
    terminalId: 'far@box',
    waiting: 'behind job j-000000000001 (running) for far',
    pending: 1,
    messages: [{ id: 'm-0000abcd', host: 'box', state: 'pending', seq: 2 }],
  };
  return { root, dir, ctx, jobs, inbox };
}

describe('why of an agent on another host', () => {
  it("shows the host's view of it, then the items still queued here for it", async () => {
    const p = await project();
    const detail = { agent: 'far', state: 'busy', queue: [{ id: 'j-000000000001', work: 'job', state: 'running', waiting: null }] };
    const here = await serve(apiSocketPath(p.dir), { '/v1/jobs': p.jobs, '/v1/terminals/far/inbox': p.inbox });
    const there = await serve(hostSocketPath(p.dir, 'box'), { '/v1/terminals/far': detail });
    try {
      const d = await why(p.ctx, 'far');
      expect(d.queue).toEqual([
        { id: 'j-000000000001', work: 'job', state: 'running', waiting: null },
        { id: 'm-0000abcd', work: 'message', state: 'pending', waiting: 'behind job j-000000000001 (running) for far' },
        { id: 'j-000000000002', work: 'job', state: 'queued', waiting: 'behind job j-000000000001 (running) for far' },
      ]);
    } finally {
      await close(here);
      await close(there);
    }
  });

  it("the host out of reach: E_SSH with the connection's state and what waits here for it", async () => {
    const p = await project();
    p.jobs[0]!.waiting = 'waits for host box: the connection is retrying in 8 s (the connection dropped)';
    const health = { hosts: [{ name: 'box', ssh: 'me@box', state: 'retrying', detail: 'retrying in 8 s (the connection dropped)', root: '/srv/p' }] };
    const here = await serve(apiSocketPath(p.dir), { '/v1/jobs': p.jobs, '/v1/terminals/far/inbox': p.inbox, '/v1/health': health });
    try {
      const e = await why(p.ctx, 'far').catch((x: unknown) => x);
      expect(e).toMatchObject({ code: 'E_SSH' });
      expect((e as Error).message.split('\n')).toEqual([
        expect.stringMatching(
          /^host box: its supervisor does not answer through .*box\.sock \(the connection is retrying in 8 s \(the connection dropped\)\)$/,
        ),
        '3 items for far wait here:',
        '  j-000000000001 job running: waits for host box: the connection is retrying in 8 s (the connection dropped)',
        '  m-0000abcd message pending: behind job j-000000000001 (running) for far',
        '  j-000000000002 job queued: behind job j-000000000001 (running) for far',
      ]);
    } finally {
      await close(here);
    }
  });
});
