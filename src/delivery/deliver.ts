import { classify, regexOf } from '../detect/classify.js';
import type { Profile } from '../profiles/schema.js';
import { inputAreaLines, promptEvidence, RECENT_LINES, sightPrompt, strayPrompt, type PromptSighting } from './evidence.js';
import { describeQuestion, readQuestion } from '../detect/question.js';
import type { PaneIO, PaneStatusSource } from './ports.js';
import { sanitizeText } from './sanitize.js';
import { runDelivery, type DeliveryResult, type DeliveryWork } from './steps.js';

export interface DeliveryTarget {
  paneId: string;
  agent: string;
  profile: Profile;
}

export interface DeliverOptions {
  /** How long to wait after the first submit before checking whether the text is still in the input box. */
  retryAfterMs?: number;
  readyTimeoutMs?: number;
  verifyTimeoutMs?: number;
  /**
   * The nonce the text carries as `[jg:<nonce>]`: its echo above the input area proves the prompt
   * was taken. Without one, the echo of the text's tail is looked for instead.
   */
  nonce?: string;
  /** Take the text leaving the input box as proof (for `send`; see `DeliveryInput` in steps.ts). */
  acceptCleared?: boolean;
  /** How long a busy screen over an earlier prompt in the input box is given to read quiet (5 s). */
  strayQuietMs?: number;
}

export type Delivered = DeliveryResult & { agent: string; paneId: string; bytes: number; ms: number };

/** The input box holds another jaggers prompt that could not be cleared. */
class StrayPrompt extends Error {
  static readonly prefix = 'the input box of ';
}

/** The tail of the text as the input box would show it: its last non-empty line, last 24 characters. */
export function inputTail(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  return (lines.at(-1) ?? '').slice(-24).trim();
}

function waitReady(status: PaneStatusSource, target: DeliveryTarget, timeoutMs: number): Promise<void> {
  const ready = new Set<string>(target.profile.delivery.ready);
  return new Promise<void>((resolve, reject) => {
    const check = (now: string | undefined) => {
      if (now === undefined) return false;
      if (now === 'exited') {
        done();
        reject(new Error(`exited: the pane of ${target.agent} is dead`));
        return true;
      }
      if (now === 'waiting_input' && !ready.has(now)) {
        done();
        const q = readQuestion(status.lastScreen?.(target.paneId) ?? '');
        const what = q ? `asks ${describeQuestion(q)}` : 'is waiting for a person to answer on its screen';
        const how = q?.choices.length ? `jaggers answer ${target.agent} <number or label>` : `jaggers attach ${target.agent}`;
        reject(new Error(`waiting_input: ${target.agent} ${what}; answer it with \`${how}\``));
        return true;
      }
      if (ready.has(now)) {
        done();
        resolve();
        return true;
      }
      return false;
    };
    const off = status.onChange((c) => {
      if (c.pane.paneId === target.paneId) check(c.status);
    });
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${status.status(target.paneId) ?? 'unknown'} after ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      off();
    };
    check(status.status(target.paneId));
  });
}

/**
 * Deliver one prompt to one agent pane, exactly once, and know that it was taken. The caller holds
 * the pane (see `PaneQueue`), so nothing else types into it meanwhile.
 */
export async function deliverNow(io: PaneIO, status: PaneStatusSource, target: DeliveryTarget, rawText: string, opts: DeliverOptions = {}): Promise<Delivered> {
  const started = performance.now();
  const text = sanitizeText(rawText);
  const d = target.profile.delivery;
  const mark = opts.nonce ? `[jg:${opts.nonce}]` : inputTail(text);
  const inputLines = inputAreaLines(target.profile) || 6;
  const sight = (screen: string) => sightPrompt(screen, mark, inputLines);
  // What follows a prompt that was taken: its reply (the CLI's marker) or a turn summary. Not a busy
  // line: opencode draws its busy footer below the input box, under a prompt typed into it (CI: a
  // stray prompt read as taken while the footer lagged behind session.idle, and the next one joined it).
  const doneRules = target.profile.detect.rules.filter((r) => r.status === 'done');
  const answered = [...(target.profile.detect.replyMarker ? [regexOf(target.profile.detect.replyMarker)] : []), ...doneRules.map((r) => regexOf(r.pattern))];
  const stray = (screen: string) => strayPrompt(screen, inputLines, opts.nonce ?? null, answered);
  const isBusy = (screen: string) => classify({ screen, raw: '', rules: target.profile.detect.rules }).status === 'busy';
  /** The rules that read a turn's end: a `busy` they decided is a summary the machine had not seen when the prompt went in. */
  const summaryRules = new Set(doneRules.map((r) => r.name));
  /** The pane's screen once `ok` holds for it, looked at every 200 ms for up to `ms` (else the last look). */
  const lookUntil = async (last: string, ok: (screen: string) => boolean, ms: number): Promise<string> => {
    for (const until = performance.now() + ms; !ok(last) && performance.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(200, Math.max(1, until - performance.now()))));
      last = await io.capture(target.paneId);
    }
    return last;
  };
  /** The pane before the paste: later screens must show one more echo of the prompt than this. */
  let before: PromptSighting | null = null;
  /** That screen itself: a turn summary on it is the last turn's (the watcher must not count it as this prompt's). */
  let screenBefore: string | undefined;
  /** The pasted text showed in the input box before the submit key. */
  let pastedVisible = false;
  /**
   * The screen before the paste already read busy (the machine said ready on a hook's turn end while the
   * CLI still drew its busy footer, or did work of its own after it): a busy status after the submit key
   * then proves nothing (CI: opencode's busy footer after session.idle, the prompt dropped, the message
   * counted delivered). Only the prompt's echo (or the box emptied, where that counts) proves it then.
   */
  let busyBefore = false;
  /**
   * A text without a nonce (`send`) still in the input box was not submitted, whatever the screen shows
   * above it: opencode 1.18.33 lists `/compact` in its command menu above the box as it is typed (CI: the
   * Enter was lost, the menu read as the command's echo, the compaction never ran, and the next prompt was
   * pasted behind `/compact` in the box). Its submit key is pressed again.
   */
  const judge = (screen: string) => {
    const now = sight(screen);
    return opts.acceptCleared && now.inInput ? 'in-input' : promptEvidence(before!, now, pastedVisible);
  };
  const work: DeliveryWork = {
    waitReady: () => waitReady(status, target, opts.readyTimeoutMs ?? d.readyTimeoutMs),
    paste: async () => {
      // Both at once: the capture runs after the mode is left (one connection, commands in order).
      let [, screen] = await Promise.all([io.leaveMode(target.paneId), io.capture(target.paneId)]);
      // Ready by a hook's turn end while the screen still draws the turn busy: a prompt typed now may be
      // dropped (opencode after session.idle). Wait for the screen to catch up, within the hook's grace.
      if (isBusy(screen)) {
        const behind = status.screenBehind?.(target.paneId) ?? 0;
        if (behind > 0) screen = await lookUntil(screen, (now) => !isBusy(now), behind);
      }
      // An earlier prompt in the box on a screen that reads busy: the CLI still draws the last turn (or
      // works on that prompt after all). Judge it on a quiet screen; clear keys on a busy one could
      // interrupt a turn.
      const quietMs = opts.strayQuietMs ?? 5000;
      if (stray(screen) && isBusy(screen)) screen = await lookUntil(screen, (now) => !isBusy(now), quietMs);
      const left = stray(screen);
      if (left && isBusy(screen))
        throw new StrayPrompt(
          `the input box of ${target.agent} holds an earlier prompt ${left} and its screen stayed busy for ${quietMs} ms; look at it (jaggers attach ${target.agent})`,
        );
      if (left) {
        // An earlier prompt was typed but never submitted (its sender died between paste and Enter):
        // pasting now would join the two. Empty the box first, and see it empty (the TUI redraws
        // a moment after the keys).
        if (d.clearKeys.length) await io.sendKeys(target.paneId, d.clearKeys);
        screen = await lookUntil(screen, (now) => !stray(now), 3000);
        if (stray(screen))
          throw new StrayPrompt(
            `the input box of ${target.agent} still holds an earlier prompt ${left} that was never submitted; clear it by hand (jaggers attach ${target.agent})`,
          );
      }
      before = sight(screen);
      screenBefore = screen;
      busyBefore = isBusy(screen);
      await io.paste(target.paneId, text);
    },
    inspect: async () => {
      // Only `send` takes the text leaving the box as proof (acceptCleared): for a prompt with a
      // nonce, what the box showed before the submit key changes nothing, so no capture for it.
      if (opts.acceptCleared) pastedVisible = sight(await io.capture(target.paneId)).inInput;
    },
    submit: async () => {
      await io.sendKeys(target.paneId, d.submitKeys);
      status.inputSent(target.paneId, screenBefore);
    },
    look: async () => judge(await io.capture(target.paneId)),
  };
  const run = runDelivery(
    {
      settleMs: d.settleMs,
      retryAfterMs: opts.retryAfterMs ?? 1500,
      verifyTimeoutMs: opts.verifyTimeoutMs ?? d.verifyTimeoutMs,
      maxSubmitRetries: d.maxSubmitRetries,
      acceptCleared: opts.acceptCleared ?? false,
      verify: target.profile.detect.rules.length > 0,
    },
    work,
  );
  const offStatus = status.onChange((c) => {
    if (c.pane.paneId !== target.paneId || !run.active) return;
    if (c.status === 'exited') run.send({ type: 'PANE_GONE', error: `the pane of ${target.agent} died` });
    else if (c.status === 'busy' && c.rule && summaryRules.has(c.rule)) void echoInHistory();
    else if (!(busyBefore && c.status === 'busy')) run.send({ type: 'STATUS', status: c.status });
  });
  /**
   * A `busy` that a turn summary decided (the machine's turn too fast for its busy screen) is no proof by
   * itself: a summary hidden when the prompt went in reads as new once it shows again (CI: opencode's
   * command menu covered it, and a prompt that never went in counted taken, its job running for ever).
   * The turn it ends is this prompt's only if the prompt's echo is above the input area; a fast turn's
   * long reply may have pushed that echo off the visible screen, so the recent history is read (where a
   * TUI that clears its screen to redraw left copies of its input box, this is as weak as the busy was).
   */
  const echoInHistory = async () => {
    if (!opts.nonce || !before) return;
    const screen = await io.capture(target.paneId, { history: RECENT_LINES }).catch(() => null);
    if (screen !== null && run.active && sight(screen).echoes > before.echoes) run.send({ type: 'SCREEN', evidence: 'taken' });
  };
  // Visible screens only, before and after: a TUI that clears its screen to redraw leaves copies of its
  // input box (with the typed text in it) in the scrollback, which would count as echoes.
  const offScreen = status.onScreen((paneId, screen) => {
    if (paneId === target.paneId && before && run.active) run.send({ type: 'SCREEN', evidence: judge(screen) });
  });
  try {
    let result = await run.result;
    // A box that stays full is an agent not ready for us, not a pane that went away.
    if (result.kind === 'pane-gone' && result.error.startsWith(StrayPrompt.prefix)) result = { kind: 'not-ready', status: result.error };
    return { ...result, agent: target.agent, paneId: target.paneId, bytes: Buffer.byteLength(text), ms: performance.now() - started };
  } finally {
    offStatus();
    offScreen();
  }
}
