import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createActor, fromPromise, toPromise } from 'xstate';
import { deliveryMachine, type DeliveryResult } from '../../machines/delivery.machine.js';
import type { PaneWatcher } from '../detect/pane-watcher.js';
import type { Profile } from '../profiles/schema.js';
import { withLock } from '../sessions/lock.js';
import { capturePane, loadBuffer, pasteBuffer, sendKeys } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import { inputAreaLines, promptEvidence, sightPrompt, type PromptSighting } from './evidence.js';
import { sanitizeText } from './sanitize.js';

export interface DeliveryTarget {
  paneId: string;
  agent: string;
  profile: Profile;
}

export interface DeliverOptions {
  /** Folder for the cross-process per-pane locks (`.jaggers/locks`). */
  lockDir: string;
  /** How long to wait after the first submit before checking whether the text is still in the input box. */
  retryAfterMs?: number;
  readyTimeoutMs?: number;
  verifyTimeoutMs?: number;
  /**
   * The nonce the text carries as `[jg:<nonce>]`: its echo above the input area proves the prompt
   * was taken. Without one, the echo of the text's tail is looked for instead.
   */
  nonce?: string;
}

export type Delivered = DeliveryResult & { agent: string; paneId: string; bytes: number; ms: number };

let bufferSeq = 0;

// In this process, one queue per pane; across processes, a lock file per pane.
const queues = new Map<string, Promise<unknown>>();

/** The tail of the text as the input box would show it: its last non-empty line, last 24 characters. */
function inputTail(text: string): string {
  const lines = text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  return (lines.at(-1) ?? '').slice(-24).trim();
}

function waitReady(watcher: PaneWatcher, target: DeliveryTarget, timeoutMs: number): Promise<void> {
  const ready = new Set<string>(target.profile.delivery.ready);
  return new Promise<void>((resolve, reject) => {
    const check = (status: string | undefined) => {
      if (status === undefined) return false;
      if (status === 'exited') {
        done();
        reject(new Error(`exited: the pane of ${target.agent} is dead`));
        return true;
      }
      if (ready.has(status)) {
        done();
        resolve();
        return true;
      }
      return false;
    };
    const off = watcher.onChange((c) => {
      if (c.pane.paneId === target.paneId) check(c.status);
    });
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${watcher.status(target.paneId) ?? 'unknown'} after ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      off();
    };
    check(watcher.status(target.paneId));
  });
}

/**
 * Run `fn` while holding the pane: one queue per pane in this process, and a lock file per pane
 * across processes, so concurrent senders never interleave and keep the order they got the pane in.
 */
export function withPaneLock<T>(paneId: string, lockDir: string, fn: () => Promise<T>): Promise<T> {
  const run = async (): Promise<T> => {
    await mkdir(lockDir, { recursive: true });
    return withLock(path.join(lockDir, `pane-${paneId.slice(1)}`), fn, { timeoutMs: 10 * 60_000 });
  };
  const prev = queues.get(paneId) ?? Promise.resolve();
  const mine = prev.then(run, run);
  const tail = mine.catch(() => {});
  queues.set(paneId, tail);
  void tail.then(() => {
    if (queues.get(paneId) === tail) queues.delete(paneId);
  });
  return mine;
}

/** Deliver one prompt to one agent pane, exactly once, and know that it was taken. */
export function deliver(client: ControlClient, watcher: PaneWatcher, target: DeliveryTarget, rawText: string, opts: DeliverOptions): Promise<Delivered> {
  return withPaneLock(target.paneId, opts.lockDir, () => deliverNow(client, watcher, target, rawText, opts));
}

/** Deliver while the caller already holds the pane (see `withPaneLock`). */
export async function deliverNow(
  client: ControlClient,
  watcher: PaneWatcher,
  target: DeliveryTarget,
  rawText: string,
  opts: DeliverOptions,
): Promise<Delivered> {
  const started = performance.now();
  const text = sanitizeText(rawText);
  const d = target.profile.delivery;
  const mark = opts.nonce ? `[jg:${opts.nonce}]` : inputTail(text);
  const inputLines = inputAreaLines(target.profile) || 6;
  const sight = (screen: string) => sightPrompt(screen, mark, inputLines);
  /** The pane before the paste: later screens must show one more echo of the prompt than this. */
  let before: PromptSighting | null = null;
  const actor = createActor(
    deliveryMachine.provide({
      actors: {
        waitReady: fromPromise(() => waitReady(watcher, target, opts.readyTimeoutMs ?? d.readyTimeoutMs)),
        paste: fromPromise(async () => {
          const [mode] = await client.runOk(['display-message', '-p', '-t', target.paneId, '#{pane_in_mode}']);
          if (mode === '1') await sendKeys(client, target.paneId, ['-X', 'cancel']);
          before = sight(await capturePane(client, target.paneId));
          const name = `jaggers-${target.paneId.slice(1)}-${process.pid}-${++bufferSeq}`;
          await loadBuffer(client, name, text);
          await pasteBuffer(client, name, target.paneId);
        }),
        submit: fromPromise(async () => {
          await sendKeys(client, target.paneId, d.submitKeys);
          watcher.inputSent(target.paneId);
        }),
        look: fromPromise(async () => promptEvidence(before!, sight(await capturePane(client, target.paneId)))),
      },
    }),
    {
      input: {
        settleMs: d.settleMs,
        retryAfterMs: opts.retryAfterMs ?? 1500,
        verifyTimeoutMs: opts.verifyTimeoutMs ?? d.verifyTimeoutMs,
        maxSubmitRetries: d.maxSubmitRetries,
      },
    },
  );
  const offStatus = watcher.onChange((c) => {
    if (c.pane.paneId !== target.paneId || actor.getSnapshot().status !== 'active') return;
    if (c.status === 'exited') actor.send({ type: 'PANE_GONE', error: `the pane of ${target.agent} died` });
    else actor.send({ type: 'STATUS', status: c.status });
  });
  // Visible screens only, before and after: a TUI that clears its screen to redraw leaves copies of its
  // input box (with the typed text in it) in the scrollback, which would count as echoes.
  const offScreen = watcher.onScreen((paneId, screen) => {
    if (paneId === target.paneId && before && actor.getSnapshot().status === 'active') actor.send({ type: 'SCREEN', evidence: promptEvidence(before, sight(screen)) });
  });
  actor.start();
  try {
    const result = await toPromise(actor);
    return { ...result, agent: target.agent, paneId: target.paneId, bytes: Buffer.byteLength(text), ms: performance.now() - started };
  } finally {
    offStatus();
    offScreen();
  }
}
