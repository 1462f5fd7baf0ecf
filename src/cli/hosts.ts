// Hosts agents run on over SSH (docs/hosts.md): list them, check one. Read-only, like doctor: no supervisor needed.
import type { Command } from 'commander';
import { examples, json, type Deps } from './shared.js';

export function registerHosts(program: Command, e: Deps): void {
  const { ctx, setExit } = e;
  const host = program.command('host').description("hosts agents run on over SSH (jaggers.json's `hosts`; docs/hosts.md)");
  host
    .command('list')
    .description('the hosts of jaggers.json and the agents on each')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers host list']))
    .action(async (o: { json?: boolean }) => {
      const { hostList, renderHostList } = await import('../commands/hosts.js');
      const r = await hostList(await ctx());
      e.io.writeOut(o.json ? json(r) : renderHostList(r));
    });
  host
    .command('check <name>')
    .description("over one SSH connection, list what the host lacks: login and host key, tmux 3.2+, its agents' CLIs, jaggers (the same version), the folder")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers host check box', 'jaggers host check box --json']))
    .action(async (name: string, o: { json?: boolean }) => {
      const { hostCheck, renderHostCheck } = await import('../commands/hosts.js');
      const r = await hostCheck(await ctx(), name);
      if (!r.ok) setExit(1);
      e.io.writeOut(o.json ? json(r) : renderHostCheck(r));
    });
}
