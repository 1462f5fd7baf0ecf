// `jaggers mcp` driven by the MCP SDK's own client, against a live supervisor and fake agents on a real
// tmux server: every tool, the errors (with the API's codes), a supervisor started by the first call,
// and a fake agent that calls `assign` through the MCP server jaggers registered in it (--mcp-config)
// and receives the job's result in its inbox.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HealthView, InboxView, JobView, TerminalView } from '../../src/api/types.js';
import { cliEntry } from '../../src/package-root.js';
import { api, promptsReceived, untilEvent, waitPidGone } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

const TOOLS = [
  'list_agents',
  'status',
  'handoff',
  'assign',
  'wait_job',
  'job_result',
  'send_message',
  'read_inbox',
  'run_workflow',
  'task_status',
  'list_worktrees',
  'worktree_diff',
  'merge_worktree',
  'discard_worktree',
  'gc_worktrees',
  'usage',
  'budgets',
  'raise_budget',
  'read_artifact',
];

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
}

describe('jaggers mcp', () => {
  let rig: Rig;
  let promptsFile: string;
  const clients: Client[] = [];
  const jg = (args: string[], env?: Record<string, string>) => rig.run(args, env ? { env: { ...rig.env, ...env } } : {});
  const terminal = async (agent: string) => (await api(rig).call<TerminalView[]>('GET', '/v1/terminals')).find((t) => t.agent === agent)!;

  /** An MCP client on `jaggers mcp`, as the agent `as` would run it (its JAGGERS_TERMINAL_ID), or as nobody. */
  async function connect(as: { terminalId: string; agent: string } | null): Promise<Client> {
    const env = { ...(rig.env as Record<string, string>) };
    if (as) Object.assign(env, { JAGGERS_TERMINAL_ID: as.terminalId, JAGGERS_AGENT: as.agent });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [cliEntry, '--project', rig.root, 'mcp'], env, stderr: 'pipe' }));
    clients.push(client);
    return client;
  }
  const call = async (c: Client, name: string, args: Record<string, unknown> = {}) => {
    const r = (await c.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as ToolResult;
    return { isError: r.isError === true, json: JSON.parse(r.content[0]!.text) as Record<string, unknown> & { error?: { code: string; message: string } } };
  };
  const ok = async (c: Client, name: string, args: Record<string, unknown> = {}) => {
    const r = await call(c, name, args);
    expect(r.isError, JSON.stringify(r.json)).toBe(false);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool results are JSON the test reads freely
    return r.json as Record<string, any>;
  };

  beforeEach(async () => {
    rig = await Rig.create();
    promptsFile = path.join(rig.root, '..', 'prompts.jsonl');
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '200', '--replies', 'receipt'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'beta', profile: 'fake' },
      ],
    });
    const up = await jg(['up']);
    expect(up.code, up.stderr).toBe(0);
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => {});
    await rig.cleanup();
  });

  it('lists the tools with JSON schemas of their inputs', async () => {
    const c = await connect(null);
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    const handoff = tools.find((t) => t.name === 'handoff')!;
    expect(handoff.inputSchema.required).toEqual(['agent', 'message']);
    expect(Object.keys(handoff.inputSchema.properties ?? {}).sort()).toEqual(['agent', 'message', 'task', 'timeout']);
    expect(c.getServerVersion()?.name).toBe('jaggers');
    expect(c.getInstructions()).toMatch(/-r latest/);
  });

  it('drives every tool as agent alpha: results and messages come back to alpha by its terminal id', async () => {
    const alpha = await terminal('alpha');
    const c = await connect({ terminalId: alpha.terminalId!, agent: 'alpha' });

    const agents = (await ok(c, 'list_agents')).agents as unknown as { agent: string; state: string; you?: boolean }[];
    expect(agents.map((a) => [a.agent, a.you ?? false])).toEqual([
      ['alpha', true],
      ['beta', false],
    ]);
    const whole = await ok(c, 'status');
    expect((whole.you as unknown as { terminalId: string }).terminalId).toBe(alpha.terminalId);
    const beta = await ok(c, 'status', { agent: 'beta' });
    expect(beta.agent).toBe('beta');
    expect(['idle', 'done']).toContain(beta.state);
    expect(beta.screen).toEqual(expect.any(Array));

    // handoff blocks until beta's reply, which quotes the handover file it read.
    const h = await ok(c, 'handoff', { agent: 'beta', message: 'say hello from the MCP test', timeout: 60 });
    expect(h.agent).toBe('beta');
    expect(h.reply).toMatch(/^read \.jaggers\/handover\/turn_1_/m);
    expect(h.reply).toMatch(/answer: say hello from the MCP test/);
    expect(await readFile(path.join(rig.root, h.handoverFile), 'utf8')).toMatch(/^source_agent: alpha$/m);

    // assign returns at once; wait_job and job_result give the reply; the result goes to alpha's inbox.
    const a = await ok(c, 'assign', { agent: 'beta', message: 'count to three', name: 'counting' });
    expect(a.job).toMatch(/^j-[0-9a-f]{12}$/);
    expect(a.resultGoesTo).toBe('alpha');
    const w = await ok(c, 'wait_job', { job: a.job, timeout: 60 });
    expect([w.state, w.timedOut]).toEqual(['done', false]);
    expect(w.reply).toMatch(/answer: count to three/);
    const r = await ok(c, 'job_result', { job: a.job });
    expect([r.state, r.name, r.reply]).toEqual(['done', 'counting', w.reply]);
    const box = await untilEvent(
      api(rig),
      'message',
      async () => {
        const ib = await ok(c, 'read_inbox');
        const m = (ib.messages as unknown as { job: string; state: string; text: string }[]).find((x) => x.job === a.job);
        return m?.state === 'delivered' ? m : null;
      },
      "the job's result delivered to alpha",
    );
    expect(box.text).toMatch(new RegExp(`Job ${a.job} \\(counting\\) that you assigned to beta is done`));

    // send_message: stored and delivered into beta's conversation, from alpha.
    const m = await ok(c, 'send_message', { to: 'beta', text: 'a note for beta' });
    expect(m.message).toMatch(/^m-[0-9a-f]{12}$/);
    const betaBox = await untilEvent(
      api(rig),
      'message',
      async () => {
        const ib = await api(rig).call<InboxView>('GET', '/v1/terminals/beta/inbox');
        const x = ib.messages.find((y) => y.id === m.message);
        return x?.state === 'delivered' ? x : null;
      },
      'the message delivered to beta',
    );
    expect(betaBox.fromAgent).toBe('alpha');
    const own = await ok(c, 'read_inbox', { agent: 'beta', limit: 1 });
    expect((own.messages as unknown as { id: string; text: string }[]).map((x) => [x.id, x.text])).toEqual([[m.message, 'a note for beta']]);

    // run_workflow (waiting) and task_status; read_artifact reads its final answer.
    const t = await ok(c, 'run_workflow', { workflow: 'handoff', task: 'one turn by beta', agents: ['beta'], wait: true, timeout: 120 });
    expect(t.status).toBe('done');
    expect(t.final).toMatch(/^\.jaggers\/handover\/turn_2_[0-9a-f]+\.md$/);
    const s = await ok(c, 'task_status', { task: t.task });
    expect([s.status, (s.turns as unknown[]).length]).toEqual(['done', 1]);
    const art = await ok(c, 'read_artifact', { path: t.final });
    expect(art.text).toMatch(/answer: one turn by beta|one turn by beta/);
    expect([art.size, art.next]).toEqual([Buffer.byteLength(art.text), null]);
    // The task's result comes home to alpha's inbox too.
    await untilEvent(
      api(rig),
      'message',
      async () => {
        const ib = await ok(c, 'read_inbox');
        return (ib.messages as unknown as { text: string }[]).some((x) => x.text.includes(String(t.task))) ? true : null;
      },
      "the task's result in alpha's inbox",
    );
  });

  it('errors are tool errors with the API codes, naming the value', async () => {
    const alpha = await terminal('alpha');
    const c = await connect({ terminalId: alpha.terminalId!, agent: 'alpha' });
    const unknown = await call(c, 'handoff', { agent: 'nobody', message: 'hi' });
    expect(unknown.isError).toBe(true);
    expect(unknown.json.error!.code).toBe('E_AGENT_UNKNOWN');
    expect(unknown.json.error!.message).toMatch(/"nobody".*alpha, beta/);
    const self = await call(c, 'handoff', { agent: 'alpha', message: 'hi' });
    expect([self.json.error!.code, self.json.error!.message]).toEqual(['E_USAGE', expect.stringMatching(/"alpha" is you/)]);
    const bad = await call(c, 'assign', { agent: 'beta', message: '   ' });
    expect([bad.json.error!.code, bad.json.error!.message]).toEqual(['E_USAGE', 'assign: message: must not be empty (got "   ")']);
    const extra = await call(c, 'wait_job', { job: 'j-00000000', tiemout: 1 });
    expect(extra.json.error!.message).toMatch(/unknown field\(s\) tiemout/);
    const noJob = await call(c, 'job_result', { job: 'j-00000000' });
    expect(noJob.json.error!.code).toBe('E_NOT_FOUND');
    const outside = await call(c, 'read_artifact', { path: '../../../etc/passwd' });
    expect([outside.json.error!.code, outside.json.error!.message]).toEqual(['E_FILE_REFUSED', expect.stringMatching(/is outside \.jaggers\//)]);
    const missing = await call(c, 'read_artifact', { path: '.jaggers/handover/nope.md' });
    expect(missing.json.error!.code).toBe('E_NOT_FOUND');
    const wf = await call(c, 'run_workflow', { workflow: 'nope', task: 'x' });
    expect(wf.json.error!.code).toBe('E_WORKFLOW_UNKNOWN');
    // Without a caller, read_inbox needs an agent.
    const anon = await connect(null);
    const who = await call(anon, 'read_inbox');
    expect([who.json.error!.code, who.json.error!.message]).toEqual(['E_USAGE', expect.stringMatching(/no JAGGERS_TERMINAL_ID/)]);
    const unknownTool = await anon.callTool({ name: 'nope', arguments: {} });
    expect(unknownTool.isError).toBe(true);
  });

  it('starts the supervisor when none answers', async () => {
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    process.kill(pid, 'SIGKILL');
    await waitPidGone(pid);
    const c = await connect(null);
    const agents = (await ok(c, 'list_agents')).agents as unknown as { agent: string }[];
    expect(agents.map((a) => a.agent)).toEqual(['alpha', 'beta']);
    expect((await api(rig).call<HealthView>('GET', '/v1/health')).pid).not.toBe(pid);
  });

  it('an agent calls assign through the MCP server jaggers registered in it, and the result comes to its inbox', async () => {
    const alpha = await terminal('alpha');
    // The registration `up` wrote for alpha: claude's --mcp-config shape, alpha's terminal id in the entry.
    const conf = JSON.parse(await readFile(path.join(rig.root, '.jaggers', 'mcp', `${alpha.terminalId}.json`), 'utf8')) as {
      mcpServers: { jaggers: { command: string; args: string[]; env: Record<string, string> } };
    };
    expect(conf.mcpServers.jaggers.env.JAGGERS_TERMINAL_ID).toBe(alpha.terminalId);
    expect(conf.mcpServers.jaggers.args.at(-1)).toBe('mcp');
    // alpha reads the handover, calls the tool, and replies with its result (the job id).
    const h = await jg([
      'handoff',
      'alpha',
      '-m',
      'Please delegate.\nmcp: assign {"agent":"beta","message":"summarize the README","name":"from-alpha"}',
      '--json',
    ]);
    expect(h.code, h.stderr).toBe(0);
    const reply = (JSON.parse(h.stdout) as { reply: { text: string } }).reply.text;
    expect(reply).toMatch(/mcp assign result:/);
    const job = /"job": "(j-[0-9a-f]{12})"/.exec(reply)![1]!;
    const j = await api(rig).call<JobView>('GET', `/v1/jobs/${job}/wait?timeout=60`);
    expect([j.state, j.name, j.from]).toEqual(['done', 'from-alpha', alpha.terminalId]);
    // The result is typed into alpha's conversation once, as an inbox message.
    const m = await untilEvent(
      api(rig),
      'message',
      async () => {
        const ib = await api(rig).call<InboxView>('GET', `/v1/terminals/${alpha.terminalId}/inbox`);
        const x = ib.messages.find((y) => y.job === job);
        return x?.state === 'delivered' ? x : null;
      },
      "the job's result delivered to alpha",
    );
    const toAlpha = (await promptsReceived(promptsFile)).filter((p) => p.agent === 'alpha' && p.prompt.includes(path.basename(m.file)));
    expect(toAlpha).toHaveLength(1);
    expect((await promptsReceived(promptsFile)).filter((p) => p.agent === 'beta' && p.prompt.includes('.jaggers/'))).toHaveLength(1);
  });
});
