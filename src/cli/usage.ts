// `jaggers usage`: tokens and cost per agent, job, task, session, day or model.
import { InvalidArgumentError, type Command } from 'commander';
import type { UsageBy } from '../usage/by.js';
import { examples, json, type Deps } from './shared.js';

/** src/usage/by.ts's list, written again: the CLI's start loads no module of the parts (test/unit/cli-program.test.ts). */
const USAGE_BY = ['agent', 'job', 'task', 'session', 'day', 'model'] as const satisfies readonly UsageBy[];

const byOf = (v: string): UsageBy => {
  if ((USAGE_BY as readonly string[]).includes(v)) return v as UsageBy;
  throw new InvalidArgumentError(`must be one of ${USAGE_BY.join(', ')}, got ${JSON.stringify(v)}`);
};

export function registerUsage(program: Command, e: Deps): void {
  program
    .command('usage')
    .description("tokens (input, output, cache read and write) and cost the agents spent, from each CLI's own records")
    .option('--by <what>', `group by ${USAGE_BY.join(', ')} (default agent)`, byOf)
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers usage', 'jaggers usage --by task', 'jaggers usage --by day --json']))
    .action(async (o: { by?: UsageBy; json?: boolean }) => {
      const c = await e.ctx();
      const { usage, renderUsage } = await import('../commands/usage.js');
      const v = await usage(c, o.by ?? 'agent');
      e.io.writeOut(o.json ? json(v) : renderUsage(v));
    });
}
