// Answering the menu an agent waits on (`jaggers answer`): the one way to press keys in a pane outside
// its queue, because the item in flight there is what made the agent ask, and it holds the queue until
// the answer is given. The same question must still be on screen, the choice's highlight is checked
// before Enter, and the menu must go away.
import stripAnsi from 'strip-ansi';
import type { AnswerResult } from '../api/types.js';
import type { PaneIO, PaneStatusSource } from '../delivery/ports.js';
import { describeQuestion, hasNumberedMenu, pickChoice, readQuestion, rowHighlight, sameQuestion, type Question } from '../detect/question.js';
import { JaggersError } from '../errors.js';
import type { Log } from '../logger.js';
import type { TerminalEntry } from './table.js';

export interface AnswerPorts {
  table: { get(nameOrId: string, task?: string | null, what?: string, op?: string): Promise<TerminalEntry> };
  watcher: Pick<PaneStatusSource, 'status' | 'onScreen'> & { waitFor(paneId: string, statuses: readonly string[], timeoutMs: number): Promise<unknown> };
  io: Pick<PaneIO, 'capture'>;
  keys: { literal(paneId: string, text: string): Promise<void>; send(paneId: string, keys: readonly string[]): Promise<void> };
  log: Log;
  /** Time passing (a timer; the tests' own clock). */
  delay?: (ms: number) => Promise<void>;
}

/**
 * After the highlight is drawn on the choice, before Enter: a TUI's menu takes a move into its key handler
 * only after it draws it (ink runs its effects after the frame is written), and an Enter in between chooses
 * the line the highlight left. claude 2.1.330 exited "this folder isn't trusted" with the highlight drawn on
 * "Yes, I trust this folder" (CI, a loaded machine); the menu's first choice is its "No".
 */
export const MOVE_SETTLE_MS = 300;

export class Answers {
  constructor(private readonly p: AnswerPorts) {}

  /**
   * Answer the menu an agent waits on: the same question must still be on screen (and be the one the
   * caller saw, when it says which), the choice is typed by its number, Enter follows only when the
   * number just moved the highlight, and the menu must go away.
   */
  async answer(agent: string, body: { choice: string; expect?: Question | undefined; task?: string | null | undefined }): Promise<AnswerResult> {
    const e = await this.p.table.get(agent, body.task, 'agent', 'answer');
    const paneId = e.pane.paneId;
    const name = e.pane.agent!;
    // Not through the pane's queue: the turn that made the agent ask holds it until the answer is given.
    // Answers to one pane still go one at a time.
    const prev = this.answering.get(paneId) ?? Promise.resolve();
    const run = prev
      .catch(() => {})
      .then(async () => {
        const state = this.p.watcher.status(paneId);
        if (state !== 'waiting_input') throw new JaggersError('E_NOT_WAITING', `answer: ${name} is ${state ?? 'not watched'}, not waiting for an answer`);
        const io = this.p.io;
        const screen = await io.capture(paneId);
        const q = readQuestion(screen);
        // A row menu's highlight is drawn in colour only: read it from a capture with escapes.
        const read =
          q?.layout === 'row'
            ? async () => {
                const styled = await io.capture(paneId, { ansi: true });
                const now = readQuestion(stripAnsi(styled));
                const selected = now?.layout === 'row' ? rowHighlight(styled, now.choices) : undefined;
                return now && selected !== undefined ? { ...now, selected } : now;
              }
            : async () => readQuestion(await io.capture(paneId));
        if (!q || q.choices.length === 0) throw new JaggersError('E_NOT_WAITING', `answer: ${name} shows no menu to answer${q ? ` (it asks: ${q.text})` : ''}`);
        if (body.expect && !sameQuestion(body.expect, q))
          throw new JaggersError(
            'E_SCREEN_CHANGED',
            `answer: ${name}'s screen changed: it now asks ${JSON.stringify(q.text)} (${q.choices.join(' / ')}), not ${JSON.stringify(body.expect.text)} (${body.expect.choices.join(' / ')}); nothing was sent`,
          );
        const picked = pickChoice(q, body.choice);
        if (typeof picked === 'string') throw new JaggersError('E_USAGE', `answer: ${picked}`);
        const gone = (ms: number) =>
          this.p.watcher.waitFor(paneId, ['busy', 'idle', 'done', 'error', 'exited'], ms).then(
            () => true,
            () => false,
          );
        const keys: string[] = [];
        // A numbered menu takes the digit (most CLIs choose at once; some only move the highlight, and
        // claude 2.1.330 drops keys for a moment after its menu appears): then the highlight is checked.
        if (hasNumberedMenu(screen) && q.selected !== picked.number - 1) {
          keys.push(String(picked.number));
          await this.p.keys.literal(paneId, String(picked.number));
          if (await gone(1500)) return this.answered(paneId, name, q, picked, keys);
        }
        return this.confirmChoice(paneId, name, q, picked, keys, gone, read);
      });
    this.answering.set(paneId, run);
    try {
      return await run;
    } finally {
      if (this.answering.get(paneId) === run) this.answering.delete(paneId);
    }
  }

  private readonly answering = new Map<string, Promise<unknown>>();

  /**
   * Put the highlight on the choice (arrow keys), check it is there on the same menu, press Enter, and
   * see the menu go. Arrows again when the highlight did not get there, Enter again when the menu stays as
   * it was (claude 2.1.330 ignores keys for a moment after a menu appears), three rounds at most; never
   * Enter on a highlight that is not on the choice.
   */
  private async confirmChoice(
    paneId: string,
    name: string,
    q: Question,
    picked: { number: number; label: string },
    keys: string[],
    gone: (ms: number) => Promise<boolean>,
    read: () => Promise<Question | null>,
  ): Promise<AnswerResult> {
    const target = picked.number - 1;
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = await read();
      if (!now || !sameQuestion(now, q)) {
        // The menu went away (the status may follow a moment later): answered. Another menu: refused.
        if (this.p.watcher.status(paneId) !== 'waiting_input' || !now || now.choices.length === 0) return this.answered(paneId, name, q, picked, keys);
        throw new JaggersError(
          'E_SCREEN_CHANGED',
          `answer: ${name}'s screen changed: it now asks ${describeQuestion(now)}; after ${keys.join(', ') || 'no key'} Enter was not pressed`,
        );
      }
      if (now.selected === undefined)
        throw new JaggersError(
          'E_SCREEN_CHANGED',
          `answer: ${name}'s menu shows no highlight to check after ${keys.join(', ') || 'no key'}; Enter was not pressed (answer it with jaggers attach ${name})`,
        );
      if (now.selected !== target) {
        const moves = target - now.selected;
        const [forward, back] = q.layout === 'row' ? ['Right', 'Left'] : ['Down', 'Up'];
        const arrows = Array.from({ length: Math.abs(moves) }, () => (moves > 0 ? forward! : back!));
        keys.push(...arrows);
        await this.p.keys.send(paneId, arrows);
        // The CLI redraws the highlight on its own time: the next screens the watcher reads (or a fresh one).
        // A row menu's highlight changes colours only, which the watcher does not report: read it again.
        const landed =
          q.layout === 'row'
            ? await readUntil(read, (r) => r?.selected === target, 3000)
            : await this.screenWhere(paneId, (screen) => readQuestion(screen)?.selected === target, 3000);
        if (!landed) {
          const after = await read();
          const same = after !== null && sameQuestion(after, q) && after.selected !== undefined;
          // The same menu with its highlight short of the choice: the CLI dropped the keys (claude 2.1.330
          // takes none for a moment after its menu appears; CI, a loaded machine). The next round moves it
          // from where it is now; Enter still only on the choice.
          if (same && attempt < 2) continue;
          const on = same ? `the highlight is on ${JSON.stringify(after.choices[after.selected!])}` : 'the menu changed';
          throw new JaggersError(
            'E_SCREEN_CHANGED',
            `answer: ${name}'s menu did not follow: after ${keys.join(', ')} ${on}, not on ${JSON.stringify(picked.label)}; Enter was not pressed`,
          );
        }
        await (this.p.delay ?? sleep)(MOVE_SETTLE_MS);
        // Still the same menu with the highlight on the choice? Otherwise the next round looks again.
        const settled = await read();
        if (!settled || !sameQuestion(settled, q) || settled.selected !== target) continue;
      }
      keys.push('Enter');
      await this.p.keys.send(paneId, ['Enter']);
      if (await gone(2000 + attempt * 1500)) return this.answered(paneId, name, q, picked, keys);
    }
    throw new JaggersError('E_TIMEOUT', `answer: ${name} still shows ${JSON.stringify(q.text)} after ${keys.join(', ')}`);
  }

  private answered(paneId: string, name: string, q: Question, picked: { number: number; label: string }, keys: string[]): AnswerResult {
    this.p.log.info({ agent: name, question: q.text, choice: picked.label, keys }, 'menu answered');
    return { agent: name, pane: paneId, question: q, chose: picked, keys, state: this.p.watcher.status(paneId) ?? 'unknown' };
  }

  /** The first screen of the pane (a fresh capture, then each one the watcher reads) that satisfies `ok`, or null after `ms`. */
  private async screenWhere(paneId: string, ok: (screen: string) => boolean, ms: number): Promise<string | null> {
    return new Promise<string | null>((resolve) => {
      const finish = (v: string | null) => {
        clearTimeout(timer);
        off();
        resolve(v);
      };
      const timer = setTimeout(() => finish(null), ms);
      const off = this.p.watcher.onScreen((id, screen) => {
        if (id === paneId && ok(screen)) finish(screen);
      });
      void this.p.io
        .capture(paneId)
        .then((screen) => ok(screen) && finish(screen))
        .catch(() => {});
    });
  }
}

/** Reads until `ok` or `ms` have passed (100 ms apart): for a change no pane output reports. */
async function readUntil<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  for (;;) {
    if (ok(await read())) return true;
    if (performance.now() >= end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
