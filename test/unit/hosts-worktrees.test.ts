// Worktrees made on other hosts, as the local supervisor's /v1/worktrees routes reach them
// (src/hosts/host-worktrees.ts): the list merged with its hosts', an agent's diff, merge and discard asked
// of its host's supervisor, a host down said by name. On fake host supervisors.
import { describe, expect, it } from 'vitest';
import type { WorktreeView } from '../../src/agents/isolation.js';
import { JaggersError } from '../../src/errors.js';
import type { HostSource } from '../../src/hosts/host-agents.js';
import { HostWorktrees } from '../../src/hosts/host-worktrees.js';
import type { HostView } from '../../src/hosts/remote-host.js';

const wt = (name: string): WorktreeView => ({
  name,
  path: `/x/${name}`,
  branch: `jaggers/${name}`,
  agent: name,
  job: null,
  inUse: true,
  status: null,
  problem: null,
});

function host(name: string, state: HostView['state'], answers: Record<string, unknown>) {
  const calls: { method: string; path: string; body: unknown }[] = [];
  const src: HostSource = {
    name,
    view: () => ({ name, ssh: `u@${name}`, state, detail: state === 'connected' ? 'connected' : 'retrying in 4 s (the connection dropped)', root: '/r' }),
    recorded: async () => [],
    api: {
      call: async <T>(method: string, path: string, body?: unknown): Promise<T> => {
        calls.push({ method, path, body });
        if (!(path in answers)) throw new JaggersError('E_SUPERVISOR_DOWN', `nobody at ${path}`);
        return answers[path] as T;
      },
    },
    socketPath: `/s/${name}.sock`,
    onState: () => () => {},
  };
  return { src, calls };
}

describe('worktrees on other hosts, through the local supervisor', () => {
  it("lists this machine's, then each connected host's with its host; a host down is left out", async () => {
    const box = host('box', 'connected', { '/v1/worktrees': [wt('iso')] });
    const gpu = host('gpu', 'retrying', { '/v1/worktrees': [wt('never')] });
    const w = new HostWorktrees({ local: async () => [wt('coder')], hosts: () => [box.src, gpu.src], hostOf: async () => null });
    expect((await w.list()).map((x) => [x.name, x.host])).toEqual([
      ['coder', undefined],
      ['iso', 'box'],
    ]);
    expect(gpu.calls).toEqual([]);
  });

  it("lists the hosts' when this machine's project is outside git; without hosts that is the error it was", async () => {
    const notRepo = async (): Promise<WorktreeView[]> => {
      throw new JaggersError('E_NOT_A_REPO', '/p is not in a git repository');
    };
    const box = host('box', 'connected', { '/v1/worktrees': [wt('iso')] });
    expect((await new HostWorktrees({ local: notRepo, hosts: () => [box.src], hostOf: async () => null }).list()).map((x) => x.name)).toEqual(['iso']);
    await expect(new HostWorktrees({ local: notRepo, hosts: () => [], hostOf: async () => null }).list()).rejects.toMatchObject({ code: 'E_NOT_A_REPO' });
  });

  it("asks an agent's host for its diff, merge and discard (host in the answer); this machine's agents are not its business", async () => {
    const box = host('box', 'connected', {
      '/v1/worktrees/iso/diff?patch=1&uncommitted=0': { name: 'iso', files: [] },
      '/v1/worktrees/iso/merge': { name: 'iso', status: 'merged' },
    });
    const w = new HostWorktrees({ local: async () => [], hosts: () => [box.src], hostOf: async (a) => (a === 'iso' ? 'box' : null) });
    expect(await w.onHost('iso', 'GET', (n) => `/v1/worktrees/${n}/diff?patch=1&uncommitted=0`)).toEqual({ name: 'iso', files: [], host: 'box' });
    expect(await w.onHost('iso', 'POST', (n) => `/v1/worktrees/${n}/merge`, { mode: 'squash' })).toEqual({ name: 'iso', status: 'merged', host: 'box' });
    expect(box.calls.map((c) => [c.method, c.path, c.body])).toEqual([
      ['GET', '/v1/worktrees/iso/diff?patch=1&uncommitted=0', undefined],
      ['POST', '/v1/worktrees/iso/merge', { mode: 'squash' }],
    ]);
    expect(await w.onHost('coder', 'GET', (n) => `/v1/worktrees/${n}/diff`)).toBeNull();
  });

  it("gc: this machine's, then each connected host's (removed and kept with its host); a host down left out; outside git here, the hosts' all the same", async () => {
    const box = host('box', 'connected', { '/v1/worktrees/gc': { removed: [{ name: 'j-old' }], kept: [{ name: 'iso', why: 'in use' }] } });
    const gpu = host('gpu', 'retrying', { '/v1/worktrees/gc': { removed: [{ name: 'never' }], kept: [] } });
    const w = new HostWorktrees({ local: async () => [], hosts: () => [box.src, gpu.src], hostOf: async () => null });
    const here = async () => ({ removed: [{ name: 'coder' }] as { name: string; host?: string }[], kept: [] as { name: string; host?: string }[] });
    expect(await w.gc(here, true)).toEqual({
      removed: [{ name: 'coder' }, { name: 'j-old', host: 'box' }],
      kept: [{ name: 'iso', why: 'in use', host: 'box' }],
    });
    expect(box.calls).toEqual([{ method: 'POST', path: '/v1/worktrees/gc', body: { force: true } }]);
    expect(gpu.calls).toEqual([]);
    const notRepo = async (): Promise<{ removed: object[]; kept: object[] }> => {
      throw new JaggersError('E_NOT_A_REPO', '/p is not in a git repository');
    };
    expect((await w.gc(notRepo, false)).removed).toEqual([{ name: 'j-old', host: 'box' }]);
    await expect(new HostWorktrees({ local: async () => [], hosts: () => [], hostOf: async () => null }).gc(notRepo, false)).rejects.toMatchObject({
      code: 'E_NOT_A_REPO',
    });
  });

  it('says which host and why when the host cannot be asked', async () => {
    const gpu = host('gpu', 'retrying', {});
    const w = new HostWorktrees({
      local: async () => [],
      hosts: () => [gpu.src],
      hostOf: async (a) => (a === 'far' ? 'gpu' : a === 'lost' ? 'nowhere' : null),
    });
    await expect(w.onHost('far', 'POST', (n) => `/v1/worktrees/${n}/merge`)).rejects.toMatchObject({
      code: 'E_SSH',
      message: 'far is an agent on host gpu: the connection is retrying in 4 s (the connection dropped)',
    });
    await expect(w.onHost('lost', 'GET', (n) => `/v1/worktrees/${n}/diff`)).rejects.toMatchObject({
      code: 'E_SSH',
      message: 'lost is an agent on host nowhere, and this supervisor keeps no connection to it (run `jaggers up`)',
    });
    expect(gpu.calls).toEqual([]);
  });
});
