// Captures real claude transcripts into test/fixtures/transcripts/claude-<version>-<what>.jsonl (see the
// README there). Not part of the normal run: skipped unless JAGGERS_CAPTURE_TRANSCRIPTS=1:
//
//   JAGGERS_CAPTURE_TRANSCRIPTS=1 npx vitest run test/e2e/capture-transcripts.test.ts
//
// Each file is claude's own, copied when the turn reached the state the fixture is named after, with
// the temp folder's path replaced by a placeholder. One is derived: torn-last-line is two-turns with
// its last line cut in half (a read while claude writes).

import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAUDE_VERSION, HANDOVER, PROMPT, ROOT_PLACEHOLDER, TAG, fixtureFile, type TranscriptFixture } from '../helpers/claude-transcripts.js';
import { cliBinary, CLIS, isCliInstalled } from './clis.js';
import { waitForScreen, waitUntil } from './drive.js';
import { createRig, type CliRig } from './rig.js';
import { sessionFile } from './session-files.js';
import type { Reply } from './stub-server.js';
import { defaultScript } from './stub-script.js';

const enabled = process.env.JAGGERS_CAPTURE_TRANSCRIPTS === '1';

/** The transcript's text now ('' before claude has written it). */
function transcript(r: CliRig, id: string): string {
  const f = sessionFile('claude', r.home, r.cwd, id);
  return f !== undefined && existsSync(f) ? readFileSync(f, 'utf8') : '';
}

const count = (text: string, needle: string): number => text.split(needle).length - 1;
const TURN_END = '"subtype":"turn_duration"';

async function waitForTranscript(r: CliRig, id: string, check: (t: string) => boolean, what: string): Promise<string> {
  await waitUntil(() => check(transcript(r, id)), what, 30_000);
  return transcript(r, id);
}

function save(r: CliRig, name: TranscriptFixture, text: string): void {
  const file = fixtureFile(name);
  writeFileSync(file, text.replaceAll(r.root, ROOT_PLACEHOLDER));
  console.log(`saved ${file}`);
}

/** The first line that contains `needle`. */
const lineOf = (text: string, needle: string): number => text.split('\n').findIndex((l) => l.includes(needle));

/** claude with a handover file in its folder, started on a new pinned session. */
async function startClaude(r: CliRig, opts: { bypass?: boolean } = {}): Promise<string> {
  const id = randomUUID();
  mkdirSync(join(r.cwd, '.jaggers', 'handover'), { recursive: true });
  writeFileSync(join(r.cwd, '.jaggers', 'handover', 'turn_1_ab.md'), HANDOVER);
  if (opts.bypass) r.env.IS_SANDBOX = '1'; // --dangerously-skip-permissions refuses root without it
  await r.start(['--session-id', id, ...(opts.bypass ? ['--dangerously-skip-permissions'] : [])]);
  // The bypass mode's footer has no `? for shortcuts`: wait for the input box instead.
  await waitForScreen(r.tmux(), (s) => /^❯ *$/m.test(s) && !/esc to interrupt/.test(s), { timeoutMs: 45_000, what: 'claude idle' });
  return id;
}

const slowly = (reply: Reply): Reply => (reply.kind === 'text' ? { ...reply, chunks: 4, delayMs: 400 } : reply);

const idleAfter = (r: CliRig, text: RegExp) =>
  waitForScreen(r.tmux(), (s) => text.test(s) && /^❯ *$/m.test(s) && !/esc to interrupt/.test(s), { what: `claude idle after ${String(text)}` });

describe.skipIf(!enabled || !isCliInstalled('claude'))(`capture claude ${CLIS.claude.version} transcripts (JAGGERS_CAPTURE_TRANSCRIPTS=1)`, () => {
  let rig: CliRig | undefined;

  afterEach(async () => {
    await rig?.dispose();
    rig = undefined;
  });

  it('the versions agree', () => expect(CLIS.claude.version).toBe(CLAUDE_VERSION));

  it('simple, streaming and tool-approval-pending: a slow answer, then a tool call waiting for approval', async () => {
    const r = (rig = await createRig('claude'));
    const id = await startClaude(r);
    r.stub.setScript((req) => slowly(defaultScript(req, r.cwd)));
    await r.type(PROMPT.simple);
    const streaming = await waitForTranscript(r, id, (t) => t.includes(TAG.simple), 'the prompt in the transcript');
    expect(streaming, 'the prompt was written before the answer').not.toContain('"type":"assistant"');
    save(r, 'streaming', streaming);
    save(r, 'simple', await waitForTranscript(r, id, (t) => t.includes(TURN_END), 'the turn end'));

    await idleAfter(r, /answer: the secret word is pelican/);
    r.stub.setScript();
    await r.type(PROMPT.approval);
    await r.waitFor('waiting', { timeoutMs: 45_000 });
    save(r, 'tool-approval-pending', await waitForTranscript(r, id, (t) => t.includes('"tool_use"'), 'the tool call'));
  }, 120_000);

  it('reply-above-prompt: a fast answer to a fresh claude, written above its prompt', async () => {
    // It happened in 5 of 6 tries while exploring; try a few fresh sessions.
    for (let attempt = 1; attempt <= 6; attempt++) {
      const r = (rig = await createRig('claude'));
      const id = await startClaude(r);
      await r.type(PROMPT.fast);
      const text = await waitForTranscript(r, id, (t) => t.includes(TAG.fast) && t.includes(TURN_END), 'the finished turn');
      if (lineOf(text, '"type":"assistant"') < lineOf(text, TAG.fast)) {
        save(r, 'reply-above-prompt', text);
        return;
      }
      console.log(`attempt ${attempt}: the reply came after the prompt; trying again`);
      await r.dispose();
      rig = undefined;
    }
    throw new Error('claude wrote every reply below its prompt in 6 tries');
  }, 300_000);

  it('two-turns, torn-last-line and interrupted: one session, three prompts, the third interrupted', async () => {
    const r = (rig = await createRig('claude'));
    const id = await startClaude(r);
    await r.type(PROMPT.first);
    await waitForTranscript(r, id, (t) => count(t, TURN_END) === 1, 'the first turn end');
    await idleAfter(r, /stub reply to: Say something about foxes/);
    await r.type(PROMPT.second);
    const two = await waitForTranscript(r, id, (t) => t.includes(TAG.second) && count(t, TURN_END) === 2, 'the second turn end');
    save(r, 'two-turns', two);
    // Derived: a reader that comes while claude writes the last line sees half of it.
    const body = two.trimEnd();
    const last = body.slice(body.lastIndexOf('\n') + 1);
    save(r, 'torn-last-line', body.slice(0, body.length - Math.ceil(last.length / 2)));

    await idleAfter(r, /stub reply to: Now something about owls/);
    r.stub.setScript(() => ({ kind: 'text', text: 'This is a long and slow answer that is interrupted before it ends.', chunks: 10, delayMs: 700 }));
    await r.type(PROMPT.interrupted);
    await r.waitFor('busy', { timeoutMs: 20_000 });
    // claude shows a text block only when it is complete, but keeps what has come: interrupt once the
    // stub has sent three of its pieces (it sends one every 700 ms from the request on).
    const asked = r.stub.turns().find((q) => q.lastUserText === PROMPT.interrupted);
    await waitUntil(() => asked !== undefined && Date.now() - asked.at > 2_300, 'three pieces of the answer sent');
    // An Escape can go unnoticed (one sent as the first words arrived did): press it until claude says so.
    for (let i = 0; i < 5 && !/Interrupted/.test(await r.tmux().capture()); i++) {
      await r.tmux().run(['send-keys', '-t', 'e2e', 'Escape']);
      await waitForScreen(r.tmux(), /Interrupted/, { timeoutMs: 1_500 }).catch(() => undefined);
    }
    save(r, 'interrupted', await waitForTranscript(r, id, (t) => t.includes('[Request interrupted by user'), 'the interruption'));
  }, 120_000);

  it('tool-running, tool and queued-prompt: slow tool calls, a prompt typed while one runs', async () => {
    const r = (rig = await createRig('claude'));
    const id = await startClaude(r, { bypass: true });
    // One slow tool call per prompt that asks for one; a request after a tool result gets text.
    const called = new Set<string>();
    r.stub.setScript((req) => {
      const tag = [TAG.tool, TAG.queuedFirst].find((t) => req.lastUserText?.includes(t));
      if (req.hasToolResult || tag === undefined || called.has(tag)) {
        return req.hasToolResult ? { kind: 'text', text: 'stub: the command ran.' } : defaultScript(req, r.cwd);
      }
      called.add(tag);
      return { kind: 'tool', command: 'sleep 3 && touch slow.txt', text: 'Let me run that command.' };
    });
    await r.type(PROMPT.tool);
    const running = await waitForTranscript(r, id, (t) => t.includes(TAG.tool) && t.includes('"tool_use"'), 'the tool call');
    expect(running, 'the tool still runs').not.toContain('"tool_result"');
    save(r, 'tool-running', running);
    save(r, 'tool', await waitForTranscript(r, id, (t) => t.includes(TURN_END), 'the turn end'));

    await idleAfter(r, /stub: the command ran/);
    await r.type(PROMPT.queuedFirst);
    await waitForTranscript(r, id, (t) => t.includes(TAG.queuedFirst) && count(t, '"type":"tool_use"') === 2, 'the second tool call');
    await r.tmux().run(['send-keys', '-t', 'e2e', '-l', PROMPT.queuedSecond]);
    await waitForScreen(r.tmux(), (s) => s.includes(PROMPT.queuedSecond), { what: 'the queued prompt typed' });
    await r.tmux().run(['send-keys', '-t', 'e2e', 'Enter']);
    save(r, 'queued-prompt', await waitForTranscript(r, id, (t) => t.includes(TAG.queuedSecond) && count(t, TURN_END) === 2, 'the turn end'));
  }, 120_000);

  it('headless: claude -p on a new session', async () => {
    const r = (rig = await createRig('claude'));
    const id = randomUUID();
    const res = await execa(cliBinary('claude'), ['--session-id', id, '-p', PROMPT.headless], {
      cwd: r.cwd,
      env: r.env,
      extendEnv: false,
      input: '',
      timeout: 60_000,
    });
    expect(res.stdout).toContain(TAG.headless);
    save(r, 'headless', transcript(r, id));
  }, 90_000);
});
