// The supervisor's local API on real tmux with fake agents: every route with good and malformed
// input, the socket and token files, TCP with a bearer token, the event stream and its resumption.
import { readFile, stat } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandoffResult, HealthView, InputResult, ScreenView, StreamEvent, TerminalDetail, TerminalView } from '../../src/api/types.js';
import { apiSocketPath } from '../../src/api/paths.js';
import { api, collectEvents, fakeTurns, raw, sha, waitPidGone } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('the local API', () => {
  let rig: Rig;
  let sock: { socketPath: string };
  beforeAll(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '300']);
    await writeFakeProfile(rig.root, 'slow', ['--think-ms', '2500']);
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'beta', profile: 'fake' },
        { name: 'gamma', profile: 'slow' },
      ],
    });
    const up = await rig.run(['up']);
    expect(up.code, up.stderr).toBe(0);
    sock = { socketPath: apiSocketPath(path.join(rig.root, '.jaggers')) };
  }, 60_000);
  afterAll(async () => rig.cleanup());

  const error = (r: Awaited<ReturnType<typeof raw>>) => r.json().error!;

  it('keeps .jaggers/ 0700 and the socket 0600', async () => {
    expect((await stat(path.join(rig.root, '.jaggers'))).mode & 0o777).toBe(0o700);
    const s = await stat(sock.socketPath);
    expect(s.isSocket()).toBe(true);
    expect(s.mode & 0o777).toBe(0o600);
  });

  it('GET /v1/health names the process, the session and the log', async () => {
    const h = await api(rig).call<HealthView>('GET', '/v1/health');
    expect(h).toMatchObject({ session: rig.session, project: rig.root, socket: sock.socketPath, terminals: 3, tcp: null });
    expect(h.pid).toBeGreaterThan(1);
    expect(h.log).toBe(path.join(rig.root, '.jaggers', 'logs', 'current.log'));
  });

  it('GET /v1/terminals and /v1/terminals/{agent}: states, ids, sessions; what is on screen now', async () => {
    const all = await api(rig).call<TerminalView[]>('GET', '/v1/terminals');
    expect(all.map((t) => t.agent)).toEqual(['alpha', 'beta', 'gamma']);
    for (const t of all) {
      expect(t).toMatchObject({ state: 'idle', profile: expect.any(String), task: null, problem: null });
      expect(t.terminalId).toMatch(/^jg-[0-9a-f]{8}$/);
      expect(t.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    }
    const one = await api(rig).call<TerminalDetail>('GET', '/v1/terminals/alpha');
    expect(one.now.status).toBe('idle');
    expect(one.now.screenLines.join('\n')).toMatch(/Type your message/);
    expect(one.waitingFor).toMatch(/a prompt/);
    // By terminal id too.
    const byId = await api(rig).call<TerminalDetail>('GET', `/v1/terminals/${one.terminalId}`);
    expect(byId.agent).toBe('alpha');
    const r = await raw(sock, 'GET', '/v1/terminals/ghost');
    expect(r.status).toBe(404);
    expect(error(r)).toEqual({ code: 'E_AGENT_UNKNOWN', message: `unknown agent "ghost" in session ${rig.session}: agents are alpha, beta, gamma` });
    const badTask = await raw(sock, 'GET', '/v1/terminals?task=no%20spaces');
    expect(badTask.status).toBe(400);
    expect(error(badTask).message).toMatch(/querystring: field `task`: must be 1-64 letters.*got "no spaces"/);
    const extra = await raw(sock, 'GET', '/v1/terminals?colour=red');
    expect(extra.status).toBe(400);
  });

  it('GET /v1/terminals/{agent}/screen, with escapes and scrollback on request', async () => {
    const s = await api(rig).call<ScreenView>('GET', '/v1/terminals/beta/screen');
    expect(s.screen).toMatch(/Fake Agent/);
    expect(s.ansi).toBe(false);
    const ansi = await api(rig).call<ScreenView>('GET', '/v1/terminals/beta/screen?ansi=1&history=100');
    expect(ansi).toMatchObject({ ansi: true, agent: 'beta' });
    expect(ansi.screen).toMatch(/Fake Agent/);
    expect((await raw(sock, 'GET', '/v1/terminals/beta/screen?history=lots')).status).toBe(400);
  });

  it('GET /v1/terminals/{agent}/wait: at once when the state is there, E_TIMEOUT when it does not come', async () => {
    const v = await api(rig).call<TerminalView>('GET', '/v1/terminals/beta/wait?state=idle,done');
    expect(['idle', 'done']).toContain(v.state);
    const late = await raw(sock, 'GET', '/v1/terminals/beta/wait?state=exited&timeout=0.3');
    expect(late.status).toBe(504);
    expect(error(late)).toMatchObject({ code: 'E_TIMEOUT', message: expect.stringMatching(/beta is still (idle|done) after 300 ms \(waited for exited\)/) });
    const bogus = await raw(sock, 'GET', '/v1/terminals/beta/wait?state=sleepy');
    expect(bogus.status).toBe(400);
    expect(error(bogus).message).toMatch(/field `state/);
  });

  it('POST /v1/terminals/{agent}/input: typed whole and verified; bad bodies named', async () => {
    const text = `it's $HOME "q" \`b\` x; 日本語 🎉 end`;
    const r = await api(rig).call<InputResult>('POST', '/v1/terminals/beta/input', { text });
    expect(r).toMatchObject({ agent: 'beta', bytes: Buffer.byteLength(text) });
    expect(['busy', 'echo']).toContain(r.evidence);
    for (const [body, want] of [
      ['{}', /field `text`: Invalid input: expected string, received undefined, got nothing/],
      ['{"text":""}', /field `text`: must not be empty, got "" \(string\)/],
      ['{"text":5}', /field `text`: .*got 5 \(number\)/],
      ['{"text":"x","colour":1}', /Unrecognized key: "colour"/],
      ['{"text":', /not valid JSON/],
    ] as const) {
      const bad = await raw(sock, 'POST', '/v1/terminals/beta/input', body);
      expect(bad.status, body).toBe(400);
      expect(error(bad).code).toBe('E_USAGE');
      expect(error(bad).message, body).toMatch(want);
    }
    const ghost = await raw(sock, 'POST', '/v1/terminals/ghost/input', '{"text":"hi"}');
    expect(ghost.status).toBe(404);
    expect(error(ghost).message).toMatch(/^send: unknown agent "ghost"/);
    const text2 = await raw(sock, 'POST', '/v1/terminals/beta/input', 'text=hi', { 'content-type': 'text/plain' });
    expect(text2.status).toBe(400);
  });

  it('POST /v1/handoffs: one turn with its reply; malformed bodies, unknown agents and huge bodies refused', async () => {
    const body = 'hand over: 日本語 🎉 "quotes" $VAR `tick`\nsecond line';
    const r = await api(rig).call<HandoffResult>('POST', '/v1/handoffs', { agent: 'alpha', message: body, task: 'api-1' });
    expect(r).toMatchObject({ task: 'api-1', turn: 1, agent: 'alpha', confirmedBy: 'hook', delivery: { kind: 'delivered' } });
    expect(r.reply?.text).toMatch(/answer: hand over: 日本語 🎉 "quotes" \$VAR `tick`/);
    expect(r.pointer).toMatch(/\[jg:[0-9a-f]{16}\]$/);
    const cases: [string, number, string, RegExp][] = [
      ['{"agent":42,"message":"x"}', 400, 'E_USAGE', /field `agent`: .*got 42 \(number\)/],
      ['{"agent":"alpha"}', 400, 'E_USAGE', /field `message`/],
      ['{"agent":"alpha","message":"   "}', 400, 'E_USAGE', /field `message`: must not be empty/],
      ['{"agent":"alpha","message":"x","task":"a b"}', 400, 'E_USAGE', /field `task`/],
      ['{"agent":"alpha","message":"x","timeout":-1}', 400, 'E_USAGE', /field `timeout`/],
      ['{"agent":"alpha","message":"x","wait":"yes"}', 400, 'E_USAGE', /field `wait`/],
      ['{"agent":"ghost","message":"x"}', 404, 'E_AGENT_UNKNOWN', /^handoff: unknown agent "ghost" in session .*: agents are alpha, beta, gamma$/],
      ['{"agent":"alpha","message":"x","from":"nobody"}', 404, 'E_AGENT_UNKNOWN', /^handoff --from: unknown agent "nobody"/],
      ['[1,2]', 400, 'E_USAGE', /expected object/],
    ];
    for (const [b, status, code, msg] of cases) {
      const res = await raw(sock, 'POST', '/v1/handoffs', b);
      expect(res.status, b).toBe(status);
      expect(error(res).code, b).toBe(code);
      expect(error(res).message, b).toMatch(msg);
    }
    // A body over the limit is refused from its Content-Length, before it is read.
    const huge = await new Promise<string>((resolve, reject) => {
      const c = net.connect(sock.socketPath, () =>
        c.write(`POST /v1/handoffs HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${33 * 1024 * 1024}\r\n\r\n{"agent":`),
      );
      let got = '';
      c.on('data', (d) => (got += d.toString()));
      c.on('close', () => resolve(got));
      c.on('error', reject);
      c.setTimeout(10_000, () => c.destroy(new Error(`no answer to a huge body; got ${got}`)));
    });
    expect(huge).toMatch(/^HTTP\/1\.1 413 /);
    expect(huge).toContain('"code":"E_PAYLOAD_TOO_LARGE"');
    // Nothing of the refused requests reached the agent: one prompt in its record.
    expect((await fakeTurns(rig, 'alpha')).map((t) => t.sha256)).toHaveLength(1);
  });

  it('a 1 MB handoff arrives byte-exact through the API', async () => {
    const body = 'line of the big payload ✓ $x `y` ;\n'.repeat(30_000);
    const r = await api(rig).call<HandoffResult>('POST', '/v1/handoffs', { agent: 'alpha', message: body });
    expect(r.reply?.text).toMatch(/read \.jaggers\/handover\/turn_1_\w+\.md \((\d+) bytes, sha256:([0-9a-f]{64})\)/);
    const onDisk = await readFile(r.artifact);
    expect(r.reply!.text).toContain(`(${onDisk.length} bytes, sha256:${sha(onDisk)})`);
  });

  it('GET /v1/events and POST /v1/listen refuse malformed input, naming it', async () => {
    const since = await raw(sock, 'GET', '/v1/events?since=yesterday');
    expect(since.status).toBe(400);
    expect(error(since).message).toMatch(/querystring: field `since`/);
    const listen = await raw(sock, 'POST', '/v1/listen', '{"listen":"not an address"}');
    expect(listen.status).toBe(400);
    expect(error(listen)).toMatchObject({
      code: 'E_USAGE',
      message: expect.stringMatching(/listen address must look like 127\.0\.0\.1:7420, got "not an address"/),
    });
    expect((await raw(sock, 'POST', '/v1/listen', '{}')).status).toBe(400);
  });

  it('unknown routes, and a client of another session, get clear errors', async () => {
    const r = await raw(sock, 'GET', '/v1/nothing-here');
    expect(r.status).toBe(404);
    expect(error(r)).toEqual({ code: 'E_NOT_FOUND', message: 'no route GET /v1/nothing-here' });
    const other = await raw(sock, 'GET', '/v1/health', undefined, { 'x-jaggers-session': 'someone-else' });
    expect(other.status).toBe(409);
    expect(error(other)).toMatchObject({ code: 'E_SESSION_MISMATCH' });
  });

  it('GET /v1/events: busy and done of a handoff, with ids; a reconnect with Last-Event-ID misses nothing', async () => {
    const all = collectEvents(api(rig), '/v1/events?agent=gamma');
    const part = collectEvents(api(rig), '/v1/events?agent=gamma');
    const turn = api(rig).call<HandoffResult>('POST', '/v1/handoffs', { agent: 'gamma', message: 'think about it', task: 'ev-1' });
    // Drop the second stream at the first busy, then come back with the last id it saw.
    await part.waitFor((e) => e.type === 'state' && e.data.state === 'busy', 'busy on the second stream');
    await part.stop();
    const lastSeen = part.events.at(-1)!.id;
    const res = await turn;
    expect(res.reply?.text).toContain('answer: think about it');
    await all.waitFor((e) => e.type === 'turn' && e.data.phase === 'done', 'the turn done');
    const back = collectEvents(api(rig), '/v1/events?agent=gamma', lastSeen);
    await back.waitFor((e) => e.type === 'turn' && e.data.phase === 'done', 'the turn done after the reconnect');
    await all.stop();
    await back.stop();
    const ids = (es: StreamEvent[]) => es.map((e) => e.id);
    // The two pieces make the whole, in order, with no gap and nothing twice.
    expect([...ids(part.events), ...ids(back.events)]).toEqual(ids(all.events));
    expect(new Set(ids(all.events)).size).toBe(all.events.length);
    const states = all.events.filter((e) => e.type === 'state').map((e) => e.data.state);
    expect(states).toContain('busy');
    expect(states.at(-1)).toBe('done');
    const phases = all.events.filter((e) => e.type === 'turn').map((e) => e.data.phase);
    expect(phases).toEqual(['written', 'delivered', 'done']);
    // An id older than anything kept is answered with a gap, not silence.
    const old = collectEvents(api(rig), '/v1/events?agent=gamma', 1);
    const gap = await old.waitFor((e) => e.type === 'gap', 'a gap event');
    await old.stop();
    expect(gap.data).toMatchObject({ from: 2 });
  });

  it('send during a handoff to the same pane: both arrive whole, one after the other', async () => {
    const before = (await fakeTurns(rig, 'gamma')).length;
    const text = 'typed while the turn runs: 日本語 🎉 end';
    const handoff = api(rig).call<HandoffResult>('POST', '/v1/handoffs', { agent: 'gamma', message: 'a long job' });
    const events = collectEvents(api(rig), '/v1/events?agent=gamma&types=turn');
    await events.waitFor((e) => e.data.phase === 'delivered', 'the handoff delivered');
    const send = api(rig).call<InputResult>('POST', '/v1/terminals/gamma/input', { text });
    const [h, s] = await Promise.all([handoff, send]);
    await events.stop();
    expect(h.reply?.text).toContain('answer: a long job');
    expect(s.bytes).toBe(Buffer.byteLength(text));
    // The agent records a turn when it ends: wait for its record of the second one.
    const { whenDirSays } = await import('../helpers/dir-watch.js');
    const all = await whenDirSays(
      path.join(rig.home, '.fake-agent', 'sessions'),
      () => fakeTurns(rig, 'gamma'),
      (t) => t.length >= before + 2,
      { what: "gamma's record of both" },
    );
    const turns = all.slice(before);
    expect(turns.map((t) => t.prompt)).toEqual([h.pointer, text]);
    expect(turns[1]!.sha256).toBe(sha(text));
  });
});

describe('the API on TCP with a bearer token', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    expect((await rig.run(['up'])).code).toBe(0);
  }, 60_000);
  afterAll(async () => rig.cleanup());

  it('jaggers serve listens with a 0600 token; a missing or wrong token is a 401; it survives a supervisor restart', async () => {
    const s = await rig.run(['serve', '--listen', '127.0.0.1:0']);
    expect(s.code, s.stderr).toBe(0);
    const [, port] = /http:\/\/127\.0\.0\.1:(\d+)/.exec(s.stdout) ?? [];
    expect(Number(port)).toBeGreaterThan(0);
    const tokenFile = path.join(rig.root, '.jaggers', 'token');
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    const token = (await readFile(tokenFile, 'utf8')).trim();
    const tcp = { host: '127.0.0.1', port: Number(port) };
    const none = await raw(tcp, 'GET', '/v1/health');
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(none.json().error).toMatchObject({ code: 'E_UNAUTHORIZED', message: expect.stringMatching(/missing bearer token/) });
    const wrong = await raw(tcp, 'GET', '/v1/terminals', undefined, { authorization: `Bearer ${'0'.repeat(64)}` });
    expect(wrong.status).toBe(401);
    expect(wrong.json().error?.message).toBe('wrong bearer token');
    // Wrong tokens never reach a route: not even one that would type.
    const typed = await raw(tcp, 'POST', '/v1/terminals/alpha/input', '{"text":"no"}', { authorization: 'Bearer nope' });
    expect(typed.status).toBe(401);
    const ok = await raw(tcp, 'GET', '/v1/terminals', undefined, { authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect((ok.json() as unknown as TerminalView[])[0]?.agent).toBe('alpha');
    // The listener is not offered on TCP.
    expect((await raw(tcp, 'DELETE', '/v1/listen', undefined, { authorization: `Bearer ${token}` })).status).toBe(404);
    const health = await api(rig).call<HealthView>('GET', '/v1/health');
    expect(health.tcp).toBe(`127.0.0.1:${port}`);

    // kill -9: the next command starts it again, and it listens on the same address.
    process.kill(health.pid, 'SIGKILL');
    await waitPidGone(health.pid);
    const st = await rig.run(['status', '--json']);
    const log = await readFile(path.join(rig.root, '.jaggers', 'logs', 'current.log'), 'utf8').catch(() => '');
    expect(st.code, `${st.stderr}\n${log}`).toBe(0);
    const again = await raw(tcp, 'GET', '/v1/health', undefined, { authorization: `Bearer ${token}` });
    expect(again.status).toBe(200);
    expect(Number(again.json().pid)).not.toBe(health.pid);

    const stopped = await rig.run(['serve', '--stop']);
    expect(stopped.stdout).toBe('stopped serving on TCP\n');
    await expect(raw(tcp, 'GET', '/v1/health')).rejects.toThrow(/ECONNREFUSED/);
  });
});
