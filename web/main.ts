// The dashboard's page: reads the agents, jobs and worktrees once, then keeps them current from
// `GET /v1/events` (a card is redrawn as its event arrives; the lists behind it are read again shortly
// after). Three views by the URL's hash: `#/` the agents, `#/work`, `#/terminal/<agent>`.
import '@xterm/xterm/css/xterm.css';
import './style.css';
import { ApiError, get } from './api.js';
import { fill, h } from './dom.js';
import { agentKey, applyEvent, emptyModel, parseFrame, setHosts, setJobs, setTerminals, terminalPath, type Effects } from './model.js';
import { Overview } from './overview.js';
import { TerminalView } from './terminal.js';
import type { HostAgentsView, InboxView, JobView, TerminalView as Agent, WorktreeInfo } from './types.js';
import { WorkView } from './work.js';

const EVENT_TYPES = ['hello', 'state', 'turn', 'pin', 'fork', 'notice', 'job', 'message', 'task', 'gap'];
/** The hosts' events (`GET /v1/hosts/events`): the supervisor follows each host's supervisor for the page. */
const HOST_EVENT_TYPES = ['host', 'host-state', 'host-hello'];
/**
 * How long after an event the lists behind the cards are read again (a burst of events reads them once):
 * soon for what the event left out and the page must show (a question, a new job), later for details.
 */
const SOON_MS = 150;
const LATER_MS = 1000;

const model = emptyModel();
const overview = new Overview(model, () => schedule('terminals'));
const work = new WorkView(model);
let terminal: TerminalView | null = null;

const live = h('span', { class: 'live', role: 'status', 'aria-live': 'polite' }, 'connecting…');
const banner = h('p', { class: 'banner error', role: 'alert', hidden: true });
const nav = h(
  'nav',
  { 'aria-label': 'Views' },
  h('a', { href: '#/', 'data-view': 'overview' }, 'Agents'),
  h('a', { href: '#/work', 'data-view': 'work' }, 'Work'),
);
const main = h('main', { id: 'main', tabindex: '-1' });
document.body.append(h('header', { class: 'top' }, h('h1', {}, 'jaggers'), nav, live), banner, main);

function showError(e: unknown): void {
  if (e instanceof ApiError && e.status === 401) {
    banner.textContent = 'Not logged in (or the login expired): run `jaggers web` and open the address it prints.';
  } else banner.textContent = e instanceof ApiError ? e.message : String(e);
  banner.hidden = false;
}

async function loadTerminals(): Promise<void> {
  setTerminals(model, await get<Agent[]>('/v1/terminals'));
  overview.renderAll();
  work.renderAgents();
}

/** The hosts' agents (docs/hosts.md), from each host's supervisor through the local one; a host down has a card saying so. */
async function loadHosts(): Promise<void> {
  setHosts(model, await get<HostAgentsView[]>('/v1/hosts/terminals'));
  overview.renderAll();
  work.renderAgents();
  await Promise.all([...model.terminals.values()].filter((t) => t.host).map((t) => loadInbox(agentKey(t)).catch(() => {})));
}

async function loadJobs(): Promise<void> {
  setJobs(model, await get<JobView[]>('/v1/jobs'));
  for (const k of model.terminals.keys()) overview.render(k);
  if (route().view === 'work') work.renderJobs();
}

async function loadWorktrees(): Promise<void> {
  // A project that is not a git repository has none: the cards show no worktree.
  model.worktrees = await get<WorktreeInfo[]>('/v1/worktrees').catch(() => []);
  overview.renderAll();
}

async function loadInbox(key: string): Promise<void> {
  const v = await get<InboxView>(`${terminalPath(key)}/inbox`);
  model.pending.set(key, v.pending);
  overview.render(key);
  work.inboxChanged(key);
}

async function loadAll(): Promise<void> {
  try {
    await loadTerminals();
    await Promise.all([
      loadJobs(),
      loadWorktrees(),
      ...[...model.terminals.keys()].map((k) => loadInbox(k).catch(() => {})),
      // The hosts' agents never hold back (nor hide) this machine's.
      loadHosts().catch(showError),
    ]);
    if (route().view === 'work') await work.load();
    banner.hidden = true;
  } catch (e) {
    showError(e);
  }
}

// The lists read again after events: each list once per burst, at the earliest time asked for.
type List = 'terminals' | 'jobs' | 'tasks' | 'worktrees' | 'hosts' | 'all';
/** Each list's pending read: when it is due, and its timer. */
const timers = new Map<string, { due: number; timer: number }>();
function schedule(what: List | `inbox:${string}`, delay = SOON_MS): void {
  const due = Date.now() + delay;
  const pending = timers.get(what);
  if (pending && pending.due <= due) return;
  if (pending) window.clearTimeout(pending.timer);
  const timer = window.setTimeout(() => {
    timers.delete(what);
    const run =
      what === 'all'
        ? loadAll()
        : what === 'terminals'
          ? loadTerminals()
          : what === 'jobs'
            ? loadJobs()
            : what === 'tasks'
              ? work.loadTasks()
              : what === 'worktrees'
                ? loadWorktrees()
                : what === 'hosts'
                  ? loadHosts()
                  : loadInbox(what.slice(6));
    run.catch(showError);
  }, delay);
  timers.set(what, { due, timer });
}

function connect(): void {
  const es = new EventSource('/v1/events');
  es.onopen = () => {
    live.textContent = 'live';
    live.className = 'live on';
  };
  es.onerror = () => {
    live.textContent = es.readyState === EventSource.CLOSED ? 'disconnected: reload the page' : 'reconnecting…';
    live.className = 'live off';
    // A reconnect may have missed events the supervisor no longer keeps: it sends `gap`, and we reload then.
  };
  for (const type of EVENT_TYPES) {
    es.addEventListener(type, (ev) => {
      const m = ev as MessageEvent<string>;
      const e = parseFrame(type, m.lastEventId, m.data);
      if (e) apply(e, applyEvent(model, e));
    });
  }
}

/** What an event asks of the page, done: cards drawn again, lists read again. */
function apply(e: NonNullable<ReturnType<typeof parseFrame>>, fx: Effects): void {
  for (const k of fx.cards) overview.render(k, Date.now(), e.id);
  if (fx.hostCards.size) overview.renderAll();
  if (e.type === 'job' && route().view === 'work') work.renderJobs();
  if (fx.reload) return schedule('all');
  if (fx.terminals) schedule('terminals', fx.terminals === 'soon' ? SOON_MS : LATER_MS);
  if (fx.jobs) schedule('jobs', fx.jobs === 'soon' ? SOON_MS : LATER_MS);
  if (fx.tasks && route().view === 'work') schedule('tasks');
  if (fx.worktrees) schedule('worktrees');
  if (fx.hosts) schedule('hosts');
  for (const k of fx.inbox) schedule(`inbox:${k}`);
}

/** The hosts' agents' states and the hosts' connections, as the supervisor follows them (it reconnects as the page's own stream does). */
function connectHosts(): void {
  const es = new EventSource('/v1/hosts/events');
  for (const type of HOST_EVENT_TYPES) {
    es.addEventListener(type, (ev) => {
      const m = ev as MessageEvent<string>;
      const e = parseFrame(type, m.lastEventId, m.data);
      if (e) apply(e, applyEvent(model, e));
    });
  }
}

function route(): { view: 'overview' | 'work' | 'terminal'; agent?: string } {
  const hash = location.hash.replace(/^#\/?/, '');
  if (hash === 'work') return { view: 'work' };
  const t = /^terminal\/(.+)$/.exec(hash);
  if (t) return { view: 'terminal', agent: decodeURIComponent(t[1]!) };
  return { view: 'overview' };
}

function show(): void {
  const r = route();
  terminal?.stop();
  terminal = null;
  for (const a of nav.querySelectorAll('a')) {
    if (a.dataset.view === r.view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (r.view === 'terminal' && r.agent) {
    terminal = new TerminalView(r.agent);
    fill(main, terminal.el);
    terminal.start();
    document.title = `${r.agent} · jaggers`;
  } else if (r.view === 'work') {
    fill(main, work.el);
    void work.load();
    document.title = 'Work · jaggers';
  } else {
    fill(main, overview.el);
    document.title = 'Agents · jaggers';
  }
}

window.addEventListener('hashchange', () => {
  show();
  main.focus({ preventScroll: true });
});
window.setInterval(() => overview.tick(), 1000);

/** For the browser tests and the benchmark: what the open terminal's xterm holds, as text. */
(window as unknown as { jaggers: unknown }).jaggers = {
  terminalText: () => terminal?.text() ?? null,
  agents: () => [...model.terminals.values()].map((t) => ({ key: agentKey(t), state: t.state, ...(t.host ? { host: t.host } : {}) })),
};

show();
connect();
connectHosts();
void loadAll();
