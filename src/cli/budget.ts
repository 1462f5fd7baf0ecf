// `jaggers budget` and `jaggers budget raise`: budgets and what they spent; more for one (docs/usage.md).
import { InvalidArgumentError, type Command } from 'commander';
import type { BudgetScope } from '../usage/budget-schema.js';
import { examples, json, type Deps } from './shared.js';

/** src/usage/budget-schema.ts's list, written again: the CLI's start loads no module of the parts. */
const SCOPES = ['session', 'agent', 'task', 'job'] as const satisfies readonly BudgetScope[];

const scopeOf = (v: string): BudgetScope => {
  if ((SCOPES as readonly string[]).includes(v)) return v as BudgetScope;
  throw new InvalidArgumentError(`must be one of ${SCOPES.join(', ')}, got ${JSON.stringify(v)}`);
};

export const wholeTokens = (v: string): number => {
  const x = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(x) || x <= 0)
    throw new InvalidArgumentError(`must be a whole number of tokens above 0, got ${JSON.stringify(v)}`);
  return x;
};

export const dollars = (v: string): number => {
  const x = Number(v);
  if (v.trim() === '' || !Number.isFinite(x) || x <= 0) throw new InvalidArgumentError(`must be a number of US dollars above 0, got ${JSON.stringify(v)}`);
  return x;
};

export function registerBudget(program: Command, e: Deps): void {
  const budget = program
    .command('budget')
    .description('budgets (the session, agents, tasks, jobs) and what each spent; a reached one holds its next item as over_budget')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers budget', 'jaggers budget raise agent coder --tokens 500000', 'jaggers budget raise session --usd 5']));
  budget
    .command('list', { isDefault: true })
    .description('every budget with what it spent (the default: `jaggers budget`)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const { budgets, renderBudgets } = await import('../commands/budget.js');
      const v = await budgets(await e.ctx());
      e.io.writeOut(o.json || budget.opts<{ json?: boolean }>().json ? json(v) : renderBudgets(v));
    });
  budget
    .command('raise <scope> [name]')
    .description('raise a budget (scope: session, agent, task or job) by --tokens and/or --usd; the item it held goes on at once')
    .option('--tokens <n>', 'this many more tokens', wholeTokens)
    .option('--usd <n>', 'this many more US dollars', dollars)
    .option('--json', 'print JSON')
    .action(async (scope: string, name: string | undefined, o: { tokens?: number; usd?: number; json?: boolean }) => {
      const { raiseBudget, renderRaised } = await import('../commands/budget.js');
      const l = await raiseBudget(await e.ctx(), scopeOf(scope), name, o);
      e.io.writeOut(o.json || budget.opts<{ json?: boolean }>().json ? json(l) : renderRaised(l));
    });
}
