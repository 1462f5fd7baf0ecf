// `down` on the hosts `up` started agents on (src/commands/down-hosts.ts) on a fake ssh runner: one run
// of `jaggers down` in each recorded remote project, the record removed once it stopped, kept otherwise.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { downHosts } from '../../src/commands/down-hosts.js';
import type { SshRunner } from '../../src/commands/hosts.js';
import { resolveContext } from '../../src/context.js';
import { tempDirs } from '../helpers/temp-dir.js';

const tempDir = tempDirs('jg-hostdown-');

describe('down on the hosts', () => {
  it("stops each recorded host's session over ssh; a host that fails, or left jaggers.json, keeps its record", async () => {
    const root = await tempDir();
    await writeFile(
      path.join(root, 'jaggers.json'),
      JSON.stringify({
        hosts: { box: { ssh: 'me@box', dir: '/srv/p' }, gpu: { ssh: 'me@gpu', port: 2222, dir: '/g' } },
        agents: [
          { name: 'far', profile: 'demo', host: 'box' },
          { name: 'big', profile: 'demo', host: 'gpu' },
        ],
      }),
    );
    const hosts = path.join(root, '.jaggers', 'hosts');
    await mkdir(hosts, { recursive: true });
    const rec = (r: string) => JSON.stringify({ root: r, socket: `${r}/.jaggers/jaggers.sock`, startedAt: '', agents: [] });
    await writeFile(path.join(hosts, 'box.json'), rec('/srv/p/.jaggers/hosted/s'));
    await writeFile(path.join(hosts, 'gpu.json'), rec('/g/.jaggers/hosted/s'));
    await writeFile(path.join(hosts, 'old.json'), rec('/o/.jaggers/hosted/s'));
    const ctx = await resolveContext({ project: root }, { HOME: root, JAGGERS_SSH: '/opt/ssh' }, root);
    const runs: string[][] = [];
    const run: SshRunner = async (_bin, argv) => {
      runs.push(argv);
      return argv.includes('me@gpu')
        ? { exitCode: 255, stdout: '', stderr: 'ssh: connect to host gpu port 2222: Connection refused\n', spawnError: null }
        : { exitCode: 0, stdout: 'stopped tmux -L jaggers-12345678\n', stderr: '', spawnError: null };
    };
    const r = await downHosts(ctx, run);
    expect(r).toEqual([
      { host: 'box', root: '/srv/p/.jaggers/hosted/s', ok: true, detail: 'stopped tmux -L jaggers-12345678' },
      {
        host: 'gpu',
        root: '/g/.jaggers/hosted/s',
        ok: false,
        detail: expect.stringMatching(/^host gpu \(me@gpu port 2222\): cannot connect \(.*Connection refused/),
      },
      {
        host: 'old',
        root: '/o/.jaggers/hosted/s',
        ok: false,
        detail: expect.stringMatching(/^jaggers.json has no host old any more: stop it there with `jaggers --project \/o/),
      },
    ]);
    expect(runs.find((a) => a.includes('me@box'))?.at(-1)).toBe('jaggers --project /srv/p/.jaggers/hosted/s down');
    expect(runs).toHaveLength(2);
    expect(existsSync(path.join(hosts, 'box.json'))).toBe(false);
    expect(existsSync(path.join(hosts, 'gpu.json'))).toBe(true);
    expect(await downHosts(await resolveContext({ project: await tempDir() }, { HOME: root }, root), run)).toEqual([]);
  });
});
