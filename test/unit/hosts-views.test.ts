// Agents on other hosts in the client commands (src/api/hosts.ts, `status` and `ls`): which host an
// agent is on, by the records `up` leaves in .jaggers/hosts/, and the HOST column once one is there.
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostOfAgent, startedHosts } from '../../src/api/hosts.js';
import { hostSocketPath } from '../../src/api/paths.js';
import { remoteAttachArgs } from '../../src/commands/attach.js';
import { agentRows, renderAgents } from '../../src/commands/ls.js';
import { resolveContext } from '../../src/context.js';
import { socketNameFor } from '../../src/tmux/server.js';
import { renderStatus, type AgentStatusRow } from '../../src/commands/status.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { terminalView } from '../helpers/terminal-view.js';

const temp = tempDirs('jg-hostviews-');

const view = terminalView;

describe('agents on other hosts in the views', () => {
  it('finds an agent’s host by the records, a task’s window by its agent; a broken record is skipped', async () => {
    const dir = path.join(await temp(), '.jaggers');
    expect(startedHosts(dir)).toEqual([]);
    await mkdir(path.join(dir, 'hosts'), { recursive: true });
    await writeFile(path.join(dir, 'hosts', 'box.json'), JSON.stringify({ root: '/r', socket: '/r/s', startedAt: '', agents: ['far', 'farther'] }));
    await writeFile(path.join(dir, 'hosts', 'gpu.json'), '{not json');
    await writeFile(path.join(dir, 'hosts', 'box.sock'), '');
    expect(startedHosts(dir)).toEqual([{ host: 'box', root: '/r', agents: ['far', 'farther'] }]);
    expect(hostOfAgent({ jaggersDir: dir }, 'farther')?.host).toBe('box');
    expect(hostOfAgent({ jaggersDir: dir }, 'far+t-1')?.host).toBe('box');
    expect(hostOfAgent({ jaggersDir: dir }, 'near')).toBeNull();
  });

  it('status and ls get a HOST column once an agent is on another host, and keep their columns otherwise', () => {
    const rows: AgentStatusRow[] = [
      { ...view('near'), from: 'supervisor' },
      { ...view('far', { state: 'busy' }), from: 'supervisor', host: 'box' },
    ];
    expect(renderStatus(rows).split('\n').slice(0, 3)).toEqual([
      expect.stringMatching(/^AGENT +HOST +STATE +SINCE/),
      expect.stringMatching(/^near +- +idle/),
      expect.stringMatching(/^far +box +busy/),
    ]);
    expect(renderStatus([rows[0]!])).toMatch(/^AGENT +STATE +SINCE/);
    const ls = renderAgents(agentRows(rows));
    expect(ls).toMatch(/^AGENT +HOST +TERMINAL/);
    expect(ls).toMatch(/^far +box +jg-far +demo +1 \(@1\) +42 +busy/m);
    expect(agentRows(rows)[1]).toMatchObject({ agent: 'far', host: 'box' });
    expect(agentRows(rows)[0]).not.toHaveProperty('host');
    expect(renderAgents(agentRows([rows[0]!]))).toMatch(/^AGENT +TERMINAL/);
  });
});

describe('attach to an agent on another host', () => {
  it("is ssh -t to the host, running its project's tmux attach at the window its supervisor names", async () => {
    const root = await temp();
    await writeFile(
      path.join(root, 'jaggers.json'),
      JSON.stringify({ hosts: { box: { ssh: 'me@box', port: 2222, dir: '/srv/p' } }, agents: [{ name: 'far', profile: 'demo', host: 'box' }] }),
    );
    const dir = path.join(root, '.jaggers');
    await mkdir(path.join(dir, 'hosts'), { recursive: true, mode: 0o700 });
    const remoteRoot = '/srv/p/.jaggers/hosted/web';
    await writeFile(path.join(dir, 'hosts', 'box.json'), JSON.stringify({ root: remoteRoot, socket: '/x', startedAt: '', agents: ['far'] }));
    const asked: string[] = [];
    const server = http.createServer((req, res) => {
      asked.push(`${req.method} ${req.url} ${req.headers['x-jaggers-session']}`);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(view('far', { window: '@3' })));
    });
    await new Promise<void>((r) => server.listen(hostSocketPath(dir, 'box'), r));
    try {
      const ctx = await resolveContext({ session: 'web' }, { JAGGERS_SSH: '/usr/bin/ssh', HOME: '/home/me' }, root);
      const a = await remoteAttachArgs(ctx, 'far', true);
      expect(asked).toEqual(['GET /v1/terminals/far web']);
      expect(a).toEqual({
        bin: '/usr/bin/ssh',
        args: [
          '-o',
          'BatchMode=yes',
          '-o',
          'StrictHostKeyChecking=yes',
          '-o',
          'ConnectTimeout=10',
          '-p',
          '2222',
          '-t',
          '--',
          'me@box',
          `tmux -L ${socketNameFor(remoteRoot)} attach-session -t =web:@3 -r`,
        ],
      });
      expect(await remoteAttachArgs(ctx, 'near', false)).toBeNull();
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
