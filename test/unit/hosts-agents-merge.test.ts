// The hosts' agents in the local supervisor's views (src/hosts/host-agents.ts) and MCP's list_agents and
// status (src/mcp/tools.ts), on fakes: a host up lists its agents with `host`, a host down (or whose
// supervisor does not answer) is one entry saying so and never hides the local agents, and a name on
// two machines is kept on both, each saying where else it runs.
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HostAgentsView, TerminalDetail, TerminalView } from '../../src/api/types.js';
import { JaggersError } from '../../src/errors.js';
import { allHostAgents, describeHostDown, hostAgents, mergeAgents, type HostSource } from '../../src/hosts/host-agents.js';
import type { HostView } from '../../src/hosts/remote-host.js';
import { callTool } from '../../src/mcp/server.js';
import type { ToolDeps } from '../../src/mcp/tools.js';
import { registerHostRoutes } from '../../src/web/host-routes.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { terminalView } from '../helpers/terminal-view.js';

const temp = tempDirs('jg-hostagents-');

const view = terminalView;

/** A host whose connection is `state`, whose supervisor answers `answer` (or fails with it, or never answers). */
function fakeHost(name: string, state: HostView['state'], answer: TerminalView[] | Error | 'hang', recorded: string[] = []): HostSource {
  const detail = state === 'connected' ? 'connected' : 'retrying in 8 s (the connection dropped: ssh exited 255)';
  return {
    name,
    view: () => ({ name, ssh: `me@${name}`, state, detail, root: '/r' }),
    recorded: async () => recorded,
    socketPath: `/nowhere/${name}.sock`,
    api: {
      call: <T>(_m: string, p: string, _b?: unknown, o?: { signal?: AbortSignal }) => {
        expect(p).toBe('/v1/terminals');
        if (answer === 'hang')
          return new Promise<T>((_, reject) =>
            o?.signal?.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'TimeoutError' }))),
          );
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as T);
      },
    },
    onState: () => () => {},
  };
}

describe("the hosts' agents in the views", () => {
  it('a host up lists its agents with `host`; a host down names its state and the agents of its record; one that does not answer says so', async () => {
    const views = await allHostAgents(
      [
        fakeHost('box', 'connected', [view('far', { state: 'busy' })]),
        fakeHost('gpu', 'retrying', [], ['trainer']),
        fakeHost('slow', 'connected', 'hang', ['sleepy']),
        fakeHost('odd', 'connected', new JaggersError('E_SUPERVISOR_DOWN', 'no supervisor answers at /x.sock (ECONNREFUSED)'), ['lost']),
      ],
      50,
    );
    expect(views.map((v) => [v.host, v.state, v.agents?.map((a) => [a.agent, a.host, a.state]) ?? null, v.names, v.problem])).toEqual([
      ['box', 'connected', [['far', 'box', 'busy']], ['far'], null],
      ['gpu', 'retrying', null, ['trainer'], 'the connection is retrying in 8 s (the connection dropped: ssh exited 255)'],
      ['slow', 'connected', null, ['sleepy'], 'its supervisor did not answer (no answer within 50 ms)'],
      ['odd', 'connected', null, ['lost'], 'its supervisor did not answer (no supervisor answers at /x.sock (ECONNREFUSED))'],
    ]);
    expect(describeHostDown(views[1]!)).toBe(
      'host gpu: the connection is retrying in 8 s (the connection dropped: ssh exited 255); its agents (trainer) are not shown',
    );
  });

  it('merges the local agents, then the hosts’; a name on two machines stays on both, each saying where else it runs', async () => {
    const box = await hostAgents(fakeHost('box', 'connected', [view('far'), view('near'), view('w', { task: 't-1' })]));
    const gpu = await hostAgents(fakeHost('gpu', 'connected', [view('far')]));
    const down = await hostAgents(fakeHost('down', 'lost', []));
    const rows = mergeAgents([view('near'), view('w')], [box, gpu, down]);
    expect(rows.map((r) => [r.agent, r.task, r.host ?? '-', r.alsoOn ?? []])).toEqual([
      ['near', null, '-', ['box']],
      ['w', null, '-', []],
      ['far', null, 'box', ['gpu']],
      ['near', null, 'box', ['this machine']],
      // A task's window is another name than its agent's.
      ['w', 't-1', 'box', []],
      ['far', null, 'gpu', ['box']],
    ]);
  });
});

describe('GET /v1/hosts/terminals', () => {
  it('each host kept, up or down, then each host of a record the supervisor keeps no connection to', async () => {
    const app = Fastify();
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    registerHostRoutes(app, {
      hosts: () => [fakeHost('box', 'connected', [view('far')]), fakeHost('gpu', 'lost', [], ['trainer'])],
      unkept: () => [{ host: 'old', agents: ['gone'] }],
    });
    const res = await app.inject({ method: 'GET', url: '/v1/hosts/terminals' });
    expect(res.statusCode).toBe(200);
    const hosts = res.json<HostAgentsView[]>();
    expect(hosts.map((h) => [h.host, h.state, h.agents?.map((t) => `${t.agent}@${t.host}`) ?? null, h.names, h.problem])).toEqual([
      ['box', 'connected', ['far@box'], ['far'], null],
      ['gpu', 'lost', null, ['trainer'], 'the connection is retrying in 8 s (the connection dropped: ssh exited 255)'],
      ['old', 'closed', null, ['gone'], 'the supervisor keeps no connection to it (`jaggers up` connects again)'],
    ]);
    await app.close();
  });
});

describe("MCP's list_agents and status with hosts", () => {
  /** Deps whose API answers the local agents and the hosts' entries (or fails the hosts' route). */
  function deps(jaggersDir: string, hosts: HostAgentsView[] | Error, detail?: TerminalDetail): ToolDeps & { asked: string[] } {
    const asked: string[] = [];
    return {
      asked,
      call: <T>(method: string, p: string) => {
        asked.push(`${method} ${p}`);
        if (p === '/v1/terminals') return Promise.resolve([view('near', { terminalId: 'jg-me' })] as T);
        if (p === '/v1/hosts/terminals') return hosts instanceof Error ? Promise.reject(hosts) : Promise.resolve(hosts as T);
        if (p.startsWith('/v1/hosts/box/terminals/') && detail) return Promise.resolve(detail as T);
        if (p === '/v1/health') return Promise.resolve({ session: 's', project: '/p' } as T);
        if (p === '/v1/jobs' || p === '/v1/tasks') return Promise.resolve([] as T);
        return Promise.reject(new JaggersError('E_AGENT_UNKNOWN', `no ${p}`));
      },
      caller: { terminalId: 'jg-me', agent: 'near', task: null },
      projectRoot: path.dirname(jaggersDir),
      jaggersDir,
    };
  }
  const json = async (d: ToolDeps, tool: string, args: Record<string, unknown> = {}) => {
    const r = await callTool(d, tool, args);
    return { isError: r.isError === true, json: JSON.parse((r.content[0] as { text: string }).text) as Record<string, unknown> };
  };

  it('list_agents: a host up adds its agents with `host`; a host down is said in `hosts`, the local agents listed as ever', async () => {
    const up = await hostAgents(fakeHost('box', 'connected', [view('far', { state: 'busy' })]));
    const down = await hostAgents(fakeHost('gpu', 'retrying', [], ['trainer']));
    const r = await json(deps('/p/.jaggers', [up, down]), 'list_agents');
    expect(r.isError).toBe(false);
    expect(r.json).toEqual({
      agents: [
        { agent: 'near', terminalId: 'jg-me', task: null, profile: 'demo', state: 'idle', since: null, you: true },
        { agent: 'far', terminalId: 'jg-far', task: null, profile: 'demo', state: 'busy', since: null, host: 'box' },
      ],
      hosts: [
        { host: 'box', state: 'connected', detail: 'connected', agents: ['far'], shown: true },
        {
          host: 'gpu',
          state: 'retrying',
          detail: 'retrying in 8 s (the connection dropped: ssh exited 255)',
          agents: ['trainer'],
          shown: false,
          problem: 'host gpu: the connection is retrying in 8 s (the connection dropped: ssh exited 255); its agents (trainer) are not shown',
        },
      ],
    });
  });

  it('list_agents: no hosts, no `hosts`; the hosts’ route failing is said, never an error that hides the local agents; a task’s list asks no host', async () => {
    expect((await json(deps('/p/.jaggers', []), 'list_agents')).json).toEqual({ agents: [expect.objectContaining({ agent: 'near', you: true })] });
    const failing = await json(deps('/p/.jaggers', new JaggersError('E_SUPERVISOR_DOWN', 'it went away')), 'list_agents');
    expect(failing.isError).toBe(false);
    expect(failing.json).toEqual({ agents: [expect.objectContaining({ agent: 'near' })], hostsError: "the hosts' agents could not be asked: it went away" });
    const d = deps('/p/.jaggers', []);
    await json(d, 'list_agents', { task: 't-1' });
    expect(d.asked).toEqual(['GET /v1/terminals?task=t-1']);
  });

  it('list_agents: a name clashing between this machine and a host is listed on both with `alsoOn`', async () => {
    const box = await hostAgents(fakeHost('box', 'connected', [view('near', { terminalId: 'jg-other' })]));
    const r = await json(deps('/p/.jaggers', [box]), 'list_agents');
    expect((r.json.agents as { agent: string; host?: string; alsoOn?: string[] }[]).map((a) => [a.agent, a.host ?? '-', a.alsoOn])).toEqual([
      ['near', '-', ['box']],
      ['near', 'box', ['this machine']],
    ]);
  });

  it('status of a host agent asks its host’s supervisor through the local one (the agent’s host by its record); status of all has the hosts', async () => {
    const dir = path.join(await temp(), '.jaggers');
    await mkdir(path.join(dir, 'hosts'), { recursive: true });
    await writeFile(path.join(dir, 'hosts', 'box.json'), JSON.stringify({ root: '/r', socket: '/r/s', startedAt: '', agents: ['far'] }));
    const detail = { ...view('far'), now: { status: 'idle', rule: null, screenLines: ['> hello'] } } as unknown as TerminalDetail;
    const d = deps(dir, [await hostAgents(fakeHost('box', 'connected', [view('far')]))], detail);
    const one = await json(d, 'status', { agent: 'far' });
    expect(one.json).toMatchObject({ agent: 'far', host: 'box', screen: ['> hello'] });
    expect(d.asked).toEqual(['GET /v1/hosts/box/terminals/far']);
    const all = await json(d, 'status');
    expect((all.json.agents as { agent: string; host?: string }[]).map((a) => [a.agent, a.host ?? '-'])).toEqual([
      ['near', '-'],
      ['far', 'box'],
    ]);
    expect(all.json.hosts).toEqual([{ host: 'box', state: 'connected', detail: 'connected', agents: ['far'], shown: true }]);
  });
});
