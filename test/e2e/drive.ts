// Driving a real CLI in a private tmux pane: waiting for screens and typing prompts.

import type { CliName } from './clis.js';
import { zombieExitStatus } from '../../src/panes/process-home.js';
import { describePane, endedHowUnknown } from './pane-diagnosis.js';
import { SESSION, trimScreen, type PrivateTmux } from './private-tmux.js';
import { screenState, type ScreenState } from './screens.js';
import type { StubServer } from './stub-server.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export type ScreenCheck = RegExp | ((screen: string) => boolean);

const matches = (check: ScreenCheck, screen: string): boolean => (typeof check === 'function' ? check(screen) : check.test(screen));

/** How often a wait that has not matched yet asks tmux whether the pane's program still runs. */
const DEAD_CHECK_MS = 1_000;
/** How long a wait asks again for how a dead pane's program ended, while it is still exiting. */
const DEAD_STATUS_MS = 5_000;
/** Lines of a dead pane's history a failed wait shows: tmux moves its last screen there. */
const DEAD_HISTORY_LINES = 40;

/** What a dead pane showed last: tmux 3.3a scrolls its screen into the history and shows `Pane is dead (...)`. */
async function lastOutput(tmux: PrivateTmux): Promise<string> {
  const text = await tmux
    .run(['capture-pane', '-p', '-S', `-${DEAD_HISTORY_LINES}`, '-t', SESSION])
    .catch((err: unknown) => `(capture failed: ${String(err)})`);
  return trimScreen(text);
}

/**
 * Polls the pane until `check` holds; fails with the last screen seen and what the pane's program was
 * doing. A pane whose program has ended cannot change any more: the wait fails then (tmux is asked once
 * a second), with how the program ended and its last output, rather than at its deadline.
 */
export async function waitForScreen(
  tmux: PrivateTmux,
  check: ScreenCheck,
  opts: { timeoutMs?: number; what?: string; intervalMs?: number } = {},
): Promise<string> {
  const { timeoutMs = 30_000, intervalMs = 100 } = opts;
  const started = Date.now();
  const deadline = started + timeoutMs;
  const what = opts.what ?? String(check);
  let screen = '';
  let lastDeadCheck = started;
  for (;;) {
    screen = await tmux.capture().catch((err: unknown) => `(capture failed: ${String(err)})`);
    if (matches(check, screen)) return screen;
    if (Date.now() > deadline) {
      const status = await tmux.paneStatus();
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${describePane(status)}\nthe screen was:\n${screen}`);
    }
    if (Date.now() - lastDeadCheck >= DEAD_CHECK_MS) {
      lastDeadCheck = Date.now();
      let status = await tmux.paneStatus();
      // tmux may see the pane's terminal close before it has reaped the program, and how it ended (its
      // status or signal) shows only once it has; tmux 3.3a under load sometimes never does (CI saw 8 s go
      // by). The kernel keeps an unreaped program as a zombie with its exit status (as `up` reads it):
      // asked both, for at most 5 s.
      for (const asked = Date.now(); endedHowUnknown(status) && Date.now() - asked <= DEAD_STATUS_MS;) {
        const zombie = await zombieExitStatus(status.pid);
        if (zombie !== null) status = { ...status, status: zombie };
        else {
          await sleep(50);
          status = (await tmux.paneStatus()) ?? status;
        }
      }
      if (status?.dead === true) {
        // Once more: what it wrote before it ended may have reached tmux after the capture above, and
        // tmux draws its own `Pane is dead (...)` line only once it has reaped the program (CI, under
        // load: the status was known, from the zombie, before that line was drawn): looked at until that
        // line shows, for at most DEAD_STATUS_MS.
        let last = await tmux.capture().catch(() => '');
        for (const asked = Date.now(); !matches(check, last) && !/Pane is dead/.test(last) && Date.now() - asked <= DEAD_STATUS_MS;) {
          await sleep(50);
          last = await tmux.capture().catch(() => '');
        }
        if (matches(check, last)) return last;
        throw new Error(`gave up after ${Date.now() - started} ms waiting for ${what}: ${describePane(status)}; its last output:\n${await lastOutput(tmux)}`);
      }
    }
    await sleep(intervalMs);
  }
}

export function waitForState(cli: CliName, tmux: PrivateTmux, state: ScreenState, opts: { timeoutMs?: number; also?: ScreenCheck } = {}): Promise<string> {
  const { also } = opts;
  return waitForScreen(tmux, (s) => screenState(cli, s) === state && (also === undefined || matches(also, s)), {
    timeoutMs: opts.timeoutMs,
    what: `${cli} ${state}${also !== undefined ? ` with ${String(also)}` : ''}`,
  });
}

/** Polls until `check` holds; fails with `describe()` of what was there. */
export async function waitUntil(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** Minimum gap between the typed text and Enter: gemini and codex take a sooner Enter as pasted. */
const ENTER_GAP_MS = 200;

/**
 * Types a one-line prompt and submits it: the text with `send-keys -l`, then (once it shows on
 * screen, plus a short gap) Enter. Done when the stub got a turn request carrying the prompt; Enter
 * is pressed once more only if nothing was sent and the pane is not busy (qwen has lost one).
 */
export async function typePrompt(tmux: PrivateTmux, stub: StubServer, cli: CliName, text: string): Promise<void> {
  const before = stub.requests.length;
  await tmux.run(['send-keys', '-t', 'e2e', '-l', text]);
  const probe = text.slice(0, 40);
  await waitForScreen(tmux, (s) => s.includes(probe), { timeoutMs: 10_000, what: `the typed text "${probe}"` });
  await sleep(ENTER_GAP_MS);
  await tmux.run(['send-keys', '-t', 'e2e', 'Enter']);
  const sent = (): boolean => stub.requests.slice(before).some((r) => r.purpose === 'turn' && (r.lastUserText ?? '').includes(probe));
  const deadline = Date.now() + 5_000;
  while (!sent() && Date.now() < deadline) await sleep(50);
  if (!sent() && screenState(cli, await tmux.capture()) === 'idle') {
    await tmux.run(['send-keys', '-t', 'e2e', 'Enter']);
  }
  await waitUntil(sent, `the stub to receive the prompt "${probe}" from ${cli}`, 20_000);
}

/** Waits until the screen stops changing for `quietMs` (or `timeoutMs` passes: spinners never stop). */
export async function settledScreen(tmux: PrivateTmux, quietMs = 700, timeoutMs = 4_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let screen = await tmux.capture();
  let since = Date.now();
  while (Date.now() - since < quietMs && Date.now() < deadline) {
    await sleep(100);
    const next = await tmux.capture();
    if (next !== screen) {
      screen = next;
      since = Date.now();
    }
  }
  return screen;
}
