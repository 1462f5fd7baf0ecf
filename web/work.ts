// The work page: forms to assign a job, send a message and start a workflow; the jobs, the tasks with
// their turns (each turn's prompt and reply readable), each agent's inbox and the flows. Every form is
// one call of the API, and an error is shown with the API's own message (the CLI's text).
import { ApiError, get, post, seg } from './api.js';
import { jobLabel } from './card.js';
import { append, clock, fill, h } from './dom.js';
import { apiName, FINAL_JOB_STATES, splitKey, terminalPath, type Model } from './model.js';
import type { FlowInfo, InboxView, JobView, TaskTurnView, TaskView } from './types.js';

const FINAL_TASK = new Set(['done', 'failed', 'cancelled']);

export class WorkView {
  readonly el = h('section', { id: 'work', 'aria-label': 'Work' });
  private readonly jobs = h('div', { class: 'list', id: 'jobs' });
  private readonly tasks = h('div', { class: 'list', id: 'tasks' });
  private readonly inbox = h('div', { class: 'list', id: 'inbox' });
  private readonly flows = h('div', { class: 'list', id: 'flows' });
  private readonly inboxAgent = h('select', { id: 'inbox-agent', 'aria-label': 'Agent' });
  private readonly agentLists: HTMLDataListElement = h('datalist', { id: 'agent-names' });
  private taskList: TaskView[] = [];
  /** Tasks whose turns are shown, and their detail as last read. */
  private readonly open = new Map<string, TaskView | null>();

  constructor(private readonly model: Model) {
    this.inboxAgent.addEventListener('change', () => void this.loadInbox());
    this.el.append(
      this.agentLists,
      h(
        'div',
        { class: 'forms' },
        form(
          'assign',
          'Assign a job',
          [
            field('target', 'Agent', 'input', { list: 'agent-names', required: true }),
            field('text', 'Prompt', 'textarea', { required: true }),
            field('name', 'Name (optional)', 'input'),
          ],
          (v) =>
            post<JobView>('/v1/jobs', { target: apiName(v.target!), text: v.text, ...(v.name ? { name: v.name } : {}) }).then(
              (j) => `job ${j.id} recorded (${j.state})`,
            ),
        ),
        form(
          'message',
          'Send a message',
          [field('to', 'To', 'input', { list: 'agent-names', required: true }), field('text', 'Message', 'textarea', { required: true })],
          (v) => post<{ id: string }>('/v1/messages', { to: apiName(v.to!), text: v.text }).then((m) => `message ${m.id} sent`),
        ),
        form(
          'workflow',
          'Start a workflow',
          [
            field('workflow', 'Workflow', 'input', { required: true, placeholder: 'e.g. review' }),
            field('text', 'Task', 'textarea', { required: true }),
            field('agents', 'Agents (optional, comma-separated, in role order)', 'input'),
          ],
          (v) => {
            const agents = (v.agents ?? '')
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean);
            return post<TaskView>('/v1/tasks', { workflow: v.workflow, text: v.text, ...(agents.length ? { agents } : {}) }).then(
              (t) => `task ${t.id} started (${t.status})`,
            );
          },
        ),
      ),
      h('h2', {}, 'Jobs'),
      this.jobs,
      h('h2', {}, 'Tasks'),
      this.tasks,
      h('h2', {}, 'Inbox'),
      h('p', {}, h('label', { for: 'inbox-agent' }, 'Agent '), this.inboxAgent),
      this.inbox,
      h('h2', {}, 'Flows'),
      this.flows,
    );
  }

  /** Everything on the page again (opened, or after missed events). */
  async load(): Promise<void> {
    this.renderAgents();
    this.renderJobs();
    await Promise.all([this.loadTasks(), this.loadInbox(), this.loadFlows()]);
  }

  renderAgents(): void {
    const keys = [...this.model.terminals.keys()];
    // The forms' agents, a host's too: by name (the API sends a job or message for `far` to its host), shown `far on box`.
    fill(
      this.agentLists,
      ...keys.map((k) => {
        const { agent, host } = splitKey(k);
        return h('option', { value: agent, ...(host ? { label: `${agent} on ${host}` } : {}) });
      }),
    );
    const chosen = this.inboxAgent.value;
    fill(this.inboxAgent, ...keys.map((k) => h('option', { value: k, selected: k === chosen }, k)));
  }

  renderJobs(): void {
    const jobs = [...this.model.jobs.values()].sort((a, b) => (b.created ?? '').localeCompare(a.created ?? ''));
    if (!jobs.length) return fill(this.jobs, h('p', { class: 'muted' }, 'No jobs.'));
    fill(
      this.jobs,
      table(
        ['Job', 'Agent', 'State', 'What', 'Updated', ''],
        jobs.map((j) => [
          h('code', {}, j.id),
          `${j.agent ?? j.target}${j.host ? `@${j.host}` : ''}`,
          h('span', { class: `pill js-${j.state}`, 'data-job-state': j.state }, j.state),
          h('span', {}, jobLabel(j), j.waiting ? h('span', { class: 'muted' }, ` — ${j.waiting}`) : null),
          clock(j.updated),
          FINAL_JOB_STATES.has(j.state) ? '' : action('Cancel', `Cancel job ${j.id}`, () => post(`/v1/jobs/${seg(j.id)}/cancel`)),
        ]),
        (i) => ({ 'data-job': jobs[i]!.id }),
      ),
    );
  }

  async loadTasks(): Promise<void> {
    try {
      this.taskList = await get<TaskView[]>('/v1/tasks');
      for (const id of this.open.keys()) this.open.set(id, await get<TaskView>(`/v1/tasks/${seg(id)}`).catch(() => null));
      this.renderTasks();
    } catch (e) {
      fill(this.tasks, errorText(e));
    }
  }

  private renderTasks(): void {
    const tasks = [...this.taskList].sort((a, b) => b.created.localeCompare(a.created));
    if (!tasks.length) return fill(this.tasks, h('p', { class: 'muted' }, 'No tasks.'));
    fill(this.tasks, ...tasks.map((t) => this.task(t)));
  }

  private task(t: TaskView): HTMLElement {
    const d = h('details', { class: 'task', 'data-task': t.id, open: this.open.has(t.id) });
    d.addEventListener('toggle', () => {
      if (d.open && !this.open.has(t.id)) {
        this.open.set(t.id, null);
        void get<TaskView>(`/v1/tasks/${seg(t.id)}`)
          .then((full) => (this.open.set(t.id, full), this.renderTasks()))
          .catch((e: unknown) => d.append(errorText(e)));
      } else if (!d.open) this.open.delete(t.id);
    });
    const buttons = [
      FINAL_TASK.has(t.status) ? null : action('Cancel', `Cancel task ${t.id}`, () => post(`/v1/tasks/${seg(t.id)}/cancel`)),
      t.status === 'interrupted' || t.status === 'failed' || t.status === 'waiting'
        ? action('Resume', `Resume task ${t.id}`, () => post(`/v1/tasks/${seg(t.id)}/resume`))
        : null,
    ];
    const full = this.open.get(t.id);
    append(d, [
      h(
        'summary',
        {},
        h('code', {}, t.id),
        ` ${t.workflow} `,
        h('span', { class: `pill ts-${t.status}` }, t.status),
        t.step ? ` · ${t.step}` : '',
        t.agent ? ` (${t.agent})` : '',
      ),
      h('p', {}, t.text ?? ''),
      t.reason ? h('p', { class: 'muted' }, t.reason) : null,
      h('p', { class: 'actions' }, ...buttons),
      full ? this.turns(t.id, full.turns) : this.open.has(t.id) ? h('p', { class: 'muted' }, 'reading…') : null,
    ]);
    return d;
  }

  private turns(task: string, turns: TaskTurnView[]): HTMLElement {
    if (!turns.length) return h('p', { class: 'muted' }, 'No turns yet.');
    return h(
      'ol',
      { class: 'turns' },
      ...turns.map((u) =>
        h(
          'li',
          { 'data-turn': u.seq },
          h(
            'span',
            {},
            `${u.step} · ${u.agent} · round ${u.round} · `,
            h('span', { class: 'pill' }, u.state),
            u.ms !== null ? ` · ${(u.ms / 1000).toFixed(1)} s` : '',
          ),
          u.reason ? h('span', { class: 'muted' }, ` — ${u.reason}`) : null,
          h('div', { class: 'files' }, u.prompt ? fileButton(task, u.seq, 'prompt') : null, u.reply ? fileButton(task, u.seq, 'reply') : null),
        ),
      ),
    );
  }

  async loadInbox(): Promise<void> {
    const agent = this.inboxAgent.value;
    if (!agent) return fill(this.inbox, h('p', { class: 'muted' }, 'No agents.'));
    try {
      const v = await get<InboxView>(`${terminalPath(agent)}/inbox`);
      this.model.pending.set(agent, v.pending);
      if (!v.messages.length) return fill(this.inbox, h('p', { class: 'muted' }, `${agent} has no messages.`));
      fill(
        this.inbox,
        v.waiting ? h('p', { class: 'muted' }, v.waiting) : null,
        table(
          ['Message', 'From', 'State', 'Sent', 'File'],
          v.messages.map((m) => [h('code', {}, m.id), m.fromAgent, m.state, clock(m.created), h('code', {}, m.file)]),
        ),
      );
    } catch (e) {
      fill(this.inbox, errorText(e));
    }
  }

  /** An agent's inbox changed: shown again if it is the one on screen. */
  inboxChanged(agent: string): void {
    if (this.inboxAgent.value === agent) void this.loadInbox();
  }

  async loadFlows(): Promise<void> {
    try {
      const flows = await get<FlowInfo[]>('/v1/flows');
      if (!flows.length) return fill(this.flows, h('p', { class: 'muted' }, 'No flows (.jaggers/flows/*.md).'));
      fill(
        this.flows,
        table(
          ['Flow', 'Schedule', 'Target', 'Next run', 'Last run', ''],
          flows.map((f) => [
            h('code', {}, f.name),
            f.schedule ?? '',
            f.target ? `${f.target.kind} ${f.target.name}` : '',
            f.enabled ? clock(f.next) : 'disabled',
            f.last ? `${f.last.id} ${f.last.state ?? ''} (${clock(f.last.tick)})` : 'never',
            f.problem ? h('span', { class: 'error' }, f.problem) : '',
          ]),
        ),
      );
    } catch (e) {
      fill(this.flows, errorText(e));
    }
  }
}

type Values = Record<string, string>;

function field(name: string, label: string, kind: 'input' | 'textarea', attrs: Record<string, string | boolean> = {}): HTMLElement {
  const id = `f-${name}-${Math.random().toString(36).slice(2, 8)}`;
  const control = kind === 'input' ? h('input', { id, name, type: 'text', autocomplete: 'off', ...attrs }) : h('textarea', { id, name, rows: 3, ...attrs });
  return h('p', { class: 'field' }, h('label', { for: id }, label), control);
}

/** A form that calls the API: its answer (or the API's error message) shown under it. */
function form(id: string, title: string, fields: HTMLElement[], submit: (v: Values) => Promise<string>): HTMLFormElement {
  const out = h('p', { class: 'result', role: 'status', 'aria-live': 'polite' });
  const button = h('button', { type: 'submit' }, title);
  const f = h('form', { id: `form-${id}`, class: 'form', 'aria-label': title }, h('h3', {}, title), ...fields, h('p', {}, button), out);
  f.addEventListener('submit', (e) => {
    e.preventDefault();
    const v: Values = {};
    for (const [k, val] of new FormData(f)) v[k] = String(val).trim() === '' ? '' : String(val);
    button.disabled = true;
    out.className = 'result';
    out.setAttribute('role', 'status');
    out.textContent = '…';
    submit(v)
      .then((text) => {
        out.textContent = text;
        f.querySelectorAll('textarea').forEach((t) => (t.value = ''));
      })
      .catch((e: unknown) => {
        out.className = 'result error';
        out.setAttribute('role', 'alert');
        out.textContent = e instanceof ApiError ? e.message : String(e);
      })
      .finally(() => (button.disabled = false));
  });
  return f;
}

function action(label: string, aria: string, run: () => Promise<unknown>): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'small', 'aria-label': aria }, label);
  b.addEventListener('click', () => {
    b.disabled = true;
    run()
      .catch((e: unknown) => b.after(errorText(e)))
      .finally(() => (b.disabled = false));
  });
  return b;
}

/** A turn's handover file or reply, read on demand (`GET /v1/tasks/:id/turns/:n/prompt|reply`). */
function fileButton(task: string, seq: number, which: 'prompt' | 'reply'): HTMLElement {
  const d = h('details', { class: 'file' }, h('summary', {}, which));
  d.addEventListener('toggle', () => {
    if (!d.open || d.querySelector('pre, .error')) return;
    get<{ text: string }>(`/v1/tasks/${seg(task)}/turns/${seq}/${which}`)
      .then((r) => d.append(h('pre', {}, r.text)))
      .catch((e: unknown) => d.append(errorText(e)));
  });
  return d;
}

function table(head: string[], rows: (Node | string)[][], rowAttrs: (i: number) => Record<string, string> = () => ({})): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ...head.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, ...rows.map((r, i) => h('tr', rowAttrs(i), ...r.map((c, j) => h('td', { 'data-label': head[j] ?? '' }, c))))),
    ),
  );
}

function errorText(e: unknown): HTMLElement {
  return h('p', { class: 'error', role: 'alert' }, e instanceof ApiError ? e.message : String(e));
}
