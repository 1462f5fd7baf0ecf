// A supervisor per host (docs/hosts.md), against a real sshd on loopback (test/helpers/sshd.ts): `up`
// with an agent on host `box` starts, over the local supervisor's connection, `jaggers supervise` there
// as the host's user (a throwaway user: its processes prove they ran through SSH), forwards its API to
// `.jaggers/hosts/box.sock`, and keeps the connection through a cut; `down` stops it there.
// The remote user runs this checkout's node and dist/ (both readable by anyone) through a `jaggers`
// wrapper on its PATH; its tmux servers live in a folder of the test (TMUX_TMPDIR), never the user's.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execa } from 'execa';
import type { Browser } from 'playwright-core';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { chown, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { hostSocketPath } from '../../src/api/paths.js';
import type { HandoffResult, HealthView, HostAgentsView, InboxView, JobResultView, JobView, MessageView, TerminalView } from '../../src/api/types.js';
import { remoteAttachArgs } from '../../src/commands/attach.js';
import type { DiffView, WorktreeView } from '../../src/commands/worktrees.js';
import { watchStates } from '../../src/commands/watch.js';
import { resolveContext } from '../../src/context.js';
import { shellQuote } from '../../src/hosts/ssh.js';
import { socketNameFor } from '../../src/tmux/server.js';
import { cliEntry } from '../../src/package-root.js';
import { CHROMIUM, launchBrowser } from '../browser/browser.js';
import { api } from '../helpers/api.js';
import { Rig } from '../helpers/rig.js';
import { HOST_ALIAS, hostTeamFile, hostTools, sshdSkipReason, startSshd, until, type SshdRig } from '../helpers/sshd.js';

const skip = sshdSkipReason();

/** What the process runs (its argv), or '' once it is gone. */
function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

describe.skipIf(skip !== null)(`a supervisor per host over ssh${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let sshd: SshdRig;
  let rig: Rig;
  let tools: Awaited<ReturnType<typeof hostTools>>;
  let proj: string;
  let browser: Browser | null = null;
  beforeAll(async () => {
    // The sessions' PATH: `jaggers` and the fake agent, this checkout's, first.
    tools = await hostTools('jgssh');
    sshd = await startSshd({ path: `${tools.bin}:/usr/local/bin:/usr/bin:/bin`, env: { TMUX_TMPDIR: tools.tmuxDir } });
    rig = await Rig.create();
    proj = path.join(sshd.home, 'proj');
    await mkdir(proj);
    await chown(proj, sshd.uid, sshd.gid);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await rig?.run(['down'], { env: env() }).catch(() => {});
    await rig?.cleanup();
    await sshd?.stop();
    await tools?.remove();
  }, 60_000);

  const env = () => ({ ...rig.env, JAGGERS_SSH_CONFIG: sshd.configFile });

  it('up starts the host supervisor as its user, forwards its API here, keeps the connection through a cut; down stops it there', async () => {
    await writeFile(path.join(rig.root, 'jaggers.json'), hostTeamFile(proj, ['--boot-ms', '50']));
    const up = await rig.run(['up'], { env: env() });
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);
    expect(up.stdout).toMatch(/ near +jg-\w+ +@\d+ +started +idle/);
    expect(up.stdout).toMatch(/ far +jg-\w+ +@\d+ +started +on box +idle/);

    // The remote project: its own folder under dir, its jaggers.json written from the agents on box.
    const root = path.join(proj, '.jaggers', 'hosted', rig.session);
    const written = JSON.parse(readFileSync(path.join(root, 'jaggers.json'), 'utf8')) as Record<string, unknown>;
    expect(written).toEqual({
      session: rig.session,
      agents: [{ name: 'far', profile: 'demo', args: ['--boot-ms', '50'], env: {}, cwd: proj }],
      // The rest of the team, whom far may message (through that supervisor's outbox).
      home: { agents: ['near'] },
    });

    // Its supervisor and its agent run as the host's user: started through ssh.
    const theirs = sshd.userProcesses().map((pid) => ({ pid, cmd: cmdline(pid) }));
    expect(theirs.some((p) => p.cmd.includes('supervise') && p.cmd.includes(root))).toBe(true);
    expect(theirs.some((p) => p.cmd.includes('jaggers-fake-agent'))).toBe(true);

    // Its API, forwarded here: the same client, the remote supervisor's agents.
    const sock = hostSocketPath(path.join(rig.root, '.jaggers'), 'box');
    const far = new ApiClient({ socketPath: sock }, rig.session);
    const terms = await far.call<TerminalView[]>('GET', '/v1/terminals');
    expect(terms.map((t) => t.agent)).toEqual(['far']);
    const health = await far.call<HealthView>('GET', '/v1/health');
    expect(health.project).toBe(root);
    expect(sshd.userProcesses()).toContain(health.pid);

    // `up` again keeps both, and the host's API still answers through the socket forwarded again.
    const up2 = await rig.run(['up'], { env: env() });
    expect(up2.stderr).toBe('');
    expect(up2.stdout).toMatch(/ far +jg-\w+ +@\d+ +running +on box/);
    expect((await far.call<HealthView>('GET', '/v1/health')).pid).toBe(health.pid);

    // The local supervisor reports the connection.
    const local = api(rig);
    const h = await local.call<HealthView>('GET', '/v1/health');
    expect(h.hosts).toEqual([
      { name: 'box', ssh: HOST_ALIAS, state: 'connected', detail: 'connected', root, supervisor: { state: 'answering', detail: 'answering', restarts: 0 } },
    ]);

    // The views: a HOST column; `why`, `capture` and `send` reach the agent through its host's API.
    const ctx0 = await resolveContext({}, env(), rig.root);
    const st0 = await rig.run(['status'], { env: env() });
    expect(st0.stderr).toBe('');
    expect(st0.stdout).toMatch(/^AGENT +HOST +STATE/);
    expect(st0.stdout).toMatch(/^near +- +idle/m);
    expect(st0.stdout).toMatch(/^far +box +idle/m);
    const rows = JSON.parse((await rig.run(['status', '--json'], { env: env() })).stdout) as { agent: string; host?: string }[];
    expect(rows.map((r) => [r.agent, r.host ?? null])).toEqual([
      ['near', null],
      ['far', 'box'],
    ]);
    expect((await rig.run(['ls'], { env: env() })).stdout).toMatch(/^far +box +jg-\w+ +demo +1 \(@\d+\) +\d+ +idle/m);
    const why = await rig.run(['why', 'far'], { env: env() });
    expect(why.stdout).toMatch(/^far is idle/);
    const sent = await rig.run(['send', 'far', 'hello from here'], { env: env() });
    expect(sent.stderr).toBe('');
    expect(sent.stdout).toMatch(/to far/);
    await until('the reply on the remote screen', async () => {
      const cap = await rig.run(['capture', 'far'], { env: env() });
      // The demo agent's answer, in the folder the host's agents work in (`dir`).
      return /> hello from here\n.*Read it: 3 words/s.test(cap.stdout) && cap.stdout.includes(`cwd ${proj}`) ? cap : undefined;
    });
    // `status --watch` redraws on the host's state events too (a send to far changes nothing here).
    const stop = new AbortController();
    let draws = 0;
    const watching = watchStates(ctx0, async () => void draws++, stop.signal);
    try {
      await until('the first draw', async () => (draws > 0 ? draws : undefined));
      const before = draws;
      expect((await rig.run(['send', 'far', 'watch me'], { env: env() })).code).toBe(0);
      await until('a redraw for the host agent', async () => (draws > before ? draws : undefined));
    } finally {
      stop.abort();
      await watching;
    }
    // Only the host's agent saw them: the local one did not.
    expect((await rig.run(['capture', 'near'], { env: env() })).stdout).not.toContain('hello from here');

    // The dashboard's and MCP's views (docs/web.md, docs/mcp.md): the local supervisor asks the host's.
    const hostsNow = await local.call<HostAgentsView[]>('GET', '/v1/hosts/terminals');
    expect(hostsNow.map((x) => [x.host, x.state, x.agents?.map((t) => [t.agent, t.host]), x.problem])).toEqual([['box', 'connected', [['far', 'box']], null]]);
    expect(await local.call<TerminalView & { host: string }>('GET', '/v1/hosts/box/terminals/far')).toMatchObject({ agent: 'far', host: 'box' });
    // The same route on the dashboard's listener (its gate takes the API's token as well as the page's cookie).
    const opened = await local.call<{ address: string }>('POST', '/v1/web', {});
    const token = readFileSync(path.join(rig.root, '.jaggers', 'token'), 'utf8').trim();
    const viaWeb = await fetch(`http://${opened.address}/v1/hosts/terminals`, { headers: { authorization: `Bearer ${token}` } });
    expect(viaWeb.status).toBe(200);
    expect(((await viaWeb.json()) as HostAgentsView[])[0]?.agents?.map((t) => t.agent)).toEqual(['far']);
    // Its state events, passed on with `host`; its live terminal, passed on from the host's supervisor.
    const seen: { type: string; data: Record<string, unknown> }[] = [];
    const follow = new AbortController();
    const following = local.events('/v1/hosts/events', (e) => void seen.push({ type: e.type, data: e.data }), { signal: follow.signal });
    try {
      await until('the host connection said', async () => (seen.some((e) => e.type === 'host' && e.data.state === 'connected') ? true : undefined));
      await until('the host stream following', async () => (seen.some((e) => e.type === 'host-hello') ? true : undefined));
      expect((await rig.run(['send', 'far', 'seen from the dashboard'], { env: env() })).code).toBe(0);
      await until('a host-state event for far', async () =>
        seen.some((e) => e.type === 'host-state' && e.data.agent === 'far' && e.data.host === 'box') ? true : undefined,
      );
    } finally {
      follow.abort();
      await following;
    }
    const frames: string[] = [];
    const tapping = new AbortController();
    const tapped = local.events('/v1/hosts/box/terminals/far/stream', (e) => void frames.push(e.type), { signal: tapping.signal });
    await until('the remote terminal snapshot', async () => (frames.includes('snapshot') ? true : undefined));
    tapping.abort();
    await tapped;
    // list_agents of `jaggers mcp` here: the host's agent with its host.
    const mcp = new Client({ name: 'test', version: '1.0.0' });
    await mcp.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cliEntry, '--project', rig.root, 'mcp'],
        env: env() as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    try {
      const listed = (await mcp.callTool({ name: 'list_agents', arguments: {} })) as { content: { text: string }[] };
      const answer = JSON.parse(listed.content[0]!.text) as { agents: { agent: string; host?: string }[]; hosts: { host: string; shown: boolean }[] };
      expect(answer.agents.map((x) => [x.agent, x.host ?? '-'])).toEqual([
        ['near', '-'],
        ['far', 'box'],
      ]);
      expect(answer.hosts).toEqual([{ host: 'box', state: 'connected', detail: 'connected', agents: ['far'], shown: true }]);
      // MCP's assign and wait_job to the host's agent: the job forwarded there, its reply back here.
      const given = (await mcp.callTool({ name: 'assign', arguments: { agent: 'far', message: 'a job given through MCP' } })) as {
        content: { text: string }[];
      };
      const job = (JSON.parse(given.content[0]!.text) as { job: string }).job;
      const waited = (await mcp.callTool({ name: 'wait_job', arguments: { job, timeout: 60 } })) as { content: { text: string }[] };
      const end = JSON.parse(waited.content[0]!.text) as { state: string; agent: string; reply: string; replyFile: string };
      expect(end, waited.content[0]!.text).toMatchObject({ state: 'done', agent: 'far', replyFile: `.jaggers/jobs/${job}.reply.md` });
      expect(end.reply).toContain('a job given through MCP');
      // MCP's handoff and send_message to it.
      const handed = (await mcp.callTool({ name: 'handoff', arguments: { agent: 'far', message: 'a handoff through MCP', timeout: 60 } })) as {
        content: { text: string }[];
        isError?: boolean;
      };
      expect(handed.isError, handed.content[0]!.text).toBeFalsy();
      expect((JSON.parse(handed.content[0]!.text) as { reply: string }).reply).toContain('a handoff through MCP');
      const sent = (await mcp.callTool({ name: 'send_message', arguments: { to: 'far', text: 'a note through MCP' } })) as {
        content: { text: string }[];
        isError?: boolean;
      };
      expect(sent.isError, sent.content[0]!.text).toBeFalsy();
      const note = (JSON.parse(sent.content[0]!.text) as { message: string }).message;
      await until('the note delivered there', async () => {
        const v = JSON.parse((await rig.run(['inbox', 'far', '--json'], { env: env() })).stdout) as InboxView;
        return v.messages.find((m) => m.id === note)?.state === 'delivered' ? true : undefined;
      });
    } finally {
      await mcp.close();
    }
    // The dashboard in a browser (Debian's Chromium, where there is one): far's card, named by its host,
    // its terminal streamed from the host; the page notes a card for the host down (the cut below).
    browser = existsSync(CHROMIUM) ? await launchBrowser(CHROMIUM) : null;
    const page = browser ? await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage() : null;
    if (page) {
      await page.goto((await local.call<{ url: string }>('POST', '/v1/web', {})).url);
      const farCard = page.locator('article.card[data-agent="far@box"][data-host="box"]');
      await farCard.waitFor({ timeout: 15_000 });
      expect(await farCard.locator('.meta').textContent()).toMatch(/^on box · demo · for /);
      await page.locator('article.card[data-agent="near"]').waitFor();
      await page.evaluate(
        `new MutationObserver(() => { if (document.querySelector('article.card.host-down[data-host="box"]')) window.hostDownSeen = true; }).observe(document.body, { subtree: true, childList: true })`,
      );
      await page.goto(new URL('/#/terminal/far%40box', page.url()).href);
      await expect.poll(() => page.evaluate('window.jaggers.terminalText()'), { timeout: 15_000, interval: 100 }).toMatch(/seen from the dashboard/);
      // The Work page's forms list far (on box) and send it work through the same routes: a job, a message.
      await page.getByRole('link', { name: 'Work', exact: true }).click();
      await expect
        .poll(() =>
          page.locator('#agent-names option').evaluateAll((os) =>
            os.map((o) => {
              const opt = o as unknown as { value: string; label: string };
              return `${opt.value}|${opt.label}`;
            }),
          ),
        )
        .toEqual(['near|', 'far|far on box']);
      /** Fill a form of the Work page, send it, and give the id its status line names. */
      const submit = async (name: string, fields: Record<string, string>, said: RegExp): Promise<string> => {
        const form = page.getByRole('form', { name });
        for (const [label, value] of Object.entries(fields)) await form.getByLabel(label).fill(value);
        await form.getByRole('button', { name }).click();
        await expect.poll(() => form.getByRole('status').textContent(), { timeout: 15_000 }).toMatch(said);
        return said.exec((await form.getByRole('status').textContent()) ?? '')![1]!;
      };
      const webJob = await submit('Assign a job', { Agent: 'far', Prompt: 'a job for far from the dashboard' }, /^job (j-[0-9a-f]+) recorded/);
      await until("the dashboard's job done here", async () => ((await local.call<JobView>('GET', `/v1/jobs/${webJob}`)).state === 'done' ? true : undefined));
      expect(await local.call<JobView>('GET', `/v1/jobs/${webJob}`)).toMatchObject({ agent: 'far', host: 'box' });
      expect((await far.call<JobView>('GET', `/v1/jobs/${webJob}`)).state).toBe('done');
      // The Jobs table shows it as far@box.
      await page.locator(`tr[data-job="${webJob}"] [data-job-state="done"]`).waitFor({ timeout: 15_000 });
      expect(await page.locator(`tr[data-job="${webJob}"] td`).nth(1).textContent()).toBe('far@box');
      const webMsg = await submit('Send a message', { To: 'far', Message: 'a message for far from the dashboard' }, /^message (m-[0-9a-f]+) sent/);
      await until("the dashboard's message delivered on box", async () =>
        (await far.call<InboxView>('GET', '/v1/terminals/far/inbox')).messages.find((m) => m.id === webMsg && m.state === 'delivered'),
      );
      await page.goto(new URL('/#/', page.url()).href);
      await farCard.waitFor();
    }

    // `attach far`: ssh -t into that host's tmux, at far's window (a terminal of our own: script(1)).
    const a = (await remoteAttachArgs(ctx0, 'far', true))!;
    expect(a.args).toContain('-t');
    const client = spawn('script', ['-qfc', [a.bin, ...a.args].map(shellQuote).join(' '), '/dev/null'], {
      env: { ...env(), TERM: 'xterm' },
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
    try {
      const clients = await until("a client attached there at far's window", async () => {
        const r = await execa(
          'ssh',
          ['-F', sshd.configFile, HOST_ALIAS, `tmux -L ${socketNameFor(root)} list-clients -F '#{client_control_mode} #{session_name} #{window_id}'`],
          {
            reject: false,
          },
        );
        // The host supervisor's own control-mode clients aside.
        const people = r.stdout.split('\n').filter((l) => l.startsWith('0 '));
        return people.length ? people.join('\n') : undefined;
      });
      expect(clients).toBe(`0 ${rig.session} ${terms[0]!.window}`);
    } finally {
      process.kill(-client.pid!, 'SIGTERM');
    }

    // The connection cut (its sshd process ended): the remote supervisor goes on; the local one
    // reconnects with backoff, forwards again, and the same socket answers for the same supervisor.
    // The hosts' events through the cut: the connection's states as they change, then far's state events again.
    const through: { type: string; data: Record<string, unknown> }[] = [];
    const cutWatch = new AbortController();
    const watchingCut = local.events('/v1/hosts/events', (e) => void through.push({ type: e.type, data: e.data }), { signal: cutWatch.signal });
    await until('the hosts stream open', async () => (through.some((e) => e.type === 'host-hello') ? true : undefined));
    expect(sshd.cut()).toBeGreaterThan(0);
    await until('the host seen lost', async () => {
      const v = (await local.call<HealthView>('GET', '/v1/health')).hosts?.[0];
      return v && v.state !== 'connected' ? v : undefined;
    });
    // Meanwhile the views say the host is down, and still list the local agents.
    const downNow = await until('the views saying the host down', async () => {
      const [v] = await local.call<HostAgentsView[]>('GET', '/v1/hosts/terminals');
      return v && v.agents === null ? v : undefined;
    });
    expect(downNow).toMatchObject({ host: 'box', names: ['far'], problem: expect.stringMatching(/^the connection is /) });
    await until('the host connected again', async () => {
      const v = (await local.call<HealthView>('GET', '/v1/health')).hosts?.[0];
      return v?.state === 'connected' ? v : undefined;
    });
    const again = await until('the forwarded socket answering again', () => far.call<HealthView>('GET', '/v1/health'));
    expect(again.pid).toBe(health.pid);
    try {
      await until('the hosts stream following far again', async () => {
        const states = through.filter((e) => e.type === 'host').map((e) => e.data.state);
        const back = states.lastIndexOf('connected');
        return states.slice(0, back).some((x) => x !== 'connected') && through.filter((e) => e.type === 'host-hello').length >= 2 ? states : undefined;
      });
      expect((await rig.run(['send', 'far', 'after the cut'], { env: env() })).code).toBe(0);
      await until('a host-state event after the cut', async () =>
        through.slice(through.map((e) => e.type).lastIndexOf('host-hello')).some((e) => e.type === 'host-state' && e.data.agent === 'far') ? true : undefined,
      );
    } finally {
      cutWatch.abort();
      await watchingCut;
    }
    if (page) {
      // The page showed the host down (its card, its agents' gone), then far's card again once back.
      await expect.poll(() => page.evaluate('window.hostDownSeen === true'), { timeout: 15_000, interval: 100 }).toBe(true);
      await page.locator('article.card[data-agent="far@box"]').waitFor({ timeout: 15_000 });
      expect(await page.locator('article.card.host-down').count()).toBe(0);
      await browser?.close();
      browser = null;
    }

    // The local supervisor killed: the next one (started by the next command) finds the host by its
    // record, connects again and forwards the same socket; nothing is started there again.
    process.kill(h.pid, 'SIGKILL');
    const st = await rig.run(['status'], { env: env() });
    expect(st.code).toBe(0);
    await until('the next local supervisor connected to the host', async () => {
      const v = await local.call<HealthView>('GET', '/v1/health');
      return v.pid !== h.pid && v.hosts?.[0]?.state === 'connected' ? v : undefined;
    });
    expect((await until('the host supervisor answering', () => far.call<HealthView>('GET', '/v1/health'))).pid).toBe(health.pid);

    // `down` stops it there: its tmux server, agent and supervisor, then the local ones.
    const down = await rig.run(['down'], { env: env() });
    expect(down.code).toBe(0);
    expect(down.stdout).toContain(`stopped host box (${root})`);
    await until('the host user processes gone', async () => (sshd.userProcesses().some((p) => /supervise|fake-agent/.test(cmdline(p))) ? undefined : true));
    expect(existsSync(path.join(rig.root, '.jaggers', 'hosts', 'box.json'))).toBe(false);
  }, 120_000);

  it('assign, message and handoff to an agent on box: forwarded to its supervisor, ended here with its reply; a job cut by a dropped connection or a kill -9 here ends once', async () => {
    await writeFile(path.join(rig.root, 'jaggers.json'), hostTeamFile(proj, ['--boot-ms', '50', '--think-ms', '2500']));
    const up = await rig.run(['up'], { env: env() });
    expect(up.code, up.stderr).toBe(0);
    const sock = hostSocketPath(path.join(rig.root, '.jaggers'), 'box');
    const far = new ApiClient({ socketPath: sock }, rig.session);
    const local = api(rig);
    const root = path.join(proj, '.jaggers', 'hosted', rig.session);

    // A job for far: recorded here, run there under the same id, its end and reply copied here.
    const a = await rig.run(['assign', 'far', '-m', 'count the words in this prompt', '--name', 'remote-one'], { env: env() });
    expect(a.code, a.stderr).toBe(0);
    const id = a.stdout.trim();
    expect(id).toMatch(/^j-[0-9a-f]{12}$/);
    const w = await rig.run(['wait', id, '--timeout', '60'], { env: env() });
    expect(w.code, w.stdout + w.stderr).toBe(0);
    const here = JSON.parse((await rig.run(['jobs', '--json'], { env: env() })).stdout) as JobView[];
    const mine = here.find((j) => j.id === id)!;
    expect(mine).toMatchObject({ state: 'done', agent: 'far', host: 'box', name: 'remote-one', reply: `.jaggers/jobs/${id}.reply.md` });
    // Its states there shown here as they changed (each change of reason there is a line of its history).
    const states = mine.history.map((x) => x.state).filter((st, i, all) => st !== all[i - 1]);
    expect(states, JSON.stringify(mine.history)).toEqual(['queued', 'starting', 'running', 'done']);
    expect(mine.history[1]!.reason).toBe('forwarding to far on host box');
    const there = await far.call<JobResultView>('GET', `/v1/jobs/${id}/result`);
    expect(there.reply).toBeTruthy();
    const res = JSON.parse((await rig.run(['result', id, '--json'], { env: env() })).stdout) as JobResultView;
    expect(res.reply).toBe(there.reply);
    expect((await rig.run(['result', id], { env: env() })).stdout).toBe(`${there.reply}\n`);

    // The connection cut while far works on the next one: it waits, goes on once connected, ends once.
    const b = (await rig.run(['assign', 'far', '-m', 'a job cut in the middle'], { env: env() })).stdout.trim();
    await until('the job running there', async () => ((await local.call<JobView>('GET', `/v1/jobs/${b}`)).state === 'running' ? true : undefined));
    expect(sshd.cut()).toBeGreaterThan(0);
    await until('the host seen lost', async () => {
      const v = (await local.call<HealthView>('GET', '/v1/health')).hosts?.[0];
      return v && v.state !== 'connected' ? v : undefined;
    });
    const wb = await rig.run(['wait', b, '--timeout', '60'], { env: env() });
    expect(wb.code, wb.stdout + wb.stderr).toBe(0);
    const jb = await local.call<JobView>('GET', `/v1/jobs/${b}`);
    expect(jb.history.filter((x) => x.state === 'done')).toHaveLength(1);
    const remoteJobs = await far.call<JobView[]>('GET', '/v1/jobs');
    expect(remoteJobs.filter((j) => j.id === b)).toHaveLength(1);
    expect(remoteJobs.filter((j) => j.id === b || j.id === id).map((j) => j.state)).toEqual(['done', 'done']);
    const rb = JSON.parse((await rig.run(['result', b, '--json'], { env: env() })).stdout) as JobResultView;
    expect(rb.reply).toBe((await far.call<JobResultView>('GET', `/v1/jobs/${b}/result`)).reply);

    // The local supervisor killed (-9) while far works on a job: the next one follows it there, once.
    const c = (await rig.run(['assign', 'far', '-m', 'a job through a kill -9 here'], { env: env() })).stdout.trim();
    await until('the job running there', async () => ((await local.call<JobView>('GET', `/v1/jobs/${c}`)).state === 'running' ? true : undefined));
    const before = await local.call<HealthView>('GET', '/v1/health');
    process.kill(before.pid, 'SIGKILL');
    const wc = await rig.run(['wait', c, '--timeout', '60'], { env: env() });
    expect(wc.code, wc.stdout + wc.stderr).toBe(0);
    expect((await local.call<HealthView>('GET', '/v1/health')).pid).not.toBe(before.pid);
    const jc = await local.call<JobView>('GET', `/v1/jobs/${c}`);
    expect(jc.history.filter((x) => x.state === 'done')).toHaveLength(1);
    expect((await far.call<JobView[]>('GET', '/v1/jobs')).filter((j) => j.id === c).map((j) => j.state)).toEqual(['done']);
    expect(JSON.parse((await rig.run(['result', c, '--json'], { env: env() })).stdout).reply).toBe(
      (await far.call<JobResultView>('GET', `/v1/jobs/${c}/result`)).reply,
    );

    // A message to far: stored here, delivered once by the host's supervisor, delivered here then.
    const sentMsg = await rig.run(['message', 'far', '-m', 'a note for far, from here', '--json'], { env: env() });
    expect(sentMsg.code, sentMsg.stderr).toBe(0);
    const msg = JSON.parse(sentMsg.stdout) as MessageView;
    expect(msg).toMatchObject({ toAgent: 'far', to: 'far@box', host: 'box' });
    const inboxHere = await until('the message delivered here', async () => {
      const v = JSON.parse((await rig.run(['inbox', 'far', '--json'], { env: env() })).stdout) as InboxView;
      return v.messages.find((m) => m.id === msg.id)?.state === 'delivered' ? v : undefined;
    });
    expect(inboxHere.messages.find((m) => m.id === msg.id)?.how).toBe('verified');
    const inboxThere = await far.call<InboxView>('GET', '/v1/terminals/far/inbox');
    expect(inboxThere.messages.filter((m) => m.id === msg.id).map((m) => m.state)).toEqual(['delivered']);

    // A handoff to far: its handover file written there (the remote project's), its reply back here.
    const ho = await rig.run(['handoff', 'far', '-m', 'hand this over to far', '--json'], { env: env() });
    expect(ho.code, ho.stderr).toBe(0);
    const hr = JSON.parse(ho.stdout) as HandoffResult;
    expect(hr).toMatchObject({ agent: 'far', terminalId: 'far@box' });
    const hj = await far.call<JobView>('GET', `/v1/jobs/${hr.job}`);
    expect(hj).toMatchObject({ work: 'handoff', state: 'done', task: hr.task });
    expect(existsSync(path.join(root, hj.artifact!))).toBe(true);
    expect(readFileSync(path.join(root, hj.artifact!), 'utf8')).toContain('hand this over to far');
    expect(hr.reply?.text).toBe((await far.call<JobResultView>('GET', `/v1/jobs/${hr.job}/result`)).reply);
    expect(hr.reply?.artifact).toBe(path.join(rig.root, '.jaggers', 'jobs', `${hr.job}.reply.md`));

    // A headless handoff to far: run headless there, in far's conversation pinned there (far's pane is
    // stopped for it and resumed after: a new process in the same session), its reply back here.
    const farBefore = await far.call<TerminalView>('GET', '/v1/terminals/far');
    const hh = await rig.run(['handoff', 'far', '--headless', '-m', 'a headless turn on box', '--json'], { env: env() });
    expect(hh.code, hh.stderr).toBe(0);
    const hhr = JSON.parse(hh.stdout) as HandoffResult;
    expect(hhr).toMatchObject({ agent: 'far', terminalId: 'far@box', delivery: { kind: 'headless' } });
    expect(hhr.reply?.text).toContain('a headless turn on box');
    expect(hhr.reply?.text).toBe((await far.call<JobResultView>('GET', `/v1/jobs/${hhr.job}/result`)).reply);
    const farAfter = await until('far resumed after the headless turn', async () => {
      const v = await far.call<TerminalView>('GET', '/v1/terminals/far');
      return v.state === 'idle' && v.pid !== farBefore.pid ? v : undefined;
    });
    expect(farAfter.sessionId).toBe(farBefore.sessionId);

    // far answers: `jaggers message near` run on box as far (its JAGGERS_TERMINAL_ID), through a login of
    // its own. near is no agent there: the message waits in that supervisor's outbox, and this one takes it home.
    const farId = (await far.call<TerminalView[]>('GET', '/v1/terminals')).find((t) => t.agent === 'far')!.terminalId!;
    const onBox = (text: string) =>
      execa('ssh', [
        '-F',
        sshd.configFile,
        HOST_ALIAS,
        `JAGGERS_TERMINAL_ID=${farId} jaggers --project ${shellQuote(root)} message near -m ${shellQuote(text)} --json`,
      ]);
    const fromFar = JSON.parse((await onBox('the build on box is green')).stdout) as MessageView;
    expect(fromFar).toMatchObject({ toAgent: 'near', to: 'near@home', fromAgent: 'far', outbox: true });
    const atNear = async (id: string) =>
      until(`message ${id} delivered to near here`, async () => {
        const v = JSON.parse((await rig.run(['inbox', 'near', '--json'], { env: env() })).stdout) as InboxView;
        const m = v.messages.filter((x) => x.id === id);
        return m[0]?.state === 'delivered' ? m : undefined;
      });
    const got = await atNear(fromFar.id);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ from: 'far@box', fromAgent: 'far', host: null });
    const file = readFileSync(path.join(rig.root, got[0]!.file), 'utf8');
    expect(file).toMatch(/^from: far \(far@box\)$/m);
    expect(file.endsWith('\nthe build on box is green')).toBe(true);
    expect(await far.call<MessageView[]>('GET', '/v1/outbox')).toEqual([]);

    // One sent there while the connection is cut: taken home once, after the reconnect.
    expect(sshd.cut()).toBeGreaterThan(0);
    const duringCut = JSON.parse((await onBox('sent while the connection was cut')).stdout) as MessageView;
    expect((await atNear(duringCut.id)).map((m) => m.fromAgent)).toEqual(['far']);

    // near's reply goes to far on box, named there as near: far's answer to it goes home again.
    const reply = JSON.parse((await rig.run(['message', 'far', '--from', 'near', '-m', 'thanks, far', '--json'], { env: env() })).stdout) as MessageView;
    const farInbox = await until('the reply delivered on box', async () => {
      const v = await far.call<InboxView>('GET', '/v1/terminals/far/inbox');
      return v.messages.find((m) => m.id === reply.id && m.state === 'delivered');
    });
    expect(farInbox).toMatchObject({ fromAgent: 'near', from: 'near@home' });
    expect(readFileSync(path.join(root, farInbox.file), 'utf8')).toMatch(/^reply: "jaggers message near -m/m);

    // `-f` gives the work from a file here: its text travels in the request and is the prompt there, exactly (1 MB).
    const line = 'ünïcode line of a long prompt, with "quotes", $HOME and `ticks`\n';
    const big = line.repeat(Math.ceil(1_000_000 / Buffer.byteLength(line)));
    await writeFile(path.join(rig.root, 'big.md'), big);
    const bigJob = (await rig.run(['assign', 'far', '-f', 'big.md'], { env: env() })).stdout.trim();
    expect((await rig.run(['wait', bigJob, '--timeout', '60'], { env: env() })).code).toBe(0);
    const bigThere = await far.call<JobView>('GET', `/v1/jobs/${bigJob}`);
    expect(readFileSync(path.join(root, bigThere.prompt)).equals(Buffer.from(big))).toBe(true);

    expect((await rig.run(['down'], { env: env() })).code).toBe(0);
  }, 180_000);

  it("an agent on box in a worktree of its own: made there, of dir's repository; worktrees, diff and merge from here", async () => {
    // dir on box: a git repository of the host's user, made by that user (git refuses a repository of
    // another user), with one commit on main.
    const repo = path.join(sshd.home, 'repo');
    const made = await execa(
      'ssh',
      [
        '-F',
        sshd.configFile,
        HOST_ALIAS,
        `set -e; mkdir ${repo}; cd ${repo}; git init -q -b main; echo one > a.txt; git add a.txt; git -c user.name=u -c user.email=u@x commit -qm first`,
      ],
      { reject: false },
    );
    expect(made.exitCode, made.stderr).toBe(0);
    await writeFile(
      path.join(rig.root, 'jaggers.json'),
      JSON.stringify({
        hosts: { box: { ssh: HOST_ALIAS, dir: repo } },
        agents: [
          { name: 'near', profile: 'demo' },
          { name: 'iso', profile: 'demo', host: 'box', isolation: 'worktree', args: ['--boot-ms', '50'] },
        ],
      }),
    );
    const up = await rig.run(['up'], { env: env() });
    expect(up.code, up.stderr).toBe(0);
    const root = path.join(repo, '.jaggers', 'hosted', rig.session);
    const wt = path.join(root, '.jaggers', 'worktrees', 'iso');
    // The agent runs there, as the host's user, in its worktree on its branch.
    const far = new ApiClient({ socketPath: hostSocketPath(path.join(rig.root, '.jaggers'), 'box') }, rig.session);
    const iso = await far.call<TerminalView>('GET', '/v1/terminals/iso');
    expect(readlinkSync(`/proc/${iso.pid}/cwd`)).toBe(wt);
    expect(sshd.userProcesses()).toContain(iso.pid);

    // A handoff that writes a file: committed on its branch there when it ends; the checkout untouched.
    const ho = await rig.run(['handoff', 'iso', '-m', 'write: notes/far.txt "from box\\n"', '--json'], { env: env() });
    expect(ho.code, ho.stderr).toBe(0);
    expect(existsSync(path.join(repo, 'notes', 'far.txt'))).toBe(false);
    const d = JSON.parse((await rig.run(['diff', 'iso', '--json', '--patch'], { env: env() })).stdout) as DiffView;
    expect(d).toMatchObject({ name: 'iso', agent: 'iso', host: 'box' });
    expect(d.files.map((f) => f.path)).toEqual(['notes/far.txt']);
    expect(d.commits).toHaveLength(1);
    expect(d.patch).toContain('+from box');
    const human = await rig.run(['diff', 'iso'], { env: env() });
    expect(human.stdout).toMatch(/^iso on host box: worktree iso, 1 commit since /);

    // `worktrees` lists it with its host, beside this machine's (none here).
    const listed = JSON.parse((await rig.run(['worktrees', '--json'], { env: env() })).stdout) as WorktreeView[];
    expect(listed.map((w) => [w.name, w.host, w.branch, w.status?.merged])).toEqual([['iso', 'box', 'jaggers/iso', false]]);
    expect((await rig.run(['worktrees'], { env: env() })).stdout).toMatch(/^WORKTREE +FOR +HOST +BRANCH[^\n]*\niso +iso +box +jaggers\/iso /);

    // merge: into the checkout there (main, clean: it moves with it).
    const m = await rig.run(['merge', 'iso'], { env: env() });
    expect(m.code, m.stderr).toBe(0);
    expect(m.stdout).toMatch(/^iso: 1 commit merged into main on host box \(merge\)/);
    expect(readFileSync(path.join(repo, 'notes', 'far.txt'), 'utf8')).toBe('from box\n');

    expect((await rig.run(['down'], { env: env() })).code).toBe(0);
  }, 180_000);
});
