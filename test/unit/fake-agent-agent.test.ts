import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AgentConfig, AgentIO } from '../../src/fake-agent/agent.js';
import { Agent } from '../../src/fake-agent/agent.js';
import type { KeyEvent } from '../../src/fake-agent/input-parser.js';
import { renderLines } from '../../src/fake-agent/render.js';
import type { AgentStatus } from '../../src/fake-agent/runtime-files.js';
import type { SessionRecord } from '../../src/fake-agent/session-store.js';
import { newSession } from '../../src/fake-agent/session-store.js';
import { workReply } from '../../src/fake-agent/work-reply.js';
import { replyFromScreen } from '../../src/handover/reply.js';
import { loadProfile } from '../../src/profiles/load.js';

const ID = 'aaaaaaaa-0000-4000-8000-000000000001';
const NEXT = 'bbbbbbbb-0000-4000-8000-000000000002';
const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** A clock and timers under the test's control, and a record of every side effect. */
class FakeIO implements AgentIO {
  t = 1_700_000_000_000;
  private timers: { at: number; seq: number; fn: () => void }[] = [];
  private seq = 0;
  saved: SessionRecord[] = [];
  statuses: { status: AgentStatus; sessionId: string }[] = [];
  exits: number[] = [];
  crashes: string[] = [];
  files: Record<string, string> = {};
  now = (): number => this.t;
  setTimer = (fn: () => void, ms: number): (() => void) => {
    const timer = { at: this.t + ms, seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  };
  readFile = (p: string): Buffer | undefined => (p in this.files ? Buffer.from(this.files[p] as string) : undefined);
  newSessionId = (): string => NEXT;
  saveSession = (s: SessionRecord): void => void this.saved.push(s);
  statusChanged = (status: AgentStatus, sessionId: string): void => void this.statuses.push({ status, sessionId });
  redraw = (): void => {};
  exit = (code: number): void => void this.exits.push(code);
  crash = (message: string): void => void this.crashes.push(message);
  written: [string, string][] = [];
  writeFile = (full: string, text: string): void => void this.written.push([full, text]);

  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = due.at;
      due.fn();
    }
    this.t = end;
  }
}

function setup(config: Partial<AgentConfig> = {}, session = newSession(ID, '/w', new Date(0))) {
  const io = new FakeIO();
  const agent = new Agent(
    { bootMs: 0, thinkMs: 1000, pasteBurstMs: 0, picker: false, rules: [], cwd: '/w', replies: 'receipt', agentName: undefined, ...config },
    io,
    session,
  );
  agent.start();
  const type = (...events: KeyEvent[]): void => events.forEach((e) => agent.handleKey(e));
  const submit = (text: string): void => type({ type: 'paste', text }, { type: 'enter' });
  const screen = (): string => renderLines(agent.view(), { rows: 50, cols: 200 }, io.t).join('\n');
  return { io, agent, type, submit, screen };
}

describe('fake agent: Agent', () => {
  it('boots, drops keys while starting, then becomes idle', () => {
    const { io, agent, type, screen } = setup({ bootMs: 500 });
    expect(agent.status).toBe('starting');
    expect(screen()).toBe(' Starting fake agent...');
    type({ type: 'text', text: 'early' });
    io.advance(500);
    expect(agent.status).toBe('idle');
    expect(screen()).toContain('Type your message');
    expect(io.statuses.map((s) => s.status)).toEqual(['starting', 'idle']);
    expect(io.saved).toHaveLength(1);
  });

  it('a turn: busy with the spinner, then the reply, hash, nonce and worked line', () => {
    const { io, agent, submit, screen } = setup();
    submit('hi [jg:7f3a]');
    expect(agent.status).toBe('busy');
    expect(screen()).toContain('Thinking... (esc to cancel, 0s)');
    io.advance(1000);
    expect(agent.status).toBe('idle');
    const s = screen();
    expect(s).toContain(' > hi [jg:7f3a]\n ✦ turn 1 of session aaaaaaaa\n   You said: hi [jg:7f3a]\n');
    expect(s).toContain(`   received 12 bytes sha256:${sha('hi [jg:7f3a]')}\n   nonce [jg:7f3a]\n ✻ Worked for 1s`);
    expect(io.saved.at(-1)).toMatchObject({ title: 'hi [jg:7f3a]', turns: [{ prompt: 'hi [jg:7f3a]', bytes: 12, sha256: sha('hi [jg:7f3a]') }] });
    expect(io.statuses.map((x) => x.status)).toEqual(['idle', 'busy', 'idle']);
  });

  it('`write:` lines in the prompt or in the file it names are written under its folder; paths that leave it are refused', () => {
    const { io, submit, screen } = setup();
    submit('write: src/a.txt "one\\ntwo"');
    io.advance(1000);
    expect(io.written).toEqual([['/w/src/a.txt', 'one\ntwo']]);
    expect(screen()).toContain('wrote src/a.txt (7 bytes)');
    io.files['task.md'] = 'edit it\nwrite: b.txt "B"\nwrite: ../out.txt "x"\nwrite: /etc/x "x"\nwrite: .git/config "x"\nwrite: c.txt not-json\n';
    submit('Read task.md and do what it asks.');
    io.advance(1000);
    expect(io.written.slice(1)).toEqual([['/w/b.txt', 'B']]);
    const s = screen();
    expect(s).toContain('write: ../out.txt: leaves the working folder');
    expect(s).toContain('write: /etc/x: must be a path inside the working folder');
    expect(s).toContain('write: .git/config: is inside .git');
  });

  it('Enter while busy leaves the text in the box; Esc interrupts', () => {
    const { io, agent, type, submit, screen } = setup();
    submit('/hang');
    type({ type: 'text', text: 'next' }, { type: 'enter' });
    io.advance(60_000);
    expect(agent.status).toBe('busy');
    expect(screen()).toContain('│ > next');
    type({ type: 'esc' });
    expect(agent.status).toBe('idle');
    expect(screen()).toContain(' ✦ turn 1 of session aaaaaaaa\n   Interrupted.\n');
  });

  it('the permission menu: waiting, then allow or deny', () => {
    const { io, agent, type, submit, screen } = setup();
    submit('/menu');
    io.advance(1000);
    expect(agent.status).toBe('waiting');
    expect(screen()).toContain(' Allow execution of [Shell]: touch approved.txt?\n ● 1. Allow once\n   2. Deny\n Waiting for user confirmation...');
    type({ type: 'text', text: 'x' });
    expect(agent.status).toBe('waiting');
    type({ type: 'text', text: '1' });
    expect(screen()).toContain('   approved\n');
    submit('please, this needs-approval');
    io.advance(1000);
    type({ type: 'esc' });
    expect(screen()).toContain('   denied\n');
    expect(agent.status).toBe('idle');
  });

  it('/clear forks a new session and the turn count restarts', () => {
    const { io, agent, submit, screen } = setup();
    submit('one');
    io.advance(1000);
    submit('/clear');
    expect(agent.sessionId).toBe(NEXT);
    expect(screen()).toContain(`session ${NEXT}`);
    expect(screen()).not.toContain('one');
    expect(io.statuses.at(-1)).toEqual({ status: 'idle', sessionId: NEXT });
    submit('two');
    io.advance(1000);
    expect(screen()).toContain('turn 1 of session bbbbbbbb');
    expect(io.saved.map((s) => s.id)).toContain(ID);
  });

  it('resumed turns show and the count continues; /history lists them', () => {
    const old = {
      ...newSession(ID, '/w', new Date(0)),
      turns: [{ prompt: 'first', sha256: 'x', bytes: 5, reply: 'turn 1 of session aaaaaaaa\nYou said: first' }],
    };
    const { io, submit, screen } = setup({}, old);
    expect(screen()).toContain(' > first\n ✦ turn 1 of session aaaaaaaa\n   You said: first');
    submit('/history');
    io.advance(1000);
    expect(screen()).toContain(' ✦ turn 2 of session aaaaaaaa\n   1. first\n   received');
  });

  it('/sleep changes the think time of later turns', () => {
    const { io, agent, submit, screen } = setup();
    submit('/sleep 50');
    io.advance(999);
    expect(agent.status).toBe('busy');
    io.advance(1);
    expect(screen()).toContain('think time set to 50 ms');
    submit('quick');
    io.advance(50);
    expect(agent.status).toBe('idle');
  });

  it('/crash, Ctrl-C and Ctrl-D', () => {
    const { io, type, submit } = setup();
    submit('/crash');
    expect(io.crashes).toEqual(['fake agent crashed']);
    type({ type: 'text', text: 'x' }, { type: 'ctrl-c' });
    expect(io.exits).toEqual([]);
    type({ type: 'ctrl-c' });
    type({ type: 'ctrl-d' });
    expect(io.exits).toEqual([0, 0]);
  });

  it('answers a handover file named in the prompt', () => {
    const { io, submit, screen } = setup();
    io.files['h.md'] = '---\nturn: 2\n---\nWrite the tests.\n';
    submit('Read h.md and do what it asks. [jg:1234]');
    io.advance(1000);
    expect(screen()).toContain(`read h.md (${io.files['h.md']?.length} bytes, sha256:${sha(io.files['h.md'] ?? '')})\n   answer: Write the tests.`);
    expect(screen()).toContain('nonce [jg:1234]');
  });

  it('--replies work: the work alone, drawn with the reply marker and read back off the screen as recorded', async () => {
    const demo = (await loadProfile('demo', '/nonexistent/.jaggers')).profile;
    const { io, agent, submit, screen } = setup({ replies: 'work', agentName: 'planner' });
    const brief = 'Plan a small command-line tool that counts the words in a file.\nWrite the plan as three numbered steps.';
    io.files['.jaggers/handover/turn_1_ab12cd.md'] = `---\ntask: t-1\nturn: 1\n---\n${brief}\n`;
    submit('Read .jaggers/handover/turn_1_ab12cd.md and do what it asks. [jg:aa11]');
    io.advance(1000);
    expect(agent.status).toBe('idle');
    const plan = workReply(brief, { agentName: 'planner' });
    expect(plan[0]).toBe('Plan: a small command-line tool that counts the words in a file');
    expect(screen()).toContain(` > Read .jaggers/handover/turn_1_ab12cd.md and do what it asks. [jg:aa11]\n ✦ ${plan[0]}\n   ${plan[1]}\n`);
    expect(screen()).not.toMatch(/turn 1 of session|received \d+ bytes|nonce \[jg/);
    expect(io.saved.at(-1)?.turns.at(-1)?.reply).toBe(plan.join('\n'));
    expect(replyFromScreen(screen(), 'aa11', demo)).toBe(plan.join('\n'));

    // The next turn gets the plan and answers with a diff; its context lines keep their leading space.
    io.files['turn_2.md'] = `---\nturn: 2\n---\n${plan.join('\n')}\n`;
    submit('Read turn_2.md and do what it asks. [jg:bb22]');
    io.advance(1000);
    const diff = workReply(plan.join('\n'));
    expect(diff).toContain('   "type": "module",');
    expect(io.saved.at(-1)?.turns.at(-1)?.reply).toBe(diff.join('\n'));
    expect(replyFromScreen(screen(), 'bb22', demo)).toBe(diff.join('\n'));
  });

  it('--replies work: a typed prompt is the handover; special prompts answer as before', () => {
    const { io, submit, screen } = setup({ replies: 'work' });
    submit('hello there');
    io.advance(1000);
    expect(screen()).toContain(' ✦ Read it: 2 words in 1 line, starting "hello there".\n');
    submit('/history');
    io.advance(1000);
    expect(screen()).toContain(' ✦ 1. hello there\n ✻ Worked for 1s');
  });
});
