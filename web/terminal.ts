// An agent's pane in a real terminal emulator: `GET /v1/terminals/:agent/stream` (a snapshot with its
// colours, then the control connection's output) into xterm.js at the pane's own size. The page never
// resizes the tmux window: a narrow page gets a smaller font instead (the fit add-on measures). Typing
// is off until the person turns it on for this agent (`POST /v1/terminals/:agent/keys`).
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { ApiError, post } from './api.js';
import { terminalPath } from './model.js';
import { h } from './dom.js';

interface Snapshot {
  cols: number;
  rows: number;
  data: string;
  cursor?: { x: number; y: number };
  alternate?: boolean;
}

const MAX_FONT = 14;
const MIN_FONT = 6;

/** Agents typing was turned on for, in this tab: the switch stays as the person left it. */
const typingOn = new Set<string>();

export class TerminalView {
  readonly el: HTMLElement;
  private readonly term: Terminal;
  private readonly fit = new FitAddon();
  private readonly screen = h('div', { class: 'xterm-host' });
  private readonly status = h('p', { class: 'muted term-status', role: 'status' }, 'connecting…');
  private readonly error = h('p', { class: 'error', role: 'alert', hidden: true });
  private readonly typing: HTMLInputElement;
  private stream: EventSource | null = null;
  private size = { cols: 80, rows: 24 };
  /** Keys go out one request after another, in the order they were typed. */
  private sending: Promise<void> = Promise.resolve();
  private readonly onResize = () => this.fitFont();

  constructor(readonly key: string) {
    this.typing = h('input', { type: 'checkbox', role: 'switch', id: 'typing', 'aria-describedby': 'typing-help' });
    this.typing.checked = typingOn.has(key);
    this.typing.addEventListener('change', () => this.setTyping(this.typing.checked));
    this.term = new Terminal({
      cols: this.size.cols,
      rows: this.size.rows,
      fontSize: MAX_FONT,
      scrollback: 5000,
      disableStdin: !this.typing.checked,
      cursorBlink: false,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
      theme: { background: '#111318' },
    });
    this.term.loadAddon(this.fit);
    this.term.onData((d) => this.send(d));
    this.el = h(
      'section',
      { id: 'terminal', 'aria-label': `${key}'s terminal` },
      h(
        'header',
        { class: 'term-head' },
        h('a', { href: '#/', class: 'back' }, '← Agents'),
        h('h2', {}, key),
        h('label', { class: 'switch', for: 'typing' }, this.typing, h('span', {}, 'Typing')),
        h('span', { id: 'typing-help', class: 'muted' }, 'off: the terminal only shows the pane; on: your keys go to the agent'),
      ),
      this.status,
      this.error,
      this.screen,
    );
    this.setTypingLabel();
  }

  /** Open xterm in the page and start the stream (call once the element is in the document). */
  start(): void {
    this.term.open(this.screen);
    window.addEventListener('resize', this.onResize);
    const es = new EventSource(`${terminalPath(this.key)}/stream`);
    this.stream = es;
    es.addEventListener('snapshot', (e) => {
      const s = parse<Snapshot>(e);
      if (!s) return;
      this.setSize(s.cols, s.rows);
      // `data` is the whole screen as escapes: to the alternate screen first if the pane is on it, the
      // lines with their colours, then the cursor where the pane has it.
      this.term.reset();
      this.term.write(s.data);
      this.status.textContent = `live · ${s.cols}×${s.rows}`;
      this.status.classList.remove('error');
    });
    es.addEventListener('output', (e) => {
      const o = parse<{ data: string }>(e);
      if (o) this.term.write(o.data);
    });
    es.addEventListener('size', (e) => {
      const s = parse<{ cols: number; rows: number }>(e);
      if (s) this.setSize(s.cols, s.rows);
      this.status.textContent = `live · ${this.size.cols}×${this.size.rows}`;
    });
    es.addEventListener('exit', () => {
      this.status.textContent = 'the pane has exited';
      es.close();
    });
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) this.status.textContent = 'the stream closed: reload the page to try again';
      else this.status.textContent = 'reconnecting…';
    };
    if (this.typing.checked) this.term.focus();
  }

  stop(): void {
    this.stream?.close();
    this.stream = null;
    window.removeEventListener('resize', this.onResize);
    this.term.dispose();
  }

  /** What xterm shows, as text (the browser tests read it). */
  text(): string {
    const b = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < b.length; i++) lines.push(b.getLine(i)?.translateToString(true) ?? '');
    return lines.join('\n');
  }

  private setSize(cols: number, rows: number): void {
    if (!(cols > 0 && rows > 0)) return;
    this.size = { cols, rows };
    if (this.term.cols !== cols || this.term.rows !== rows) this.term.resize(cols, rows);
    this.fitFont();
  }

  /** The font size at which the pane's columns fit the page's width (the pane keeps its size). */
  private fitFont(): void {
    const proposed = this.fit.proposeDimensions();
    if (!proposed || !proposed.cols) return;
    const font = this.term.options.fontSize ?? MAX_FONT;
    const fits = Math.floor((font * proposed.cols) / this.size.cols);
    const next = Math.max(MIN_FONT, Math.min(MAX_FONT, fits));
    if (next !== font) this.term.options.fontSize = next;
  }

  private setTyping(on: boolean): void {
    if (on) typingOn.add(this.key);
    else typingOn.delete(this.key);
    this.term.options.disableStdin = !on;
    this.setTypingLabel();
    if (on) this.term.focus();
  }

  private setTypingLabel(): void {
    const on = this.typing.checked;
    this.typing.setAttribute('aria-checked', String(on));
    this.el.classList.toggle('typing-on', on);
    const label = this.el.querySelector('.switch span');
    if (label) label.textContent = on ? 'Typing: on' : 'Typing: off';
  }

  private send(data: string): void {
    if (!this.typing.checked) return;
    this.sending = this.sending.then(async () => {
      try {
        await post(`${terminalPath(this.key)}/keys`, { data });
        this.error.hidden = true;
      } catch (e) {
        this.error.textContent = e instanceof ApiError ? e.message : String(e);
        this.error.hidden = false;
      }
    });
  }
}

function parse<T>(e: Event): T | null {
  try {
    return JSON.parse((e as MessageEvent<string>).data) as T;
  } catch {
    return null;
  }
}
