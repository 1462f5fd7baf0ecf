// `jaggers budget`: every budget with its spend (pure: src/work/budget.ts's allBudgets and the table of
// src/commands/budget.ts), raises added to the limits, reached ones said so, missing prices named.
import { describe, expect, it } from 'vitest';
import { renderBudgets, renderRaised } from '../../../src/commands/budget.js';
import { applyEvents, emptyRegistry } from '../../../src/sessions/schema.js';
import { journalEventSchema, type NewJournalEvent } from '../../../src/sessions/events.js';
import { priceTable } from '../../../src/usage/prices.js';
import { allBudgets } from '../../../src/work/budget.js';
import { jobEvent, terminalEvents } from '../../helpers/work-fakes.js';

const data = (...events: NewJournalEvent[]) =>
  applyEvents(
    emptyRegistry(),
    events.map((e) => journalEventSchema.parse({ ts: '2026-11-26T12:00:00.000Z', ...e })),
  );

describe('the budget list', () => {
  it('lists the session, agents, tasks and jobs with spend, raises and state', () => {
    const d = data(
      ...terminalEvents('jg-c0de', 'coder'),
      { type: 'task-created', taskId: 't-1', workflow: 'run' },
      { type: 'budget-set', key: 'task:t-1', tokens: 10_000 },
      jobEvent('j-000000000001'),
      { type: 'budget-set', key: 'job:j-000000000001', usd: 1 },
      {
        type: 'usage',
        terminalId: 'jg-c0de',
        agent: 'coder',
        sessionId: 's-1',
        jobId: null,
        task: null,
        reader: 'claude',
        turn: {
          'claude-sonnet-4-5': { input: 2500, output: 0, cacheRead: 0, cacheWrite: 0 },
          'qwen3-coder-plus': { input: 10, output: 0, cacheRead: 0, cacheWrite: 0 },
        },
        session: { 'claude-sonnet-4-5': { input: 2500, output: 0, cacheRead: 0, cacheWrite: 0 } },
      },
      { type: 'budget-raised', key: 'agent:coder', tokens: 500 },
    );
    const lines = allBudgets(d, { session: { usd: 100 }, agents: { coder: { tokens: 2000 } } }, priceTable());
    expect(lines.map((l) => [l.key, l.limit, l.spent.tokens])).toEqual([
      ['session', { usd: 100 }, 2510],
      ['agent:coder', { tokens: 2500 }, 2510],
      ['job:j-000000000001', { usd: 1 }, 0],
      ['task:t-1', { tokens: 10_000 }, 0],
    ]);
    const text = renderBudgets({ budgets: lines, prices: { taken: '2026-11-26', overridden: [] } });
    expect(text).toMatch(/^BUDGET\s+TOKENS\s+USD\s+STATE$/m);
    expect(text).toMatch(/^session\s+2,510\s+\$0\.0075 \+ \? \/ \$100\.00\s+ok$/m);
    expect(text).toMatch(/^agent coder\s+2,510 \/ 2,500\s+-\s+reached$/m);
    expect(text).toMatch(/^task t-1\s+0 \/ 10,000\s+-\s+ok$/m);
    expect(text).toMatch(/^no price for qwen3-coder-plus: not held to usd budgets/m);
    expect(renderRaised(lines[1]!)).toBe('agent coder: 2,510 of 2,500 tokens (reached)\n');
    expect(renderBudgets({ budgets: [], prices: { taken: '', overridden: [] } })).toMatch(/^no budgets: give one in jaggers.json/);
  });
});
