// The built fake agent in a real tmux pane, on a private tmux server (own socket name, own
// TMUX_TMPDIR, no TMUX/TMUX_PANE, -f /dev/null) with its own HOME. Never the default server.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openControl } from '../../src/tmux/connect.js';
import type { ControlClient } from '../../src/tmux/control-client.js';
import { whenDirSays } from '../helpers/dir-watch.js';
import { waitForPane } from '../helpers/rig.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../dist/src/fake-agent/main.js', import.meta.url));
const PANE = 'fa:0.0';
const sha = (data: string): string => createHash('sha256').update(data, 'utf8').digest('hex');
const shq = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

class PrivateTmux {
  readonly socket = `fake-agent-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  readonly env: NodeJS.ProcessEnv;
  constructor(readonly root: string) {
    this.env = { ...process.env, TMUX_TMPDIR: path.join(root, 'tmux'), HOME: path.join(root, 'home') };
    delete this.env.TMUX;
    delete this.env.TMUX_PANE;
    fs.mkdirSync(path.join(root, 'tmux'));
    fs.mkdirSync(path.join(root, 'home'));
    fs.mkdirSync(path.join(root, 'work'));
  }

  get home(): string {
    return path.join(this.root, 'home');
  }

  async tmux(...args: string[]): Promise<string> {
    const { stdout } = await run('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { env: this.env });
    return stdout;
  }

  agentCommand(args: string): string {
    return `${shq(process.execPath)} ${shq(MAIN)} ${args}`;
  }

  async start(args: string): Promise<void> {
    const cwd = path.join(this.root, 'work');
    await this.tmux(
      'new-session',
      '-d',
      '-s',
      'fa',
      '-x',
      '200',
      '-y',
      '50',
      '-c',
      cwd,
      this.agentCommand(args),
      ';',
      'set-option',
      '-g',
      'remain-on-exit',
      'on',
    );
  }

  async respawn(args: string): Promise<void> {
    await this.tmux('respawn-pane', '-k', '-t', PANE, this.agentCommand(args));
  }

  capture(): Promise<string> {
    return this.tmux('capture-pane', '-p', '-t', PANE);
  }

  private client: ControlClient | null = null;
  private waits = 0;

  /** One control connection for waiting: screens are re-read when tmux reports output, not on a timer. */
  private async control(): Promise<ControlClient> {
    this.client ??= await openControl({ socket: { name: this.socket }, configFile: null, bin: 'tmux', env: this.env }, 'fa');
    return this.client;
  }

  async waitFor(re: RegExp, timeoutMs = 15_000): Promise<string> {
    const c = await this.control();
    const [paneId] = await c.runOk(['display-message', '-p', '-t', PANE, '#{pane_id}']);
    return waitForPane(c, paneId!, re, timeoutMs);
  }

  async waitForExit(timeoutMs = 15_000): Promise<number | null> {
    const c = await this.control();
    // tmux marks a pane dead when its terminal closes and fills in the status once it reaps the child;
    // a subscription reports the pair as it changes (one-pane subscriptions never fire on 3.3a: use %*).
    // A new subscription name per wait: tmux reports its first value at once, so an exit that came
    // before the wait is seen too, and a respawned pane's earlier exit cannot mask the new one.
    const name = `fa-exit-${++this.waits}`;
    let off = () => {};
    const seen = new Promise<number | null>((resolve) => {
      off = c.onNotification((n, args) => {
        if (n !== 'subscription-changed' || args[0] !== name) return;
        const m = /^1 ?(\d*)$/.exec(args.slice(args.indexOf(':') + 1).join(' '));
        if (!m) return;
        if (m[1]) return resolve(Number(m[1]));
        // Dead but not reaped yet when tmux sampled it: ask again; each round trip lets tmux reap it.
        // tmux 3.3a sometimes never reaps a respawned pane's process (it stays a zombie, the status
        // stays empty): then the exit is known but its code is not (null).
        void (async () => {
          for (let i = 0; i < 1000; i++) {
            const [st] = await c.runOk(['display-message', '-p', '-t', PANE, '#{pane_dead_status}']);
            if (st) return resolve(Number(st));
          }
          resolve(null);
        })();
      });
    });
    await c.runOk(['refresh-client', '-B', `${name}:%*:#{pane_dead} #{pane_dead_status}`]);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          void Promise.all([this.capture(), this.tmux('display-message', '-p', '-t', PANE, '#{pane_pid} dead=#{pane_dead} status=#{pane_dead_status}')]).then(
            ([s, info]) =>
              reject(
                new Error(
                  `the agent did not exit within ${timeoutMs} ms (${info.trim()} proc=${(() => {
                    try {
                      return fs.readFileSync(`/proc/${info.trim().split(' ')[0]}/stat`, 'utf8').split(' ')[2];
                    } catch {
                      return 'gone';
                    }
                  })()}); the screen was:\n${s}`,
                ),
              ),
          ),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([seen, timeout]);
    } finally {
      clearTimeout(timer);
      off();
      await c.run(['refresh-client', '-B', name]);
    }
  }

  async closeControl(): Promise<void> {
    await this.client?.close().catch(() => undefined);
    this.client = null;
  }

  async type(text: string): Promise<void> {
    await this.tmux('send-keys', '-t', PANE, '-l', text);
    await this.tmux('send-keys', '-t', PANE, 'Enter');
  }

  async paste(text: string): Promise<void> {
    const file = path.join(this.root, `paste-${randomBytes(4).toString('hex')}.txt`);
    const buffer = `fake-agent-test-${randomBytes(4).toString('hex')}`;
    fs.writeFileSync(file, text);
    await this.tmux('load-buffer', '-b', buffer, file);
    await this.tmux('paste-buffer', '-p', '-d', '-b', buffer, '-t', PANE);
  }

  async stop(): Promise<void> {
    await this.closeControl();
    await this.tmux('kill-server').catch(() => undefined);
  }
}

const IDLE = /Type your message/;

/** The agent's state file once `ready` holds for it, re-read on every change in its folder (5 s at most). */
function stateFileWhen(ready: (s: { status: string }) => boolean): Promise<{ status: string } | null> {
  const dir = path.join(t.home, '.fake-agent', 'state');
  const read = (): { status: string } | null => {
    const name = fs.readdirSync(dir).find((n) => n.endsWith('.json')); // not a write's temporary file
    if (!name) return null;
    try {
      return JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as { status: string };
    } catch {
      return null; // gone or renamed between the listing and the read; the watch fires again
    }
  };
  return whenDirSays(dir, read, (s) => s !== null && ready(s), { timeoutMs: 5_000, what: 'the state file' });
}
let t: PrivateTmux;

beforeAll(() => {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
});
beforeEach(() => {
  t = new PrivateTmux(fs.mkdtempSync(path.join(os.tmpdir(), 'fake-agent-tmux-')));
});
afterEach(async () => {
  await t.stop();
  fs.rmSync(t.root, { recursive: true, force: true });
});

describe('fake agent in tmux', () => {
  it('boots to idle, answers a turn with the hash and takes a 100 KB bracketed paste byte for byte', async () => {
    const trace = path.join(t.root, 'trace.jsonl');
    t.env.FAKE_AGENT_TRACE = trace;
    await t.start('--boot-ms 1500 --think-ms 200');
    await t.waitFor(/Starting fake agent\.\.\./);
    await t.tmux('send-keys', '-t', PANE, '-l', 'typed too early');
    const idle = await t.waitFor(IDLE);
    expect(idle).toContain('Fake Agent 1.0.0 (jaggers demo agent)');
    expect(idle).not.toContain('typed too early');

    await t.type('hello 世界 👋 [jg:ab12]');
    const replied = await t.waitFor(/Worked for \d+s/);
    expect(replied).toContain(`received ${Buffer.byteLength('hello 世界 👋 [jg:ab12]')} bytes sha256:${sha('hello 世界 👋 [jg:ab12]')}`);
    expect(replied).toMatch(/✦ turn 1 of session [0-9a-f]{8}\n\s+You said: hello 世界 👋 \[jg:ab12\]/);
    expect(replied).toContain('nonce [jg:ab12]');

    const unit = 'line of text 世界 é 👋 $HOME; `x` \\n \'q\' "d"\n';
    let big = unit.repeat(Math.floor((100 * 1024 - 100) / Buffer.byteLength(unit)));
    big += 'z'.repeat(100 * 1024 - Buffer.byteLength(big));
    expect(Buffer.byteLength(big)).toBe(102_400);
    await t.paste(big);
    await t.waitFor(/│ > z{20}/);
    await t.tmux('send-keys', '-t', PANE, 'Enter');
    const pasted = await t.waitFor(/turn 2 of session[\s\S]*Worked for/);
    expect(pasted).toContain(`received 102400 bytes sha256:${sha(big)}`);

    const states = fs
      .readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { state: string; t: number; stateFile?: boolean })
      .filter((l) => !l.stateFile);
    // The trace line is appended just after the screen is drawn, so the last idle may not be there yet.
    expect(states.map((s) => s.state).slice(0, 5)).toEqual(['starting', 'idle', 'busy', 'idle', 'busy']);
    expect(states.length === 5 || states[5]?.state === 'idle').toBe(true);
    // The state file is written just after the screen is drawn too (as a real CLI's may lag its screen).
    expect(await stateFileWhen((s) => s.status !== 'busy')).toMatchObject({ status: 'idle' });
  });

  it('a resume continues the turn count, /clear forks a new session, Ctrl-D exits 0 and /crash exits 3', async () => {
    const id = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
    await t.start(`--session-id ${id} --think-ms 100`);
    await t.waitFor(IDLE);
    await t.type('first prompt');
    await t.waitFor(/turn 1 of session 6f1c2a3b[\s\S]*Worked for/);
    await t.type('second prompt');
    await t.waitFor(/turn 2 of session 6f1c2a3b[\s\S]*Worked for/);
    await t.tmux('send-keys', '-t', PANE, 'C-d');
    expect([0, null]).toContain(await t.waitForExit()); // null: tmux did not report the code
    expect(fs.readdirSync(path.join(t.home, '.fake-agent', 'state'))).toEqual([]); // a clean exit removes its state file

    await t.respawn(`--resume ${id} --think-ms 100`);
    const resumed = await t.waitFor(IDLE);
    expect(resumed).toContain(`session ${id}`);
    expect(resumed).toContain('You said: second prompt');
    await t.type('third prompt');
    await t.waitFor(/turn 3 of session 6f1c2a3b[\s\S]*You said: third prompt[\s\S]*Worked for/);

    await t.type('/clear');
    const cleared = await t.waitFor(/session (?!6f1c2a3b)[0-9a-f-]{36}\s/);
    const newId = /session ([0-9a-f-]{36})\s/.exec(cleared)?.[1] ?? '';
    expect(cleared).not.toContain('third prompt');
    await t.type('after clear');
    await t.waitFor(new RegExp(`turn 1 of session ${newId.slice(0, 8)}[\\s\\S]*Worked for`));
    const sessions = fs.readdirSync(path.join(t.home, '.fake-agent', 'sessions')).sort();
    expect(sessions).toEqual([`${id}.json`, `${newId}.json`].sort());
    const old = JSON.parse(fs.readFileSync(path.join(t.home, '.fake-agent', 'sessions', `${id}.json`), 'utf8'));
    expect(old.turns.map((x: { prompt: string }) => x.prompt)).toEqual(['first prompt', 'second prompt', 'third prompt']);

    await t.type('/crash');
    expect([3, null]).toContain(await t.waitForExit());
    expect(await t.capture()).toContain('fake agent crashed');
    // A crash, unlike a clean exit, leaves its state file behind (the code itself is checked over pipes
    // in fake-agent-cli.test.ts, where the test is the parent process).
    expect(fs.readdirSync(path.join(t.home, '.fake-agent', 'state'))).toHaveLength(1);
  });
});
