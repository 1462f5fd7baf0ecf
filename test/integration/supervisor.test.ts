// The supervisor as the one owner of a session: killed with kill -9 (at random moments, also in the
// middle of a turn) it comes back on the next command with fresh states, loses nothing recorded and
// types nothing twice; two `up` at once give each agent one window; notifications reach the person.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HealthView, TerminalView } from '../../src/api/types.js';
import { supervisorCommand } from '../../src/api/ensure.js';
import { apiSocketPath } from '../../src/api/paths.js';
import { resolveContext } from '../../src/context.js';
import { packageRoot } from '../../src/package-root.js';
import { listPanes } from '../../src/tmux/commands.js';
import { api, fakeTurns, readRegistry, waitPidGone } from '../helpers/api.js';
import { whenDirSays } from '../helpers/dir-watch.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

const jaggersBin = path.join(packageRoot, 'bin', 'jaggers.js');

describe('the supervisor owns the session', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '400']);
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'beta', profile: 'fake' },
      ],
    });
  });
  afterEach(async () => rig.cleanup());

  it('kill -9: the next `jaggers status` starts it again in window 0 and shows fresh states', async () => {
    expect((await rig.run(['up'])).code).toBe(0);
    const first = await api(rig).call<HealthView>('GET', '/v1/health');
    // A turn so the states are not just the first ones.
    expect((await rig.run(['handoff', 'alpha', '-m', 'before the crash'])).code).toBe(0);
    process.kill(first.pid, 'SIGKILL');
    await waitPidGone(first.pid);
    const st = await rig.run(['status', '--json']);
    expect(st.code, st.stderr).toBe(0);
    const rows = JSON.parse(st.stdout) as (TerminalView & { from: string })[];
    const second = await api(rig).call<HealthView>('GET', '/v1/health');
    expect(second.pid).not.toBe(first.pid);
    // Window 0 runs it, as after `up`.
    const c = await rig.control();
    const w0 = (await listPanes(c, rig.session)).find((p) => p.windowIndex === 0)!;
    expect(w0.panePid).toBe(second.pid);
    for (const r of rows) {
      expect(r.from).toBe('supervisor');
      // Read by the new supervisor: since its start, not a state a dead process left behind.
      expect(Date.parse(r.since!)).toBeGreaterThanOrEqual(Date.parse(second.startedAt) - 1000);
      expect(['idle', 'done']).toContain(r.state);
    }
    // And it works: a turn through it.
    const h = await rig.run(['handoff', 'alpha', '-m', 'after the crash', '--json']);
    expect(h.code, h.stderr).toBe(0);
    expect((await fakeTurns(rig, 'alpha')).map((t) => /answer: (.*)/.exec(t.reply)?.[1])).toEqual(['before the crash', 'after the crash']);
  });

  it("a second supervisor, window 0's own argv: one line naming the one that serves, no stack", async () => {
    expect((await rig.run(['up'])).code).toBe(0);
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    const argv = supervisorCommand(await resolveContext({ project: rig.root, socket: rig.socket, session: rig.session }, rig.env, rig.root));
    const r = await execa(argv[0]!, argv.slice(1), { cwd: rig.root, env: rig.env, reject: false });
    expect(r.exitCode).toBe(1);
    // Before, window 0 ran the CLI, whose error check did not know the bundle's JaggersError: "internal error" and a stack.
    expect(r.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(new RegExp(`^jaggers: another supervisor serves ${rig.root}: \\S`))]);
    // The one that serves was left alone.
    expect((await api(rig).call<HealthView>('GET', '/v1/health')).pid).toBe(pid);
  });

  it('kill -9 at random moments of handoffs: each handoff is followed to its end by the next supervisor, typed once, in order', async () => {
    expect((await rig.run(['up'])).code).toBe(0);
    const sent: string[] = [];
    for (let round = 0; round < 4; round++) {
      // The last round's kill: `status` starts it again.
      expect((await rig.run(['status'])).code).toBe(0);
      const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
      const message = `round ${round}`;
      sent.push(message);
      const run = execa(process.execPath, [jaggersBin, 'handoff', 'alpha', '-m', message, '--json'], { cwd: rig.root, env: rig.env, reject: false });
      // Somewhere between before the prompt is typed and after the reply (think time 400 ms).
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 1200)));
      process.kill(pid, 'SIGKILL');
      // The command follows its handoff by id across the restart: it ends with the reply, whenever the kill came.
      const r = await run;
      await waitPidGone(pid);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).reply.text).toContain(message);
    }
    const back = await rig.run(['handoff', 'alpha', '-m', 'after the storm', '--json']);
    expect(back.code, back.stderr).toBe(0);
    // The registry loaded without repairs that lose anything.
    expect((await api(rig).call<HealthView>('GET', '/v1/health')).warnings).toEqual([]);
    const data = readRegistry(rig.root);
    expect(
      Object.values(data.terminals)
        .map((t) => t.agent)
        .sort(),
    ).toEqual(['alpha', 'beta']);
    // The agent's own record: each prompt at most once, in order, and the last one there.
    const got = (await fakeTurns(rig, 'alpha')).map((t) => /answer: (.*)/.exec(t.reply)?.[1]);
    expect(got).toEqual([...sent, 'after the storm']);
  });

  it('stopped (SIGTERM) as requests arrive: each is taken at most once, and a command that got no answer says so', async () => {
    expect((await rig.run(['up', '--no-wait'])).code).toBe(0);
    const rounds = 6;
    const answered: string[] = [];
    for (let round = 0; round < rounds; round++) {
      expect((await rig.run(['status'])).code).toBe(0);
      const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
      const run = execa(process.execPath, [jaggersBin, 'assign', 'alpha', '-m', `round ${round}`, '--name', `r${round}`], {
        cwd: rig.root,
        env: rig.env,
        reject: false,
      });
      // `assign` answers in tens of ms: the stop lands before it connects, while it is served, or after.
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 250)));
      process.kill(pid, 'SIGTERM');
      const r = await run;
      await waitPidGone(pid);
      if (r.exitCode === 0) {
        expect(r.stdout).toMatch(/^j-[0-9a-f]{12}$/);
        answered.push(`r${round}`);
      } else {
        // Taken and then dropped as the supervisor stopped (it may or may not have been recorded): the
        // command says so, and does not send it again.
        expect(r.stderr).toMatch(/closed the connection before answering/);
      }
    }
    // No request ran twice (a second job, or its name refused); every answered one is there.
    const names = (JSON.parse((await rig.run(['jobs', '--json'])).stdout) as { name: string }[]).map((j) => j.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of answered) expect(names).toContain(n);
  });

  it('a supervisor that refuses a request as it stops (E_SUPERVISOR_STOPPING): the command starts the next one and sends it again', async () => {
    // Window 0 runs what a stopping supervisor is to its clients: every request refused, none taken.
    const seen = path.join(rig.root, 'refused.txt');
    const fake = path.join(rig.root, 'stopping.mjs');
    await writeFile(
      fake,
      `import http from 'node:http'; import { appendFileSync, mkdirSync } from 'node:fs';
mkdirSync(${JSON.stringify(path.join(rig.root, '.jaggers'))}, { recursive: true, mode: 0o700 });
http.createServer((req, res) => {
  appendFileSync(${JSON.stringify(seen)}, req.method + ' ' + req.url + '\\n');
  req.resume();
  req.on('end', () => {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'E_SUPERVISOR_STOPPING', message: 'the supervisor is stopping: nothing of this request was done' } }));
  });
}).listen(${JSON.stringify(apiSocketPath(path.join(rig.root, '.jaggers')))});
`,
    );
    await rig.tmux(['new-session', '-d', '-s', rig.session, '-n', 'jaggers', '-c', rig.root, '--', process.execPath, fake]);
    const socket = apiSocketPath(path.join(rig.root, '.jaggers'));
    await whenDirSays(path.dirname(socket), async () => existsSync(socket), Boolean, { what: "the fake supervisor's socket" });
    // `up` after the tmux server was killed meets the old supervisor still stopping (seen in CI).
    const u = await rig.run(['up']);
    expect(u.code, u.stderr).toBe(0);
    // Refused by the stopping one (and its health asked once more before the next was started).
    expect((await readFile(seen, 'utf8')).split('\n')[0]).toBe('POST /v1/up');
    const r = await rig.run(['assign', 'alpha', '-m', 'after the restart', '--name', 'once']);
    expect(r.code, r.stderr).toBe(0);
    const health = await api(rig).call<HealthView>('GET', '/v1/health');
    const c = await rig.control();
    expect((await listPanes(c, rig.session)).find((p) => p.windowIndex === 0)!.panePid).toBe(health.pid);
    const jobs = JSON.parse((await rig.run(['jobs', '--json'])).stdout) as { name: string }[];
    expect(jobs.map((j) => j.name)).toEqual(['once']);
  });

  it('killed between paste and Enter: the next turn clears the prompt it left in the box, and the two never join', async () => {
    await writeFakeProfile(rig.root, 'slowpaste', ['--think-ms', '100'], { delivery: { settleMs: 4000 } });
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'slowpaste' },
        { name: 'beta', profile: 'fake' },
      ],
    });
    expect((await rig.run(['up'])).code).toBe(0);
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    const run = execa(process.execPath, [jaggersBin, 'handoff', 'alpha', '-m', 'typed, never sent'], { cwd: rig.root, env: rig.env, reject: false });
    // Pasted, and waiting its 4 s before Enter: the moment to die.
    const stray = /\[jg:([0-9a-f]{16})\]/.exec(await rig.waitForScreen('alpha', /│ > Read .*\[jg:[0-9a-f]{16}\]/))![1]!;
    process.kill(pid, 'SIGKILL');
    await waitPidGone(pid);
    // The next supervisor follows the handoff: its nonce is nowhere (never submitted), so the box is
    // cleared and it is typed once more, under a new nonce; the command that asked gets the reply.
    const first = await run;
    expect(first.exitCode, first.stderr).toBe(0);
    const next = await rig.run(['handoff', 'alpha', '-m', 'the one that counts', '--json']);
    expect(next.code, next.stderr).toBe(0);
    const turns = await fakeTurns(rig, 'alpha');
    expect(turns.map((t) => /answer: (.*)/.exec(t.reply)?.[1])).toEqual(['typed, never sent', 'the one that counts']);
    expect(turns[1]!.prompt).toBe(JSON.parse(next.stdout).pointer);
    for (const t of turns) expect(t.prompt).not.toContain(stray);
  });

  it('a supervisor that exits as it starts is reported at once, with what window 0 shows', async () => {
    expect((await rig.run(['up'])).code).toBe(0);
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    // A flag node refuses, in the environment tmux gives window 0: the next supervisor dies at once.
    await rig.tmux(['set-environment', '-g', 'NODE_OPTIONS', '--no-such-node-flag']);
    process.kill(pid, 'SIGKILL');
    await waitPidGone(pid);
    const r = await rig.run(['status']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the supervisor exited as it started; see its log .*current\.log/);
    expect(r.stderr).toMatch(/window 0 shows:[\s\S]*(no-such-node-flag|Pane is dead)/);
    await rig.tmux(['set-environment', '-g', '-u', 'NODE_OPTIONS']);
    expect((await rig.run(['status'])).code).toBe(0);
  });

  it('a supervisor slow to boot (7 s, as on a loaded machine) is waited for by `up`, not started a second time', async () => {
    // A preload in the environment tmux gives window 0: each supervisor notes its start, then stalls.
    const boots = path.join(rig.root, 'boots.txt');
    const preload = path.join(rig.root, 'slow-boot.mjs');
    await writeFile(
      preload,
      `import { appendFileSync } from 'node:fs';\n` +
        `if (process.argv.includes('supervise')) { appendFileSync(${JSON.stringify(boots)}, process.pid + '\\n'); await new Promise((r) => setTimeout(r, 7000)); }\n`,
    );
    // The tmux server first (a placeholder session keeps it up), with the preload in its global environment.
    await rig.tmux(['new-session', '-d', '-s', 'placeholder']);
    await rig.tmux(['set-environment', '-g', 'NODE_OPTIONS', `--import=${pathToFileURL(preload).href}`]);
    const up = await rig.run(['up']);
    await rig.tmux(['set-environment', '-g', '-u', 'NODE_OPTIONS']);
    expect(up.code, up.stderr).toBe(0);
    const started = (await readFile(boots, 'utf8')).trim().split('\n');
    expect(started).toHaveLength(1);
    expect((await api(rig).call<HealthView>('GET', '/v1/health')).pid).toBe(Number(started[0]));
  });

  it('two `up` at once, as two processes: each agent gets exactly one window', async () => {
    const runs = await Promise.all([0, 1].map(() => execa(process.execPath, [jaggersBin, 'up'], { cwd: rig.root, env: rig.env, reject: false })));
    for (const r of runs) expect(r.exitCode, r.stderr).toBe(0);
    const c = await rig.control();
    const panes = (await listPanes(c, rig.session)).filter((p) => p.agent);
    expect(panes.map((p) => p.agent).sort()).toEqual(['alpha', 'beta']);
    const data = readRegistry(rig.root);
    expect(
      Object.values(data.terminals)
        .map((t) => t.agent)
        .sort(),
    ).toEqual(['alpha', 'beta']);
    // One of the two made the windows; the other found them running.
    const said = runs.map((r) => (/alpha\s+jg-\w+\s+@\d+\s+(started|running)/.exec(r.stdout) ?? [])[1]).sort();
    expect(said).toEqual(['running', 'started']);
  });

  it('an agent waiting for a person: the notify command runs with the agent, state and question', async () => {
    const out = path.join(rig.root, 'notified.txt');
    const script = path.join(rig.root, 'notify.sh');
    await writeFile(
      script,
      `#!/bin/sh\nprintf '%s|%s|%s\\n' "$JAGGERS_NOTIFY_AGENT" "$JAGGERS_NOTIFY_STATE" "$JAGGERS_NOTIFY_REASON" >> ${JSON.stringify(out)}\n`,
    );
    await chmod(script, 0o755);
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'beta', profile: 'fake' },
      ],
      notify: [script],
    });
    expect((await rig.run(['up'])).code).toBe(0);
    const s = await rig.run(['send', 'alpha', '/menu']);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toMatch(/: (menu|busy)\n$/);
    const { whenDirSays } = await import('../helpers/dir-watch.js');
    const text = await whenDirSays(
      rig.root,
      () => readFile(out, 'utf8').catch(() => ''),
      (t) => t.includes('\n'),
      { what: 'the notify command' },
    );
    expect(text).toMatch(
      /^alpha\|waiting_input\|"Allow execution of \[Shell\]: touch approved\.txt\?" \[1\. Allow once \/ 2\. Deny\]; `jaggers answer alpha <number or label>`$/m,
    );
    // The window is marked in the status line while it waits.
    const c = await rig.control();
    const w = (await listPanes(c, rig.session)).find((p) => p.agent === 'alpha')!;
    expect((await c.runOk(['display-message', '-p', '-t', w.windowId, '#{@jaggers_attention}']))[0]).toBe('waiting_input');
    // A handoff to an agent that waits for a person fails at once (not after its 60 s), naming what it asks.
    const t0 = Date.now();
    const h = await rig.run(['handoff', 'alpha', '-m', 'more work', '--timeout', '60']);
    expect(h.code).toBe(1);
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(h.stderr).toMatch(
      /handoff: alpha never became ready \(waiting_input: alpha asks "Allow execution of \[Shell\]: touch approved\.txt\?" \[1\. Allow once \/ 2\. Deny\]; answer it with `jaggers answer alpha <number or label>`\)/,
    );
    const why = await rig.run(['why', 'alpha']);
    expect(why.stdout).toMatch(/it asks: .*Allow execution.*\n {2}1\. Allow once\n {2}2\. Deny\nanswer with: jaggers answer alpha <number or label>\n/);
    const st = await rig.run(['status']);
    expect(st.stdout).toMatch(
      /\nalpha asks "Allow execution of \[Shell\]: touch approved\.txt\?" \[1\. Allow once \/ 2\. Deny\]: jaggers answer alpha <number or label>\n$/,
    );
  });
});
