// One real CLI under test: a temp folder, the stub model server, a throwaway HOME, and the private
// tmux server the CLI runs in. dispose() tears all of it down, whatever state it is in.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareCliHome } from './cli-env.js';
import { cliBinary, type CliName } from './clis.js';
import { settledScreen, typePrompt, waitForState, type ScreenCheck } from './drive.js';
import { createPrivateTmux, type PrivateTmux } from './private-tmux.js';
import { PANE_SIZE, type ScreenState } from './screens.js';
import { startStubServer, type StubServer } from './stub-server.js';

export interface CliRig {
  cli: CliName;
  root: string;
  /** The CLI's working folder. */
  cwd: string;
  home: string;
  env: Record<string, string>;
  stub: StubServer;
  /** The tmux server of the running CLI (a new one per start). */
  tmux(): PrivateTmux;
  /** Starts the CLI with `args` in a fresh private tmux server (the previous one is killed). */
  start(args: string[]): Promise<PrivateTmux>;
  /** Kills the tmux server and the CLI's process group. */
  stop(): Promise<void>;
  type(text: string): Promise<void>;
  waitFor(state: ScreenState, opts?: { timeoutMs?: number; also?: ScreenCheck }): Promise<string>;
  /**
   * Waits for the screen to stop changing. Needed before typing after a reply: codex shows its idle
   * screen while a reply is still streaming, and queues a prompt typed then.
   */
  settle(quietMs?: number): Promise<string>;
  dispose(): Promise<void>;
}

/** The stub's last requests, told on a failed wait: a CLI stuck on one of them says so. */
const LAST_REQUESTS = 8;

export function withStubRequests(err: unknown, stub: StubServer, startedAt: number): unknown {
  if (!(err instanceof Error)) return err;
  const reqs = stub.requests.slice(-LAST_REQUESTS);
  const lines = reqs.map((q) => {
    const answered = q.endedAt === undefined ? 'not answered yet' : `answered ${q.endedAt - q.at} ms later`;
    return `  #${q.seq} ${q.method} ${q.path} (${q.purpose}) at +${q.at - startedAt} ms, ${answered}`;
  });
  err.message += `\nthe stub got ${stub.requests.length} request(s) in all${reqs.length ? `; the last ${reqs.length}, timed from the CLI's start:\n${lines.join('\n')}` : ''}`;
  return err;
}

/** `root`: a fixed folder to use (emptied first) instead of a new temp one, for stable screen paths. */
export async function createRig(cli: CliName, opts: { root?: string } = {}): Promise<CliRig> {
  const bin = cliBinary(cli);
  if (opts.root !== undefined) {
    rmSync(opts.root, { recursive: true, force: true });
    mkdirSync(opts.root, { recursive: true });
  }
  const root = opts.root ?? mkdtempSync(join(tmpdir(), `jaggers-e2e-${cli}-`));
  const cwd = join(root, 'work');
  mkdirSync(cwd);
  const stub = await startStubServer({ cwd });
  const { env, home } = prepareCliHome(cli, { root, port: stub.port, cwd });
  let current: PrivateTmux | undefined;
  /** When the CLI was last started (the stub's requests are timed from it). */
  let started = Date.now();
  const servers: PrivateTmux[] = [];

  const rig: CliRig = {
    cli,
    root,
    cwd,
    home,
    env,
    stub,
    tmux() {
      if (current === undefined) throw new Error(`${cli} is not running`);
      return current;
    },
    async start(args) {
      await rig.stop();
      current = createPrivateTmux(cli);
      servers.push(current);
      started = Date.now();
      await current.start({ command: [bin, ...args], cwd, env, ...PANE_SIZE[cli] });
      return current;
    },
    async stop() {
      await current?.kill();
      current = undefined;
    },
    type: (text) => typePrompt(rig.tmux(), stub, cli, text),
    waitFor: (state, opts) =>
      waitForState(cli, rig.tmux(), state, opts).catch((err: unknown) => {
        throw withStubRequests(err, stub, started);
      }),
    settle: (quietMs = 600) => settledScreen(rig.tmux(), quietMs),
    async dispose() {
      current = undefined;
      for (const s of servers) await s.dispose().catch(() => undefined);
      await stub.close().catch(() => undefined);
      rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    },
  };
  return rig;
}
