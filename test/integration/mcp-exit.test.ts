// The built `jaggers mcp` as an agent's CLI runs it, spoken to over raw stdio (the SDK's client would kill
// it on close): it ends when its client closes stdin, even while a call it serves is stuck on a supervisor
// that never answers; and a read of a FIFO is answered at once instead of hanging the call.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiSocketPath } from '../../src/api/paths.js';
import { cliEntry } from '../../src/package-root.js';
import { mkfifo } from '../helpers/confine-fixture.js';
import { Rig } from '../helpers/rig.js';

interface Rpc {
  id?: number;
  result?: { isError?: boolean; content?: { text: string }[] };
}

/** `jaggers mcp` with newline-delimited JSON-RPC on its stdin and stdout. */
function startMcp(rig: Rig) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [cliEntry, '--project', rig.root, 'mcp'], { env: rig.env, stdio: 'pipe' });
  const answers = new Map<number, Rpc>();
  const waiting = new Map<number, (r: Rpc) => void>();
  let buffered = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      const msg = JSON.parse(buffered.slice(0, i)) as Rpc;
      buffered = buffered.slice(i + 1);
      if (msg.id === undefined) continue;
      answers.set(msg.id, msg);
      waiting.get(msg.id)?.(msg);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const send = (m: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  return {
    child,
    stderr: () => stderr,
    send,
    request(id: number, method: string, params: object) {
      send({ id, method, params });
    },
    /** The answer to request `id`, or a failure after `ms`. */
    answer(id: number, ms: number): Promise<Rpc> {
      const got = answers.get(id);
      if (got) return Promise.resolve(got);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer to request ${id} within ${ms} ms; stderr: ${stderr}`)), ms);
        waiting.set(id, (r) => {
          clearTimeout(timer);
          resolve(r);
        });
      });
    },
    /** Its exit code, or 'still running' when it has not ended within `ms`. */
    exit(ms: number): Promise<number | null | 'still running'> {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms)));
      return Promise.race([exited, late]).finally(() => clearTimeout(timer));
    },
    async initialize() {
      this.request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
      await this.answer(1, 20_000);
      send({ method: 'notifications/initialized' });
    },
  };
}

describe('jaggers mcp over stdio', () => {
  let rig: Rig;
  let mcp: ReturnType<typeof startMcp> | null = null;
  const servers: net.Server[] = [];
  const held: net.Socket[] = [];

  beforeEach(async () => {
    rig = await Rig.create();
    await mkdir(path.join(rig.root, '.jaggers', 'handover'), { recursive: true });
  });
  afterEach(async () => {
    if (mcp && mcp.child.exitCode === null && mcp.child.signalCode === null) mcp.child.kill('SIGKILL');
    mcp = null;
    for (const s of held.splice(0)) s.destroy();
    for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
    await rig.cleanup();
  });

  it('ends when its client closes stdin, while a call it serves waits on a supervisor that never answers', async () => {
    // A "supervisor" that takes the connection and the request, and says nothing.
    let heard!: () => void;
    const requested = new Promise<void>((resolve) => (heard = resolve));
    const server = net.createServer((s) => {
      held.push(s);
      s.on('data', () => heard());
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(apiSocketPath(path.join(rig.root, '.jaggers')), resolve));
    mcp = startMcp(rig);
    await mcp.initialize();
    mcp.request(2, 'tools/call', { name: 'list_agents', arguments: {} });
    await requested;
    mcp.child.stdin.end();
    expect(await mcp.exit(10_000), mcp.stderr()).toBe(0);
  });

  it('answers read_artifact of a FIFO at once (refused), then ends when stdin closes', async () => {
    mkfifo(path.join(rig.root, '.jaggers', 'handover', 'turn_1_fifo.md'));
    mcp = startMcp(rig);
    await mcp.initialize();
    mcp.request(2, 'tools/call', { name: 'read_artifact', arguments: { path: '.jaggers/handover/turn_1_fifo.md' } });
    const r = await mcp.answer(2, 10_000);
    expect(r.result?.isError).toBe(true);
    expect(JSON.parse(r.result!.content![0]!.text)).toEqual({
      error: { code: 'E_FILE_REFUSED', message: 'read_artifact: ".jaggers/handover/turn_1_fifo.md" is a FIFO, not a regular file' },
    });
    mcp.child.stdin.end();
    expect(await mcp.exit(10_000), mcp.stderr()).toBe(0);
  });
});
