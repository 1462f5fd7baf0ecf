// The built fake agent run over plain pipes: flags, exit codes and the session files it keeps.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../../dist/src/fake-agent/main.js', import.meta.url));
const ID = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

let home: string;

/** Runs the agent with `input` on stdin (then end of input); fails after 15 s. */
function agent(args: string[], input = '', env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, JAGGERS_AGENT: undefined, ...env, HOME: home }, cwd: home });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fake agent ${args.join(' ')} did not exit; stdout:\n${stdout}\nstderr:\n${stderr}`));
    }, 15_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

beforeAll(() => {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
});
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-agent-cli-'));
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

describe('fake agent command line', () => {
  it('--version and unknown flags', async () => {
    expect(await agent(['--version'])).toEqual({ code: 0, stdout: 'fake-agent 1.0.0\n', stderr: '' });
    const bad = await agent(['--frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe("fake-agent: unknown option '--frobnicate' (see --help)\n");
  });

  it('session ids: in use, not found, and the list', async () => {
    expect((await agent(['--list-sessions'])).stdout).toBe('No sessions found.\n');
    const first = await agent(['--session-id', ID, '--think-ms', '0']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('\x1b[?2004h');
    expect(first.stdout).toContain('\x1b[?2004l');

    expect(await agent(['--session-id', ID])).toMatchObject({ code: 1, stderr: `Error: Session ID ${ID} is already in use.\n` });
    const other = '00000000-0000-4000-8000-000000000000';
    expect(await agent(['-r', other])).toMatchObject({ code: 1, stderr: `Error: No conversation found with session ID: ${other}\n` });
    expect((await agent(['--list-sessions'])).stdout).toBe(`1. (empty) (Just now) [${ID}]\n`);
  });

  it('/crash exits 3 and leaves its state file behind', async () => {
    const crashed = await agent(['--think-ms', '0'], '/crash\r');
    expect(crashed.code).toBe(3);
    expect(crashed.stderr).toContain('fake agent crashed');
    expect(fs.readdirSync(path.join(home, '.fake-agent', 'state'))).toHaveLength(1);
  });

  it('a bad rules file is a usage error naming the field', async () => {
    const rules = path.join(home, 'rules.json');
    fs.writeFileSync(rules, JSON.stringify([{ match: 1, reply: 'x' }]));
    const r = await agent(['--rules', rules]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`fake-agent: --rules ${rules}: [0].match must be a string, got 1 (number)\n`);
  });

  it('-p answers in the reply mode of --replies, and records that reply as the turn', async () => {
    fs.writeFileSync(path.join(home, 'h.md'), '---\nturn: 1\n---\nhello there\n');
    const prompt = 'Read h.md and do what it asks. [jg:cc33]';
    const receipt = await agent(['--session-id', ID, '-p', prompt]);
    expect(receipt).toMatchObject({ code: 0, stderr: '' });
    expect(receipt.stdout).toMatch(
      /^turn 1 of session 6f1c2a3b\nread h\.md \(\d+ bytes, sha256:[0-9a-f]{64}\)\nanswer: hello there\nreceived \d+ bytes sha256:[0-9a-f]{64}\nnonce \[jg:cc33\]\n$/,
    );

    // The same handover in work mode: JAGGERS_AGENT says what kind of work it is.
    const work = await agent(['--replies', 'work', '--resume', ID, '-p', prompt], '', { JAGGERS_AGENT: 'planner' });
    expect(work).toMatchObject({ code: 0, stderr: '' });
    const plan = work.stdout.trimEnd().split('\n');
    expect(plan[0]).toBe('Plan: hello there');
    expect(plan.slice(1).map((l) => l.slice(0, 3))).toEqual(['1. ', '2. ', '3. ']);
    const session = JSON.parse(fs.readFileSync(path.join(home, '.fake-agent', 'sessions', `${ID}.json`), 'utf8')) as {
      turns: { prompt: string; reply: string }[];
    };
    expect(session.turns.map((t) => t.prompt)).toEqual([prompt, prompt]);
    expect(session.turns[1]!.reply).toBe(work.stdout.trimEnd());
  });
});
