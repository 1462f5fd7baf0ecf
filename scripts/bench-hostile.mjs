#!/usr/bin/env node
// A hostile request at a real supervisor (issue 26, item 3): a 31 MB body of 1.6 million unknown keys,
// once and four at once. Prints how long the answer took and how big it was, the longest time the
// supervisor took to answer GET /v1/health meanwhile (pinged every 10 ms on a kept-alive socket: its
// event loop's stall as a client sees it) and its peak RSS. Asserts nothing.
//
// Usage: npm run build && node scripts/bench-hostile.mjs [keys=1600000]
// JAGGERS_BIN=/path/to/bin/jaggers.js measures another build (the one before a change, say).
// Everything runs in a private world (temp project and HOME, own TMUX_TMPDIR and socket); the tmux server
// is killed by its socket at the end, also on error.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchWorld } from './bench-lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.JAGGERS_BIN ?? path.join(repo, 'bin', 'jaggers.js');
const [KEYS = 1_600_000] = process.argv.slice(2).map(Number);
const kib = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

const { root, socket, env } = await benchWorld('hostile');
const jaggers = (...args) => spawnSync(process.execPath, [bin, ...args], { cwd: root, env, encoding: 'utf8' });

try {
  const demo = JSON.parse(await readFile(path.join(repo, 'profiles', 'demo.json'), 'utf8'));
  await mkdir(path.join(root, '.jaggers', 'profiles'), { recursive: true });
  await writeFile(path.join(root, '.jaggers', 'profiles', 'quick.json'), JSON.stringify({ ...demo, name: 'quick', args: ['--think-ms', '0'] }));
  await writeFile(path.join(root, 'jaggers.json'), JSON.stringify({ agents: [{ name: 'a', profile: 'quick' }] }));
  const up = jaggers('up');
  if (up.status !== 0) throw new Error(`up failed: ${up.stderr}`);
  const sock = path.join(root, '.jaggers', 'jaggers.sock');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const health = () =>
    new Promise((resolve, reject) => {
      http
        .get({ socketPath: sock, path: '/v1/health', agent }, (res) => {
          let b = '';
          res.on('data', (c) => (b += c));
          res.on('end', () => resolve(JSON.parse(b)));
        })
        .on('error', reject);
    });
  const { pid } = await health();

  // The body is written by child processes, so this one only pings.
  const poster = `
    const http = require('node:http');
    const parts = [];
    for (let i = 0; i < ${KEYS}; i++) parts.push('"key-' + String(i).padStart(7, '0') + '":true');
    const body = '{' + parts.join(',') + '}';
    process.send({ ready: body.length });
    process.on('message', () => {
      const t = performance.now();
      const req = http.request({ socketPath: ${JSON.stringify(sock)}, method: 'POST', path: '/v1/jobs', headers: { 'content-type': 'application/json' } }, (res) => {
        let b = '';
        res.on('data', (c) => (b += c));
        res.on('end', () => { process.send({ status: res.statusCode, bytes: Buffer.byteLength(b), ms: performance.now() - t, head: b.slice(0, 120) }); process.exit(0); });
      });
      req.on('error', (e) => { process.send({ error: e.message, ms: performance.now() - t }); process.exit(0); });
      req.end(body);
    });`;

  for (const n of [1, 4]) {
    const children = Array.from({ length: n }, () => spawn(process.execPath, ['-e', poster], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
    const sizes = await Promise.all(children.map((c) => new Promise((r) => c.once('message', (m) => r(m.ready)))));
    const rssBefore = kib(pid, 'VmRSS');
    let worst = 0;
    let pings = 0;
    let stop = false;
    const pinger = (async () => {
      while (!stop) {
        const t = performance.now();
        await health();
        worst = Math.max(worst, performance.now() - t);
        pings++;
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    for (const c of children) c.send('go');
    const answers = await Promise.all(children.map((c) => new Promise((r) => c.once('message', r))));
    stop = true;
    await pinger;
    console.log(
      `${n} request${n > 1 ? 's' : ''} of ${KEYS} unknown keys (${(sizes[0] / 1e6).toFixed(1)} MB each): ` +
        answers.map((a) => (a.error ? `error ${a.error} after ${a.ms.toFixed(0)} ms` : `${a.status} in ${a.ms.toFixed(0)} ms, ${a.bytes} bytes`)).join('; '),
    );
    console.log(
      `  GET /v1/health meanwhile: ${pings} answers, the slowest in ${worst.toFixed(0)} ms; supervisor RSS ${(rssBefore / 1024).toFixed(0)} -> ${(kib(pid, 'VmRSS') / 1024).toFixed(0)} MiB, peak ${(kib(pid, 'VmHWM') / 1024).toFixed(0)} MiB`,
    );
    console.log(`  answer: ${answers[0].head ?? ''}`);
  }
  agent.destroy();
} finally {
  spawnSync('tmux', ['-L', socket, 'kill-server'], { env });
  await rm(path.dirname(root), { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}
