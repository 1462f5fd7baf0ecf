import { execa } from 'execa';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { coalesced } from '../../src/coalesced.js';
import { capturePane, listPanes } from '../../src/tmux/commands.js';
import { openControl } from '../../src/tmux/connect.js';
import type { ControlClient } from '../../src/tmux/control-client.js';
import type { TmuxServer } from '../../src/tmux/server.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A private world for one test: a temp project folder, a temp HOME, its own TMUX_TMPDIR and socket
 * (TMUX and TMUX_PANE removed), so nothing can reach the user's tmux server. `cleanup()` kills that
 * server by its socket and removes the folders, also when the test failed.
 */
export class Rig {
  readonly socket: string;
  readonly session = 'jgtest';
  readonly env: NodeJS.ProcessEnv;
  private clients: ControlClient[] = [];

  private constructor(
    readonly root: string,
    readonly home: string,
    readonly tmuxTmpDir: string,
    private readonly base: string,
  ) {
    this.socket = `jgtest-${path.basename(base).slice(-8)}`;
    const env: NodeJS.ProcessEnv = { ...process.env, TMUX_TMPDIR: tmuxTmpDir, HOME: home, JAGGERS_SOCKET: this.socket, JAGGERS_SESSION_NAME: this.session };
    delete env.TMUX;
    delete env.TMUX_PANE;
    delete env.JAGGERS_PROJECT;
    this.env = env;
  }

  static async create(): Promise<Rig> {
    const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'jgt-')));
    const mk = async (n: string) => {
      const d = path.join(base, n);
      await (await import('node:fs/promises')).mkdir(d, { recursive: true });
      return d;
    };
    return new Rig(await mk('project'), await mk('home'), await mk('tmux'), base);
  }

  get server(): TmuxServer {
    return { socket: { name: this.socket }, configFile: null, bin: 'tmux', env: this.env };
  }

  /** Run the CLI in this process, as `jaggers <args>` from the project folder (or `cwd`). */
  async run(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<RunResult> {
    let stdout = '';
    let stderr = '';
    const { main } = await import('../../src/program.js');
    const code = await main(args, {
      io: { writeOut: (s) => void (stdout += s), writeErr: (s) => void (stderr += s) },
      env: opts.env ?? this.env,
      cwd: opts.cwd ?? this.root,
    });
    return { code, stdout, stderr };
  }

  /** One tmux command on this test's server. */
  async tmux(args: string[]): Promise<string> {
    const r = await execa('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { env: this.env, extendEnv: false });
    return String(r.stdout);
  }

  async control(): Promise<ControlClient> {
    const c = await openControl(this.server, this.session);
    this.clients.push(c);
    return c;
  }

  async paneOf(agent: string): Promise<string> {
    const c = await this.control();
    const pane = (await listPanes(c, this.session)).find((p) => p.agent === agent);
    if (!pane) throw new Error(`no pane for agent ${agent}`);
    return pane.paneId;
  }

  /**
   * Wait until the pane's screen matches, re-reading it whenever tmux reports output from that pane
   * (no fixed sleeps). Fails with the screen it saw last.
   */
  async waitForScreen(agentOrPane: string, re: RegExp, { timeoutMs = 15_000 } = {}): Promise<string> {
    const c = await this.control();
    const paneId = agentOrPane.startsWith('%') ? agentOrPane : await this.paneOf(agentOrPane);
    return waitForPane(c, paneId, re, timeoutMs);
  }

  /** Wait for tmux to report the pane dead (a subscription: tmux checks it once a second). */
  async waitForDead(paneId: string, { timeoutMs = 15_000 } = {}): Promise<void> {
    const c = await this.control();
    const name = `dead${paneId.slice(1)}`;
    const seen = new Promise<void>((resolve) =>
      c.onNotification((n, args) => {
        if (n === 'subscription-changed' && args[0] === name && args.includes(paneId) && args.at(-1) === '1') resolve();
      }),
    );
    // A subscription to one pane (`%1`) never reports a change on tmux 3.3a; all panes (`%*`) does.
    await c.runOk(['refresh-client', '-B', `${name}:%*:#{pane_dead}`]);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`pane ${paneId} still alive after ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([seen, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async cleanup(): Promise<void> {
    for (const c of this.clients.splice(0)) await c.close().catch(() => {});
    await execa('tmux', ['-L', this.socket, '-f', '/dev/null', 'kill-server'], { env: this.env, extendEnv: false, reject: false });
    // The supervisor may still be writing into .jaggers/ for a moment after its server was killed.
    await rm(this.base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  }
}

export async function waitForPane(c: ControlClient, paneId: string, re: RegExp, timeoutMs: number): Promise<string> {
  let last = '';
  return new Promise<string>((resolve, reject) => {
    let done = false;
    const finish = (err: Error | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      off();
      offExit();
      if (err) reject(err);
      else resolve(last);
    };
    const check = coalesced(async () => {
      if (done) return;
      try {
        last = await capturePane(c, paneId);
        if (re.test(last)) finish(null);
      } catch (e) {
        finish(e as Error);
      }
    });
    const timer = setTimeout(
      () => finish(new Error(`timed out after ${timeoutMs} ms waiting for ${re} in pane ${paneId}; the screen was:\n${last}`)),
      timeoutMs,
    );
    const off = c.onOutput((p) => {
      if (p === paneId) void check();
    });
    const offExit = c.onExit((why) => finish(new Error(`tmux connection closed while waiting for ${re}: ${why}\n${last}`)));
    void check();
  });
}
