// The overview: one card per agent, redrawn one card at a time as events come in. A waiting agent's card
// has its question and one button per choice (`POST /v1/terminals/:agent/answer`, as `jaggers answer`).
import { ApiError, post, seg } from './api.js';
import { cardView, type CardView, type WorkLine } from './card.js';
import { fill, h } from './dom.js';
import { terminalPath, type HostCard, type Model } from './model.js';
import type { AnswerResult } from './types.js';

export class Overview {
  readonly el = h('section', { id: 'overview', 'aria-label': 'Agents' });
  private readonly grid = h('div', { class: 'cards' });
  private readonly empty = h('p', { class: 'muted' }, 'No agents yet: start them with `jaggers up`.');
  private readonly cards = new Map<string, HTMLElement>();
  /** What each card shows now (but the time in state): a card is drawn again only when it changed. */
  private readonly shown = new Map<string, string>();
  /** The cards of the hosts whose agents are not shown, by host. */
  private readonly hostCards = new Map<string, HTMLElement>();
  /** An answer's error, shown on its card until the card's question changes. */
  private readonly answerErrors = new Map<string, string>();

  constructor(
    private readonly model: Model,
    private readonly onAnswered: () => void,
  ) {
    this.el.append(this.empty, this.grid);
  }

  /** Draw every card again (a new list of agents). */
  renderAll(now = Date.now()): void {
    const keys = [...this.model.terminals.keys()];
    for (const [k, el] of this.cards) {
      if (this.model.terminals.has(k)) continue;
      el.remove();
      this.cards.delete(k);
      this.shown.delete(k);
    }
    for (const k of keys) this.render(k, now);
    // In the API's order.
    keys.forEach((k, i) => {
      const el = this.cards.get(k);
      if (el && this.grid.children[i] !== el) this.grid.insertBefore(el, this.grid.children[i] ?? null);
    });
    this.renderHosts();
    this.empty.hidden = keys.length > 0 || this.hostCards.size > 0;
  }

  /**
   * A card for each host whose agents are not shown (its connection is not up, its supervisor does not
   * answer: docs/hosts.md), after the agents' cards: the host, its connection in words, the agents it has.
   */
  renderHosts(): void {
    const down = [...this.model.hosts.values()].filter((x) => x.problem !== null);
    for (const [name, el] of this.hostCards) {
      if (down.some((x) => x.host === name)) continue;
      el.remove();
      this.hostCards.delete(name);
    }
    for (const x of down) {
      let el = this.hostCards.get(x.host);
      if (!el) {
        el = h('article', { class: 'card host-down' });
        el.dataset.host = x.host;
        this.hostCards.set(x.host, el);
      }
      // After the agents' cards, in the hosts' order.
      this.grid.append(el);
      el.dataset.state = x.state;
      fill(el, ...hostBody(x));
    }
    this.empty.hidden = this.model.terminals.size > 0 || this.hostCards.size > 0;
  }

  /** `eventId`: the event that changed it, kept on the card (`data-event`) for the benchmark and the curious. */
  render(key: string, now = Date.now(), eventId: number | null = null): void {
    const t = this.model.terminals.get(key);
    if (!t) return;
    const v = cardView(this.model, t, now);
    let el = this.cards.get(key);
    if (!el) {
      el = h('article', { class: 'card' });
      this.cards.set(key, el);
      this.grid.append(el);
      this.empty.hidden = true;
    }
    if (eventId !== null) el.dataset.event = String(eventId);
    const sign = JSON.stringify({ ...v, elapsed: null, error: this.answerErrors.get(key) ?? null });
    if (this.shown.get(key) === sign) return;
    this.shown.set(key, sign);
    el.className = `card st-${v.state}`;
    el.dataset.agent = key;
    el.dataset.state = v.state;
    if (v.host) el.dataset.host = v.host;
    fill(el, ...this.body(v));
  }

  /** Only the time in state changes with the clock: those texts, not whole cards. */
  tick(now = Date.now()): void {
    for (const [key, el] of this.cards) {
      const t = this.model.terminals.get(key);
      const out = el.querySelector('.elapsed');
      if (t && out) out.textContent = cardView(this.model, t, now).elapsed;
    }
  }

  private body(v: CardView): (Node | null)[] {
    const title = v.task ? `${v.agent} (task ${v.task})` : v.agent;
    return [
      h(
        'header',
        {},
        h('h2', {}, h('a', { href: `#/terminal/${seg(v.key)}`, class: 'agent', title: `Open ${title}'s terminal` }, title)),
        h('span', { class: 'state', role: 'status' }, h('span', { class: 'dot', 'aria-hidden': 'true' }), v.word),
      ),
      h(
        'p',
        { class: 'meta' },
        v.host ? h('span', { class: 'host', title: `runs on host ${v.host}` }, `on ${v.host} · `) : null,
        v.profile ? `${v.profile} · ` : '',
        'for ',
        h('span', { class: 'elapsed' }, v.elapsed || '—'),
      ),
      v.problem ? h('p', { class: 'problem' }, v.problem) : null,
      this.question(v),
      h('dl', {}, ...row('Now', v.current ? work(v.current) : 'nothing'), ...this.behind(v), ...this.details(v)),
    ];
  }

  private behind(v: CardView): Node[] {
    if (!v.behind.length && !v.pendingMessages) return [];
    const items = v.behind.map((w) => h('li', {}, work(w), w.note ? h('span', { class: 'muted' }, ` — ${w.note}`) : null));
    if (v.pendingMessages) items.push(h('li', {}, `${v.pendingMessages} message${v.pendingMessages === 1 ? '' : 's'} in the inbox`));
    return row('Next', h('ul', { class: 'queue' }, ...items));
  }

  private details(v: CardView): Node[] {
    const out: Node[] = [];
    out.push(...row('Session', v.sessionId ? h('code', { title: v.sessionId }, v.sessionId) : h('span', { class: 'muted' }, 'none pinned')));
    if (v.worktree) out.push(...row('Worktree', h('code', { title: v.worktree.path }, v.worktree.branch ?? v.worktree.name)));
    if (v.waitingFor && (v.state === 'starting' || v.state === 'busy' || v.state === 'error')) out.push(...row('Waits for', v.waitingFor));
    if (v.limit)
      out.push(
        ...row(
          'Limit',
          `${v.limit.resetAt ? `resets at ${new Date(v.limit.resetAt).toLocaleString()}` : 'reset time not shown'}; its work goes on at ${new Date(v.limit.retryAt).toLocaleTimeString()}`,
        ),
      );
    return out;
  }

  private question(v: CardView): Node | null {
    if (v.state !== 'waiting_input') {
      this.answerErrors.delete(v.key);
      return null;
    }
    const q = v.question;
    if (!q) return h('div', { class: 'question' }, h('p', {}, v.waitingFor ?? 'Waiting for you: open the terminal to see what it asks.'));
    const error = this.answerErrors.get(v.key);
    const box = h(
      'div',
      { class: 'question', role: 'group', 'aria-label': `${v.agent} asks` },
      h('p', { class: 'q' }, q.text),
      h(
        'div',
        { class: 'choices' },
        ...q.choices.map((c, i) =>
          h('button', { type: 'button', class: i === q.selected ? 'choice selected' : 'choice', onclick: () => void this.answer(v, i, box) }, `${i + 1}. ${c}`),
        ),
      ),
      error ? h('p', { class: 'error', role: 'alert' }, error) : null,
    );
    return box;
  }

  private async answer(v: CardView, i: number, box: HTMLElement): Promise<void> {
    const q = v.question;
    if (!q) return;
    for (const b of box.querySelectorAll('button')) b.disabled = true;
    try {
      await post<AnswerResult>(`${terminalPath(v.key)}/answer`, { choice: String(i + 1), expect: { text: q.text, choices: q.choices } });
      this.answerErrors.delete(v.key);
      this.onAnswered();
    } catch (e) {
      this.answerErrors.set(v.key, e instanceof ApiError ? e.message : String(e));
    }
    // Its buttons were disabled here, outside what the card shows: drawn again whatever comes next.
    this.shown.delete(v.key);
    this.render(v.key);
  }
}

/** A host whose agents are not shown: its name, its connection, the agents it has. */
function hostBody(x: HostCard): Node[] {
  return [
    h(
      'header',
      {},
      h('h2', {}, `host ${x.host}`),
      h('span', { class: 'state', role: 'status' }, h('span', { class: 'dot', 'aria-hidden': 'true' }), x.state === 'connected' ? 'not answering' : 'down'),
    ),
    h('p', { class: 'problem' }, x.problem ?? ''),
    h('dl', {}, ...row('Agents', x.names.length ? x.names.join(', ') : 'unknown'), ...row('Connection', x.detail)),
  ];
}

function row(term: string, def: Node | string): Node[] {
  return [h('dt', {}, term), h('dd', {}, def)];
}

function work(w: WorkLine): Node {
  return h('span', { class: 'work' }, h('code', {}, w.id), ' ', w.label, w.state !== 'running' ? h('span', { class: 'muted' }, ` (${w.state})`) : null);
}
