#!/usr/bin/env node
// The dashboard's live terminals (issue 29): the supervisor's CPU with N busy demo agents (their spinners
// drawing all the time) and no terminal stream open, beside the same with S streams open (S / N on each
// agent's pane), read from /proc/<pid>/stat over the same window, the two alternated round by round.
// Target: S = 20 streams cost at most 10% of a core more than none. Prints figures; asserts nothing.
//
// Usage: npm run build && node scripts/bench-web-streams.mjs [agents=10] [streams=20] [seconds=15] [rounds=2]
// Everything runs in a private world (temp project and HOME, own TMUX_TMPDIR and socket, TMUX and
// TMUX_PANE removed); the tmux server is killed by its socket at the end, also on error or Ctrl-C.
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchWorld, cpuPressure, cpuTicks, load, ticks, worldEnd } from './bench-lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, 'bin', 'jaggers.js');
const [AGENTS = 10, STREAMS = 20, SECONDS = 15, ROUNDS = 2] = process.argv.slice(2).map(Number);

const world = await benchWorld('web');
const streams = [];
const end = worldEnd(world, () => {
  for (const s of streams) s.close();
});
const { root, env } = world;
const jaggers = (...args) => {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`jaggers ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One request on the dashboard's listener; the body as text. */
function request(port, method, p, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: p, headers, agent: false }, (res) => {
      let b = '';
      res.on('data', (c) => (b += c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: b }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A terminal stream: counts its events and bytes; `ready` once its snapshot came. */
function openStream(port, agent, cookie) {
  const s = { events: 0, outputs: 0, bytes: 0, ready: null, close: () => {} };
  s.ready = new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: `/v1/terminals/${agent}/stream`, headers: { cookie }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream of ${agent}: ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (c) => {
        s.bytes += c.length;
        const n = c.split('\n\n').length - 1;
        s.events += n;
        s.outputs += (c.match(/^event: output$/gm) ?? []).length;
        if (c.includes('event: snapshot')) resolve();
      });
    });
    req.on('error', () => {});
    s.close = () => req.destroy();
  });
  return s;
}

try {
  const demo = JSON.parse(await readFile(path.join(repo, 'profiles', 'demo.json'), 'utf8'));
  await mkdir(path.join(root, '.jaggers', 'profiles'), { recursive: true });
  // A turn that lasts the whole benchmark: the agent stays busy, its spinner drawing.
  await writeFile(path.join(root, '.jaggers', 'profiles', 'busy.json'), JSON.stringify({ ...demo, name: 'busy', args: ['--think-ms', '3600000'] }));
  const names = Array.from({ length: AGENTS }, (_, i) => `b${i}`);
  await writeFile(path.join(root, 'jaggers.json'), JSON.stringify({ agents: names.map((name) => ({ name, profile: 'busy' })) }));
  end.started();
  jaggers('up');
  for (const n of names) jaggers('assign', n, '-m', 'think about it for an hour');
  // Every agent busy (the job's turn started).
  for (let i = 0; ; i++) {
    const rows = JSON.parse(jaggers('status', '--json'));
    const busy = rows.filter((r) => r.state === 'busy').length;
    if (busy === AGENTS) break;
    if (i > 120) throw new Error(`only ${busy} of ${AGENTS} agents busy after 60 s`);
    await sleep(500);
  }
  const health = JSON.parse(
    await new Promise((resolve, reject) =>
      http
        .get({ socketPath: path.join(root, '.jaggers', 'jaggers.sock'), path: '/v1/health' }, (r) => {
          let b = '';
          r.on('data', (c) => (b += c));
          r.on('end', () => resolve(b));
        })
        .on('error', reject),
    ),
  );
  const pid = health.pid;
  const web = JSON.parse(jaggers('web', '--json'));
  const port = Number(web.address.split(':').at(-1));
  const login = await request(port, 'GET', `/login?token=${web.token}`);
  const cookie = String(login.headers['set-cookie']).split(';')[0];
  console.log(
    `${AGENTS} busy demo agents (spinners drawing); supervisor pid ${pid}; dashboard on ${web.address}; load ${load()}, cpu pressure ${cpuPressure()}`,
  );

  /** The supervisor's CPU over SECONDS, in % of one core. */
  const measure = async () => {
    const t0 = performance.now();
    const c0 = cpuTicks(pid);
    await sleep(SECONDS * 1000);
    const c1 = cpuTicks(pid);
    return ((c1 - c0) / ticks / ((performance.now() - t0) / 1000)) * 100;
  };

  const none = [];
  const open = [];
  let outputs = 0;
  let bytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    await sleep(1000);
    none.push(await measure());
    for (let i = 0; i < STREAMS; i++) streams.push(openStream(port, names[i % AGENTS], cookie));
    await Promise.all(streams.map((s) => s.ready));
    await sleep(1000);
    const o0 = streams.reduce((a, s) => a + s.outputs, 0);
    const b0 = streams.reduce((a, s) => a + s.bytes, 0);
    open.push(await measure());
    outputs += streams.reduce((a, s) => a + s.outputs, 0) - o0;
    bytes += streams.reduce((a, s) => a + s.bytes, 0) - b0;
    for (const s of streams.splice(0)) s.close();
  }
  const avg = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const f = (x) => `${x.toFixed(1)}%`;
  console.log(`supervisor CPU, % of one core, ${ROUNDS} rounds of ${SECONDS} s each, alternated:`);
  console.log(`  0 streams:  ${none.map(f).join(', ')}  (mean ${f(avg(none))})`);
  console.log(`  ${STREAMS} streams: ${open.map(f).join(', ')}  (mean ${f(avg(open))})`);
  console.log(
    `  difference: ${f(avg(open) - avg(none))} of a core (target: at most 10%); streams got ${(outputs / (ROUNDS * SECONDS)).toFixed(0)} output events/s, ${(bytes / 1024 / (ROUNDS * SECONDS)).toFixed(0)} KiB/s in all`,
  );
  console.log(`load ${load()}, cpu pressure ${cpuPressure()}`);
} catch (e) {
  // The supervisor's last words, when it died under the benchmark.
  const log = await readFile(path.join(root, '.jaggers', 'logs', 'current.log'), 'utf8').catch(() => '');
  console.error(log.split('\n').slice(-15).join('\n'));
  throw e;
} finally {
  await end.end();
}
