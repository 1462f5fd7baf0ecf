// Budgets (src/work/budget.ts, src/work/budgets.ts) with the one runner, on a fake registry whose clock
// is simulated: the next item waits `over_budget` once a budget that applies to it is reached, the item
// in flight is never cut, a raise lets the held item go on at once (no polling), and the session's, an
// agent's, a task's and a job's budgets each apply. A model with no price is said once, never guessed.
import { describe, expect, it } from 'vitest';
import type { NewJournalEvent } from '../../../src/sessions/events.js';
import type { ByModel } from '../../../src/usage/tokens.js';
import { priceTable } from '../../../src/usage/prices.js';
import type { BudgetConfig, OverBudget } from '../../../src/work/budget.js';
import { overBudget } from '../../../src/work/budget.js';
import { Budgets } from '../../../src/work/budgets.js';
import type { WorkItem } from '../../../src/work/queue.js';
import { Runner } from '../../../src/work/runner.js';
import { deferred, FakeAgents, FakeStore, jobEvent, recordingLog, settle, terminalEvents } from '../../helpers/work-fakes.js';

const T = 'jg-c0de';
const MODEL = 'claude-sonnet-4-5';

function usage(jobId: string | null, turn: ByModel, o: { agent?: string; terminalId?: string; task?: string | null } = {}): NewJournalEvent {
  return {
    type: 'usage',
    terminalId: o.terminalId ?? T,
    agent: o.agent ?? 'coder',
    sessionId: 's-1',
    jobId,
    task: o.task === undefined ? jobId : o.task,
    reader: 'claude',
    turn,
    session: turn,
  };
}

const tokens = (n: number, model = MODEL): ByModel => ({ [model]: { input: n, output: 0, cacheRead: 0, cacheWrite: 0 } });

function setup(config: BudgetConfig) {
  let clock = Date.parse('2026-11-26T12:00:00Z');
  const store = new FakeStore(() => clock);
  store.seed(...terminalEvents(T, 'coder'));
  const agents = new FakeAgents();
  agents.add({ agent: 'coder', terminalId: T }, 'idle');
  const events: { type: string; data: Record<string, unknown> }[] = [];
  const notices: { item: string; o: OverBudget }[] = [];
  const runs: { id: string; signal: AbortSignal; end(turn?: ByModel): void }[] = [];
  const log = recordingLog();
  const kick = { all: () => {} };
  const budgets = new Budgets({
    store,
    hub: { publish: (type, data) => events.push({ type, data }) },
    log,
    settings: async () => ({ config, prices: priceTable() }),
    notify: (item, o) => notices.push({ item: item.id, o }),
    kickAll: () => kick.all(),
  });
  const runner = new Runner({
    data: () => store.data,
    pane: (t) => agents.find(t),
    status: (p) => agents.status(p),
    run: (item: WorkItem, _e, signal) => {
      const d = deferred();
      if (item.kind === 'job') store.seed({ type: 'job-state', jobId: item.id, state: 'running', reason: 'took it' });
      runs.push({
        id: item.id,
        signal,
        end: (turn) => {
          clock += 60_000;
          // As the real turn does: its tokens are journaled with its end.
          store.seed(...(turn ? [usage(item.id, turn, { task: item.kind === 'job' ? (item.j.task ?? item.id) : null })] : []), {
            type: 'job-state',
            jobId: item.id,
            state: 'done',
            reason: 'finished',
          });
          d.resolve();
        },
      });
      return d.promise;
    },
    lost: async () => {},
    broken: async () => {},
    hold: (item) => budgets.hold(item),
    held: (item) => budgets.held(item),
    log,
  });
  kick.all = () => runner.kickAll();
  return { store, runner, budgets, events, notices, runs, log, ran: () => runs.map((r) => r.id), tick: (ms: number) => (clock += ms) };
}

describe('budgets', () => {
  it("stops the next item once the agent's budget is reached, never the one in flight, and a raise lets it go on at once", async () => {
    const h = setup({ agents: { coder: { tokens: 1000 } } });
    await h.budgets.refresh();
    h.store.seed(jobEvent('j-01'), jobEvent('j-02'));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-01']);
    // Tokens recorded while j-01 runs (another session's turn, say) reach the budget: j-01 goes on.
    h.store.seed(usage(null, tokens(600), { task: null }));
    h.runner.kick(T);
    await settle();
    expect(h.runs[0]!.signal.aborted).toBe(false);
    expect(h.runner.current(T)).toBe('j-01');
    h.runs[0]!.end(tokens(500));
    await settle();
    // 1,100 of 1,000: j-02 waits, with the figures, and a person is told once.
    expect(h.ran()).toEqual(['j-01']);
    expect(h.runner.waiting(T, 'j-02')).toBe(
      "over_budget: agent coder's budget is reached (1,100 of 1,000 tokens spent); `jaggers budget raise agent coder --tokens <more>` lets it go on",
    );
    expect(h.notices).toEqual([{ item: 'j-02', o: expect.objectContaining({ scope: 'agent', name: 'coder', what: 'tokens', spent: 1100, limit: 1000 }) }]);
    expect(h.events.filter((e) => e.type === 'budget')).toEqual([
      { type: 'budget', data: expect.objectContaining({ state: 'over_budget', item: 'j-02', agent: 'coder', key: 'agent:coder', spent: 1100, limit: 1000 }) },
    ]);
    h.runner.kick(T);
    await settle();
    expect(h.notices).toHaveLength(1);
    // A raise is journaled and the held item goes in at once: no other kick.
    const line = await h.budgets.raise({ scope: 'agent', name: 'coder', tokens: 500, by: 'test' });
    expect(line).toMatchObject({ key: 'agent:coder', limit: { tokens: 1500 }, raised: { tokens: 500 }, spent: { tokens: 1100 } });
    expect(h.store.of('budget-raised')).toEqual([expect.objectContaining({ key: 'agent:coder', tokens: 500, by: 'test' })]);
    await settle();
    expect(h.ran()).toEqual(['j-01', 'j-02']);
    expect(h.events.at(-1)).toEqual({ type: 'budget', data: expect.objectContaining({ state: 'raised', key: 'agent:coder' }) });
  });

  it("the session's budget counts every agent's tokens", async () => {
    const h = setup({ session: { tokens: 1000 }, agents: {} });
    await h.budgets.refresh();
    h.store.seed(...terminalEvents('jg-0the', 'other'), usage(null, tokens(1000), { agent: 'other', terminalId: 'jg-0the', task: null }));
    h.store.seed(jobEvent('j-01'));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual([]);
    expect(h.runner.waiting(T, 'j-01')).toMatch(
      /^over_budget: the session's budget is reached \(1,000 of 1,000 tokens spent\); `jaggers budget raise session --tokens <more>`/,
    );
    await h.budgets.raise({ scope: 'session', tokens: 1 });
    await settle();
    expect(h.ran()).toEqual(['j-01']);
  });

  it("a task's budget holds the task's next turn; other work goes on", async () => {
    const h = setup({ agents: {} });
    await h.budgets.refresh();
    h.store.seed({ type: 'task-created', taskId: 't-1', workflow: 'run' }, { type: 'budget-set', key: 'task:t-1', usd: 0.01 });
    h.store.seed(jobEvent('j-01', { task: 't-1', workflow: 'review' }));
    h.runner.kick(T);
    await settle();
    // 10,000 input tokens of claude-sonnet-4-5 at $3 per million: $0.03.
    h.runs[0]!.end(tokens(10_000));
    h.store.seed(jobEvent('j-02', { task: 't-1', workflow: 'review' }));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-01']);
    expect(h.runner.waiting(T, 'j-02')).toMatch(/^over_budget: task t-1's budget is reached \(\$0\.0300 of \$0\.0100 spent\)/);
    await h.budgets.raise({ scope: 'task', name: 't-1', usd: 1 });
    await settle();
    expect(h.ran()).toEqual(['j-01', 'j-02']);
  });

  it("a job's budget holds the job itself when its tokens are already spent (a job followed again after a restart, say)", async () => {
    const h = setup({ agents: {} });
    await h.budgets.refresh();
    h.store.seed(jobEvent('j-01'), { type: 'budget-set', key: 'job:j-01', tokens: 100 }, usage('j-01', tokens(100)));
    const item = { kind: 'job', id: 'j-01', seq: 1, created: '', j: h.store.data.jobs['j-01']! } as const;
    expect(overBudget(h.store.data, { agents: {} }, priceTable(), item)).toMatchObject({ scope: 'job', name: 'j-01', spent: 100, limit: 100 });
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual([]);
    await h.budgets.raise({ scope: 'job', name: 'j-01', tokens: 50 });
    await settle();
    expect(h.ran()).toEqual(['j-01']);
  });

  it('a compaction is never held, and a model with no price is said once, not guessed', async () => {
    const h = setup({ agents: { coder: { usd: 0.001 } } });
    await h.budgets.refresh();
    h.store.seed(usage(null, tokens(1_000_000, 'qwen3-coder-plus'), { task: null }), jobEvent('j-01', { work: 'compact' }), jobEvent('j-02'));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-01']);
    h.runs[0]!.end();
    await settle();
    // Unpriced tokens count for nothing in USD: j-02 goes in, and the missing price is said once.
    expect(h.ran()).toEqual(['j-01', 'j-02']);
    const said = h.events.filter((e) => e.data.state === 'unpriced');
    expect(said).toEqual([{ type: 'budget', data: expect.objectContaining({ model: 'qwen3-coder-plus', key: 'agent:coder' }) }]);
  });

  it('refuses a raise of a budget that is not there, naming what to do', async () => {
    const h = setup({ agents: { coder: { tokens: 10 } } });
    await expect(h.budgets.raise({ scope: 'session', tokens: 1 })).rejects.toThrow(/the session has no budget to raise; give one in jaggers.json/);
    await expect(h.budgets.raise({ scope: 'agent', name: 'coder', usd: 1 })).rejects.toThrow(/agent coder's budget has no usd limit/);
    await expect(h.budgets.raise({ scope: 'job', name: 'j-nope', tokens: 1 })).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    await expect(h.budgets.raise({ scope: 'agent', name: 'coder' })).rejects.toMatchObject({ code: 'E_USAGE' });
  });
});
