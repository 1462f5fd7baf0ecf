// The budgets service: holds the next work item of a budget that is reached (the runner asks `hold`),
// tells a person once per item and budget (an event on /v1/events and a notice), lists the budgets with
// their spend, and records raises (the supervisor is the registry's one writer): a raise kicks every
// queue, so a held item goes on at once. jaggers.json's budgets and prices are read again on `refresh`.
import { JaggersError } from '../errors.js';
import type { Log } from '../logger.js';
import { budgetKey, type Budget, type BudgetScope } from '../usage/budget-schema.js';
import { priceTable, type PriceTable } from '../usage/prices.js';
import { allBudgets, budgetLine, budgetsOf, describeBudget, givenBudget, overBudget, type BudgetConfig, type BudgetLine, type OverBudget } from './budget.js';
import { itemAgent, type WorkItem } from './queue.js';
import type { Publish, Store } from './ports.js';

export interface BudgetSettings {
  config: BudgetConfig;
  prices: PriceTable;
}

export interface BudgetsPorts {
  store: Store;
  hub: Publish;
  log: Log;
  /** jaggers.json's budgets and prices as they are now. */
  settings(): Promise<BudgetSettings>;
  /** Tell a person (src/supervisor/notify.ts): an item waits over budget. */
  notify(item: WorkItem, o: OverBudget): void;
  /** Look at every queue again. */
  kickAll(): void;
}

export interface BudgetsView {
  budgets: BudgetLine[];
  prices: { taken: string; overridden: string[] };
}

export interface RaiseRequest {
  scope: BudgetScope;
  /** The agent's name, the task's or job's id; none for the session. */
  name?: string;
  tokens?: number;
  usd?: number;
  by?: string;
}

export class Budgets {
  private settings: BudgetSettings = { config: { agents: {} }, prices: priceTable() };
  /** `<item>|<budget key>` already told; `unpriced:<model>` already said. */
  private readonly told = new Set<string>();

  constructor(private readonly p: BudgetsPorts) {}

  /** Read jaggers.json's budgets and prices again (a file that does not load keeps the last ones, with a warning). */
  async refresh(): Promise<void> {
    try {
      this.settings = await this.p.settings();
    } catch (e) {
      this.p.log.warn({ err: (e as Error).message }, 'budgets: jaggers.json could not be read; the last budgets it gave still hold');
    }
  }

  verdict(item: WorkItem): OverBudget | null {
    return overBudget(this.p.store.data, this.settings.config, this.settings.prices, item);
  }

  /** The runner's question: why the item may not start, or null. */
  hold(item: WorkItem): string | null {
    this.sayUnpriced(item);
    return this.verdict(item)?.text ?? null;
  }

  /** The runner holds the item: an event and a notice, once per item and budget. */
  held(item: WorkItem): void {
    const o = this.verdict(item);
    if (!o) return;
    const mark = `${item.id}|${o.key}`;
    if (this.told.has(mark)) return;
    this.told.add(mark);
    if (this.told.size > 10_000) this.told.clear();
    this.p.log.warn({ item: item.id, agent: itemAgent(item), budget: o.key, what: o.what, spent: o.spent, limit: o.limit }, 'work item held over budget');
    this.p.hub.publish('budget', { state: 'over_budget', item: item.id, agent: itemAgent(item), ...o });
    this.p.notify(item, o);
  }

  /** A model with no price cannot be held to a usd budget: said once per model, never guessed. */
  private sayUnpriced(item: WorkItem): void {
    for (const l of budgetsOf(this.p.store.data, this.settings.config, this.settings.prices, item)) {
      if (l.limit.usd === undefined) continue;
      for (const m of l.spent.unpriced) {
        if (this.told.has(`unpriced:${m}`)) continue;
        this.told.add(`unpriced:${m}`);
        const text = `no price for ${m}: its tokens are not held to usd budgets (give one in jaggers.json "prices")`;
        this.p.log.warn({ model: m, budget: l.key }, text);
        this.p.hub.publish('budget', { state: 'unpriced', model: m, key: l.key, text });
      }
    }
  }

  async list(): Promise<BudgetsView> {
    await this.refresh();
    const { config, prices } = this.settings;
    return { budgets: allBudgets(this.p.store.data, config, prices), prices: { taken: prices.taken, overridden: [...prices.overridden] } };
  }

  /** Raise a budget by `tokens` and/or `usd`, journaled; held items go on at once. */
  async raise(req: RaiseRequest): Promise<BudgetLine> {
    if (req.tokens === undefined && req.usd === undefined) throw new JaggersError('E_USAGE', 'budget raise: give --tokens N, --usd N or both');
    await this.refresh();
    const name = req.scope === 'session' ? null : (req.name ?? null);
    if (req.scope !== 'session' && !name)
      throw new JaggersError('E_USAGE', `budget raise ${req.scope}: name the ${req.scope === 'agent' ? 'agent' : `${req.scope} id`}`);
    const data = this.p.store.data;
    if (req.scope === 'job' && !Object.hasOwn(data.jobs, name!))
      throw new JaggersError('E_NOT_FOUND', `budget raise: no job ${JSON.stringify(name)} (see \`jaggers jobs\`)`);
    if (req.scope === 'task' && !Object.hasOwn(data.tasks, name!))
      throw new JaggersError('E_NOT_FOUND', `budget raise: no task ${JSON.stringify(name)} (see \`jaggers tasks\`)`);
    const given: Budget | undefined = givenBudget(data, this.settings.config, req.scope, name);
    const what = req.scope === 'session' ? 'the session' : `${req.scope} ${name}`;
    if (!given) {
      const where =
        req.scope === 'session'
          ? 'give one in jaggers.json ("budget")'
          : req.scope === 'agent'
            ? 'give one in its jaggers.json entry ("budget")'
            : `give one with --budget-tokens / --budget-usd when it is made`;
      throw new JaggersError('E_USAGE', `budget raise: ${what} has no budget to raise; ${where}`);
    }
    if (req.tokens !== undefined && given.tokens === undefined)
      throw new JaggersError(
        'E_USAGE',
        `budget raise: ${what}'s budget has no token limit (it has ${given.usd !== undefined ? 'a usd limit' : 'none'}); raise --usd`,
      );
    if (req.usd !== undefined && given.usd === undefined)
      throw new JaggersError('E_USAGE', `budget raise: ${what}'s budget has no usd limit (it has a token limit); raise --tokens`);
    const key = budgetKey(req.scope, name);
    await this.p.store.record({
      type: 'budget-raised',
      key,
      ...(req.tokens !== undefined ? { tokens: req.tokens } : {}),
      ...(req.usd !== undefined ? { usd: req.usd } : {}),
      ...(req.by ? { by: req.by } : {}),
    });
    for (const m of [...this.told]) if (m.endsWith(`|${key}`)) this.told.delete(m);
    const line = budgetLine(this.p.store.data, this.settings.config, this.settings.prices, req.scope, name)!;
    this.p.log.info({ budget: key, tokens: req.tokens, usd: req.usd, limit: line.limit }, 'budget raised');
    this.p.hub.publish('budget', { state: 'raised', ...line, text: `${describeBudget(line)} raised` });
    this.p.kickAll();
    return line;
  }
}
