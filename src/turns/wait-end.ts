// Waiting for the end of the turn a prompt started: whichever evidence comes first ends the wait (the
// CLI's transcript holds the finished reply to this prompt, or the screen shows the prompt's echo
// followed by the CLI's end-of-turn mark), never only one particular rule firing.
import { coalesced } from '../coalesced.js';
import type { PaneIO } from '../delivery/ports.js';
import { JaggersError } from '../errors.js';
import { inputAreaLines, RECENT_LINES, splitAtInputArea } from '../delivery/evidence.js';
import { describeScreenEnd, replyFromScreen, screenTurnEnd, type ScreenEnd } from '../handover/reply.js';
import type { Profile } from '../profiles/schema.js';
import type { TurnWatch } from './ports.js';

/**
 * How a turn ended. `reply`: the answer as the transcript, the hook or the screen (from the prompt's echo
 * on, replyFromScreen) gave it; `limit`: the turn was cut by a usage limit (the lines that said so), and
 * its reply is the limit's message, not an answer.
 */
export type TurnEnd = ({ by: 'transcript'; reply: string } | { by: 'screen'; reply: string } | { by: 'hook'; reply: string; event: string }) & {
  limit?: string[];
};

export interface WaitSpec {
  paneId: string;
  agent: string;
  profile: Profile;
  nonce: string;
  /** The machine's closed-turn count before the prompt went in. */
  turnsBefore: number;
  timeoutMs: number;
  artifact: string;
  /** The transcript's reply to this prompt, where the CLI keeps one; null when it does not. */
  readTranscript: (() => Promise<{ text: string; finished: boolean } | null>) | null;
  label: string;
  /** Stops the wait (a cancelled job): it rejects at once. */
  signal?: AbortSignal;
}

const HISTORY_LINES = 3000;

/** The screen from the prompt's echo on: the recent lines when the echo is in them, else the whole history. */
export async function screenSinceEcho(io: PaneIO, paneId: string, nonce: string, profile: Profile): Promise<string | null> {
  const recent = await io.capture(paneId, { history: RECENT_LINES }).catch(() => null);
  if (recent === null) return null;
  const tag = `[jg:${nonce}]`;
  if (recent.includes(tag) && splitAtInputArea(recent, inputAreaLines(profile)).above.some((l) => l.includes(tag))) return recent;
  return io.capture(paneId, { history: HISTORY_LINES }).catch(() => null);
}
/**
 * How long a screen that shows the end waits for the transcript's finished reply, where the CLI keeps one.
 * A CLI whose transcript works has written it by then; only one whose reader finds nothing pays it. At
 * 1.5 s, qwen 0.24.4 on a machine loaded by other test runs had not (its screen showed the reply's first
 * paragraph only, and that became the reply).
 */
const TRANSCRIPT_GRACE_MS = 5000;
/**
 * How long a finished reply in the transcript waits for the screen to stop showing busy: copilot 1.0.102
 * writes the turn's end before its footer stops saying `Working`, and a turn confirmed then was followed
 * by that busy screen, counted as a second turn. A screen busy longer than this does not hold the reply.
 */
const SCREEN_BUSY_GRACE_MS = 3000;
/**
 * How long a finished reply in the transcript waits for the hook's turn end, on a pane whose hooks
 * fire: a CLI writes its transcript a moment before it runs its Stop hook, and the hook's word (and
 * its reply) decides. A pane whose hooks went silent is not waited for.
 */
const HOOK_END_GRACE_MS = 1500;
/**
 * How long a screen that shows the turn's end but no reply under its prompt waits for the reply's lines:
 * opencode 1.18.33, on a machine loaded by a test run, drew its turn summary (`▣ Build · … · 15.4s`)
 * under the prompt before the reply's text, and an empty reply was recorded. A turn whose reply is
 * empty on screen (a tool call only) ends after this.
 */
export const EMPTY_REPLY_GRACE_MS = 3000;

export function waitForTurnEnd(watch: TurnWatch, io: PaneIO, w: WaitSpec): Promise<TurnEnd> {
  const hasDoneRules = w.profile.detect.rules.some((r) => r.status === 'done');
  const settleMs = Math.max(w.profile.detect.settleMs, 100);
  return new Promise<TurnEnd>((resolve, reject) => {
    let finished = false;
    let pause = 100;
    let retry: NodeJS.Timeout | undefined;
    /** What was seen last, for the timeout's message. */
    let sawTranscript = w.readTranscript ? 'not read yet' : null;
    let sawScreen: ScreenEnd | null = null;
    /** When the screen first showed the turn's end while the transcript had no finished reply yet. */
    let transcriptWait: number | undefined;
    /** When the transcript first had the finished reply while the screen still read busy. */
    let busyWait: number | undefined;
    /** When the transcript first had the finished reply while the pane's hooks had not ended the turn. */
    let hookWait: number | undefined;
    /** When the screen first showed the turn's prompt with the agent limited (its turn closed by the limit). */
    let limitWait: number | undefined;
    /** When the screen first showed the turn's end with nothing under the prompt to take as its reply. */
    let emptyWait: number | undefined;
    /** A screen that shows the end while the machine has not settled: it must stay so for settleMs. */
    let candidate: { screen: string; at: number } | null = null;

    const later = (ms: number) => {
      clearTimeout(retry);
      retry = setTimeout(() => void check(), ms);
    };
    /** The transcript's reply: true when it ended the wait or asked for a later look (a hook or the screen may still come). */
    const fromTranscript = async (status: string | undefined, hooked: boolean): Promise<boolean> => {
      const t = await w.readTranscript!().catch(() => null);
      sawTranscript = t === null ? 'no reply to this prompt yet' : t.finished ? 'a finished reply' : 'a reply still being written';
      if (!t?.finished) return false;
      if (hooked) {
        hookWait ??= performance.now();
        const waited = performance.now() - hookWait;
        // The hook's turn end changes the pane's state, which checks again at once.
        if (waited < HOOK_END_GRACE_MS) return (later(HOOK_END_GRACE_MS - waited), true);
      }
      // The pane's machine already says the turn ended (a CLI's state file decides that before its
      // screen is read again): the last screen reading is older than that, and holds nothing back.
      if (watch.snapshot(w.paneId)?.screen?.status === 'busy' && status === 'busy') {
        busyWait ??= performance.now();
        if (performance.now() - busyWait < SCREEN_BUSY_GRACE_MS) return (later(100), true);
      }
      finish(null, { by: 'transcript', reply: t.text });
      return true;
    };
    const check = coalesced(async () => {
      if (finished) return;
      const status = watch.status(w.paneId);
      if (status === 'exited') {
        return finish(new JaggersError('E_PANE_GONE', `${w.label}: ${w.agent}'s pane died before its turn ended; the handover file stays at ${w.artifact}`));
      }
      // A hook's turn end that carried the reply (claude/codex/qwen Stop's last_assistant_message): the
      // turn ended with it, and neither the transcript nor the screen is read.
      const hook = watch.hookEnd?.(w.paneId, w.turnsBefore);
      if (hook?.reply !== undefined) return finish(null, { by: 'hook', reply: hook.reply, event: hook.event });
      // A usage limit ends the turn too (the machine closed it): its screen says how.
      const settled = (status === 'done' || status === 'limited') && watch.turns(w.paneId) > w.turnsBefore;
      const hooked = watch.hooksExpected?.(w.paneId) === true;
      // On a pane whose hooks fire, the turn ends by the hook's word (with its reply, where the CLI's hook
      // carries one) or by the machine's own rules: until then the transcript is read only when the
      // screen has shown the end for the hook's grace with no hook end (below), not on every change.
      if (w.readTranscript && !(hooked && !hook && !settled) && (await fromTranscript(status, hooked))) return;
      // A history capture only when the visible screen may show an ended turn (cheap gate first).
      // On a pane whose hooks fire, a turn the machine still holds busy ends by the hook's word (or by the
      // machine's own quiet-screen rule after a hook start): the screen's history is not read for it.
      const held = status === 'busy' && hooked;
      const visible = watch.snapshot(w.paneId)?.screen?.status;
      const worthALook = settled || visible === 'limited' || (!held && (hasDoneRules ? visible === 'done' : visible !== 'busy' && visible !== 'waiting_input'));
      if (worthALook) {
        const screen = await screenSinceEcho(io, w.paneId, w.nonce, w.profile);
        if (finished || screen === null) return;
        sawScreen = screenTurnEnd(screen, w.nonce, w.profile);
        // The turn ended at a usage limit the machine read after this prompt (it closed the turn): its
        // screen shows the CLI's limit message, not its usual end-of-turn mark (claude's `● API Error:
        // ... (429)`, codex's `■ You’ve hit your usage limit`). The screen's reply is that message.
        const limit = () => watch.snapshot(w.paneId)?.context.lines ?? [];
        const cut = (): TurnEnd => ({ by: 'screen', reply: replyFromScreen(screen, w.nonce, w.profile), limit: limit() });
        if (sawScreen.echo && settled && status === 'limited' && !w.readTranscript && !watch.hooksExpected?.(w.paneId)) return finish(null, cut());
        if (sawScreen.echo && settled && status === 'limited') {
          limitWait ??= performance.now();
          if (performance.now() - limitWait >= TRANSCRIPT_GRACE_MS) return finish(null, cut());
          return later(200);
        }
        if (sawScreen.ended) {
          // Where the CLI keeps a transcript, it is the better reply (a screen may show less of it:
          // qwen 0.24.4 redraws some replies as their first paragraph): wait a moment for it.
          if (w.readTranscript) {
            // On a pane whose hooks fire, their turn end (and the reply it carries) is waited for first: a
            // screen can show the end a moment before the hook comes. The transcript only if none does.
            if (hooked && !hook && !settled) {
              hookWait ??= performance.now();
              if (performance.now() - hookWait < HOOK_END_GRACE_MS) return later(100);
              if (await fromTranscript(status, hooked)) return;
            }
            transcriptWait ??= performance.now();
            if (performance.now() - transcriptWait < TRANSCRIPT_GRACE_MS) return later(100);
          }
          // On a pane whose hooks fire, the hook's turn end (and the reply it carries) is the better
          // word too: a fast turn's screen can settle first (opencode's session.idle came after it).
          if (watch.hooksExpected?.(w.paneId)) {
            hookWait ??= performance.now();
            if (performance.now() - hookWait < HOOK_END_GRACE_MS) return later(100);
          }
          const reply = replyFromScreen(screen, w.nonce, w.profile);
          if (reply === '') {
            emptyWait ??= performance.now();
            if (performance.now() - emptyWait < EMPTY_REPLY_GRACE_MS) return later(200);
          }
          if (settled) return finish(null, { by: 'screen', reply });
          // The machine has not settled (a turn too fast for its busy screen, or a rule that missed):
          // the screen's evidence must hold for the settle time before it ends the turn.
          const now = performance.now();
          if (candidate && candidate.screen === screen && now - candidate.at >= settleMs) return finish(null, { by: 'screen', reply });
          if (!candidate || candidate.screen !== screen) candidate = { screen, at: now };
          return later(settleMs);
        }
        candidate = null;
      }
      // Done on screen but not confirmed: a transcript is written a moment after the screen settles.
      if (settled) {
        later(pause);
        pause = Math.min(pause * 2, 2000);
      }
    });
    const timer = setTimeout(() => {
      const snap = watch.snapshot(w.paneId);
      const state = snap ? `${snap.status} since ${new Date(snap.context.since).toISOString()} (rule ${snap.context.rule ?? 'none'})` : 'not watched';
      const transcript = sawTranscript === null ? '' : `; its transcript: ${sawTranscript}`;
      finish(
        new JaggersError(
          'E_TIMEOUT',
          `${w.label}: ${w.agent} did not finish its turn within ${w.timeoutMs / 1000} s: it is ${state}; ${describeScreenEnd(sawScreen)}${transcript}; the handover file stays at ${w.artifact}`,
        ),
      );
    }, w.timeoutMs);
    const onAbort = () => finish(new JaggersError('E_USAGE', `${w.label}: cancelled`));
    w.signal?.addEventListener('abort', onAbort, { once: true });
    const offChange = watch.onChange((c) => void (c.pane.paneId === w.paneId && check()));
    const offScreen = watch.onScreen((id) => void (id === w.paneId && check()));
    function finish(e: Error | null, end?: TurnEnd): void {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(retry);
      offChange();
      offScreen();
      w.signal?.removeEventListener('abort', onAbort);
      if (e) reject(e);
      else resolve(end!);
    }
    if (w.signal?.aborted) onAbort();
    else void check();
  });
}
