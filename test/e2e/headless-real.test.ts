// Headless turns in an agent's pinned conversation while its TUI lives in a tmux pane, driven
// directly with tmux (no jaggers), in the order jaggers should use:
//
//   TUI started with its pin args (codex: none)
//   -> stop the TUI (respawn-pane -k to a placeholder; wait for its process group to exit)
//   -> headless FIRST turn, which creates the conversation under the pinned id (codex: a new thread)
//   -> pane restarted with the resume args -> a pane turn that carries the headless turn
//   -> stop the TUI -> a later headless turn (resume args) -> pane restarted -> a pane turn with all
//
// Why stop the TUI before a headless turn instead of only restarting it after:
// - gemini writes a turnless session file at start, which makes `--session-id <id>` fail (exit 42,
//   "already exists"); on a clean exit (SIGHUP) the TUI deletes that file itself (not on SIGKILL).
//   Worse, a TUI still running its fresh session deletes the path it started on when it exits: if
//   that file was gone (another gemini's session cleanup removes turnless files) and a headless
//   first turn wrote the same name (session-<minute>-<id8>.jsonl, same minute), the conversation is lost.
// - codex holds a writer lock on its thread: `exec resume` fails ("already has an active writer")
//   while the TUI has the thread open.
// - claude and qwen accept headless turns beside the TUI, but the TUI does not see them: its next turn
//   forks the conversation from its own last entry, and a resume then follows that fork.
// The tests below check those failures where they are cheap, then assert on the stub's requests that
// every pane turn and every headless turn carried all the turns before it.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { resumeArgs, startArgs } from './cli-env.js';
import { CLI_NAMES, cliBinary, factsSuite, isChosen, type CliName } from './clis.js';
import { waitUntil } from './drive.js';
import { killGroup, SESSION } from './private-tmux.js';
import { createRig, type CliRig } from './rig.js';
import { codexSessionIds, opencodeSessions, sessionFile } from './session-files.js';
import { opencodeRunJson } from '../../src/clis/opencode/headless.js';
import type { RecordedRequest } from './stub-server.js';

/** A headless run's outcome, and where the reply and the conversation id come from. */
interface Headless {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
}

interface HeadlessArgs {
  /** A first turn that creates the conversation: under `id` (claude, gemini, qwen), or a new codex thread. */
  first(id: string, prompt: string, replyFile: string): string[];
  /** A later turn in conversation `id`. */
  later(id: string, prompt: string): string[];
  /** What a turn prints on stdout for `reply` (default: the reply and a newline). */
  printed?: (reply: string) => string;
  /** What `later` prints when the conversation has no turn yet (the defect this file is about). */
  noConversation?: { exitCode: number; stderr: RegExp };
}

const HEADLESS: Record<CliName, HeadlessArgs> = {
  claude: {
    first: (id, prompt) => ['--session-id', id, '-p', prompt],
    later: (id, prompt) => ['--resume', id, '-p', prompt],
    noConversation: { exitCode: 1, stderr: /^No conversation found with session ID: / },
  },
  qwen: {
    first: (id, prompt) => ['--session-id', id, '-p', prompt],
    later: (id, prompt) => ['-r', id, '-p', prompt],
    noConversation: { exitCode: 1, stderr: /^No saved session found with ID / },
  },
  gemini: {
    first: (id, prompt) => ['--session-id', id, '-p', prompt],
    later: (id, prompt) => ['-r', id, '-p', prompt],
    noConversation: { exitCode: 42, stderr: /No previous sessions found for this project/ },
  },
  // `--skip-git-repo-check`: exec refuses a folder outside a git repository (trusted or not).
  // First turn: the thread id is in the `thread.started` event, the final reply in the -o file.
  codex: {
    first: (_id, prompt, replyFile) => ['exec', '--json', '--skip-git-repo-check', '-o', replyFile, prompt],
    later: (id, prompt) => ['exec', '--skip-git-repo-check', 'resume', id, prompt],
  },
  // First turn: JSON events, each with the sessionID opencode chose; later turns print the reply alone.
  // The prompt goes as one argument a word: `run` puts an argument with a space in quotes (`"a b"`).
  opencode: {
    first: (_id, prompt) => ['run', '--format', 'json', ...prompt.split(' ')],
    later: (id, prompt) => ['run', '--session', id, ...prompt.split(' ')],
  },
  // `-s`: the reply alone on stdout (the usage summary goes to stderr otherwise), and a blank line.
  copilot: {
    first: (id, prompt) => ['--session-id', id, '-p', prompt, '-s'],
    later: (id, prompt) => [`--resume=${id}`, '-p', prompt, '-s'],
    printed: (reply) => `${reply}\n\n`,
  },
};

/** Runs the CLI headless in the rig's folder and environment, stdin closed, in its own process group. */
async function headless(r: CliRig, args: string[]): Promise<Headless> {
  const child = execa(cliBinary(r.cli), args, {
    cwd: r.cwd,
    env: r.env,
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    detached: true,
    stripFinalNewline: false,
    timeout: 60_000,
  });
  try {
    const res = await child;
    return { exitCode: res.exitCode, stdout: String(res.stdout), stderr: String(res.stderr) };
  } finally {
    // Whatever it started (codex's native binary under its node launcher) goes with it.
    if (child.pid !== undefined) await killGroup(child.pid, 500);
  }
}

const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Ends the TUI the way jaggers can without losing the pane: `respawn-pane -k` (tmux closes the pty,
 * the TUI gets SIGHUP and exits cleanly) to a placeholder; done when the TUI's process group is gone.
 */
async function stopTui(r: CliRig): Promise<void> {
  const tmux = r.tmux();
  const pid = await tmux.panePid();
  await tmux.run(['respawn-pane', '-k', '-t', SESSION, '--', 'sh', '-c', 'echo "(headless turn running)"; exec sleep infinity']);
  if (pid !== undefined) await waitUntil(() => !groupAlive(pid), `${r.cli} (pid ${pid}) to exit`, 15_000);
}

/** Starts the TUI again in the same pane (and tmux server) with the resume arguments. */
async function resumeInPane(r: CliRig, id: string): Promise<void> {
  await r.tmux().run(['respawn-pane', '-k', '-t', SESSION, '-c', r.cwd, '--', cliBinary(r.cli), ...resumeArgs(r.cli, id)]);
}

const replyTo = (prompt: string): string => `stub reply to: ${prompt}`;

/** The one turn request that carried `prompt` as its newest user text. */
function turnOf(r: CliRig, prompt: string): RecordedRequest {
  const found = r.stub.turns().filter((t) => t.lastUserText === prompt);
  expect(found, `requests carrying "${prompt}"`).toHaveLength(1);
  return found[0] as RecordedRequest;
}

/** The request of `prompt` carried exactly the earlier prompts and the stub's replies to them, in order. */
function expectCarried(r: CliRig, prompt: string, earlier: string[]): void {
  const t = turnOf(r, prompt);
  expect(t.userTexts, `user texts sent with "${prompt}"`).toEqual([...earlier, prompt]);
  expect(
    t.assistantTexts.filter((a) => a.startsWith('stub reply to: ')),
    `replies sent with "${prompt}"`,
  ).toEqual(earlier.map(replyTo));
}

for (const cli of CLI_NAMES.filter(isChosen)) {
  const { title, skip } = factsSuite('headless', cli);
  describe.skipIf(skip)(title, () => {
    let rig: CliRig | undefined;

    afterEach(async () => {
      await rig?.dispose();
      rig = undefined;
    });

    it('a headless first turn creates the pinned conversation; the restarted pane and later headless turns carry every turn', async () => {
      const r = (rig = await createRig(cli));
      const spec = HEADLESS[cli];
      const printed = spec.printed ?? ((reply: string) => `${reply}\n`);
      const pinned = randomUUID();
      await r.start(startArgs(cli, pinned));
      await r.waitFor('idle', { timeoutMs: 45_000 });

      // The defect: the resume arguments find nothing before the first turn.
      if (spec.noConversation !== undefined) {
        const none = await headless(r, spec.later(pinned, 'too early'));
        expect(none.exitCode, none.stderr).toBe(spec.noConversation.exitCode);
        expect(none.stderr.trim()).toMatch(spec.noConversation.stderr);
      }
      // gemini's running TUI is in the way of a first turn: its turnless session file exists.
      if (cli === 'gemini') {
        const taken = await headless(r, spec.first(pinned, 'too early', ''));
        expect(taken.exitCode).toBe(42);
        expect(taken.stderr).toContain(`Session ID "${pinned}" already exists`);
      }

      // 1. Headless first turn, the TUI stopped.
      const h1 = 'headless first turn: kestrel';
      await stopTui(r);
      const replyFile = join(r.root, 'codex-last-message.txt');
      const first = await headless(r, spec.first(pinned, h1, replyFile));
      expect(first.exitCode, first.stderr).toBe(0);
      let id: string = pinned;
      if (cli === 'codex') {
        // stdout: one JSON event a line; the thread id comes first, the reply as an agent_message item.
        const events = first.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { type: string; thread_id?: string; item?: { type: string; text?: string } });
        id = events.find((e) => e.type === 'thread.started')?.thread_id ?? '';
        expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(codexSessionIds(r.home)).toEqual([id]);
        const messages = events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message');
        expect(messages.at(-1)?.item?.text).toBe(replyTo(h1));
        expect(readFileSync(replyFile, 'utf8')).toBe(replyTo(h1)); // no trailing newline
      } else if (cli === 'opencode') {
        const ran = opencodeRunJson(first.stdout);
        expect(ran.sessionId).toMatch(/^ses_\w+$/);
        id = ran.sessionId!;
        expect(ran.text).toBe(replyTo(h1));
        expect(opencodeSessions(cliBinary(cli), r.env, r.cwd).map((s) => s.id)).toEqual([id]);
      } else {
        expect(first.stdout).toBe(printed(replyTo(h1))); // the reply alone
      }
      expect(sessionFile(cli, r.home, r.cwd, id), `${cli} session file of ${id}`).toBeDefined();
      expectCarried(r, h1, []);

      // 2. The pane resumes the conversation the headless turn made.
      await resumeInPane(r, id);
      await r.waitFor('idle', { timeoutMs: 45_000, also: (s) => s.includes(replyTo(h1)) });
      await r.settle();
      const p2 = 'pane turn after the headless one: heron';
      await r.type(p2);
      await r.waitFor('idle', { also: (s) => s.includes(replyTo(p2)) });
      await r.settle();
      expectCarried(r, p2, [h1]);

      // codex's resumed TUI holds the thread: a headless turn beside it is refused.
      if (cli === 'codex') {
        const locked = await headless(r, spec.later(id, 'beside the tui'));
        expect(locked.exitCode).toBe(1);
        expect(locked.stderr).toContain(`thread ${id} already has an active writer`);
      }

      // 3. A later headless turn, the TUI stopped again.
      const h3 = 'second headless turn: plover';
      await stopTui(r);
      const later = await headless(r, spec.later(id, h3));
      expect(later.exitCode, later.stderr).toBe(0);
      expect(later.stdout).toBe(printed(replyTo(h3)));
      expectCarried(r, h3, [h1, p2]);

      // 4. The restarted pane carries all of it.
      await resumeInPane(r, id);
      await r.waitFor('idle', { timeoutMs: 45_000, also: (s) => s.includes(replyTo(h3)) });
      await r.settle();
      const p4 = 'pane turn after both: avocet';
      await r.type(p4);
      await r.waitFor('idle', { also: (s) => s.includes(replyTo(p4)) });
      expectCarried(r, p4, [h1, p2, h3]);
      if (cli === 'codex') expect(codexSessionIds(r.home)).toEqual([id]);
      if (cli === 'opencode') expect(opencodeSessions(cliBinary(cli), r.env, r.cwd).map((s) => s.id)).toEqual([id]);
    }, 300_000); // a hang guard: opencode under a loaded CI machine took over 180 s for its five turns
  });
}
