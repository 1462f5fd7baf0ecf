// The built fake agent in a real tmux pane, on a private tmux server (own socket name, own
// TMUX_TMPDIR, no TMUX/TMUX_PANE, -f /dev/null) with its own HOME. Never the default server.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

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
    await this.tmux('new-session', '-d', '-s', 'fa', '-x', '200', '-y', '50', '-c', cwd, this.agentCommand(args), ';', 'set-option', '-g', 'remain-on-exit', 'on');
  }

  async respawn(args: string): Promise<void> {
    await this.tmux('respawn-pane', '-k', '-t', PANE, this.agentCommand(args));
  }

  capture(): Promise<string> {
    return this.tmux('capture-pane', '-p', '-t', PANE);
  }

  async waitFor(re: RegExp, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let screen = '';
    while (Date.now() < deadline) {
      screen = await this.capture();
      if (re.test(screen)) return screen;
      await delay(40);
    }
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${re}; the screen was:\n${screen}`);
  }

  async waitForExit(timeoutMs = 15_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      // tmux marks a pane dead when its terminal closes and fills in the status once it reaps the child.
      const [dead, status = ''] = (await this.tmux('display-message', '-p', '-t', PANE, '#{pane_dead} #{pane_dead_status}')).trim().split(' ');
      if (dead === '1' && status !== '') return Number(status);
      await delay(40);
    }
    throw new Error(`the agent did not exit within ${timeoutMs} ms; the screen was:\n${await this.capture()}`);
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
    await this.tmux('kill-server').catch(() => undefined);
  }
}

const IDLE = /Type your message/;
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

    const states = fs.readFileSync(trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { state: string; t: number });
    expect(states.map((s) => s.state)).toEqual(['starting', 'idle', 'busy', 'idle', 'busy', 'idle']);
    const stateDir = path.join(t.home, '.fake-agent', 'state');
    const [stateFile] = fs.readdirSync(stateDir);
    expect(JSON.parse(fs.readFileSync(path.join(stateDir, stateFile ?? ''), 'utf8'))).toMatchObject({ status: 'idle' });
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
    expect(await t.waitForExit()).toBe(0);
    expect(fs.readdirSync(path.join(t.home, '.fake-agent', 'state'))).toEqual([]);

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
    expect(await t.waitForExit()).toBe(3);
    expect(await t.capture()).toContain('fake agent crashed');
  });
});
