// Setting a project up and keeping it running: the project file, profiles, the agents' guide, MCP,
// the API on TCP, the supervisor and its log.
import type { Command } from 'commander';
import path from 'node:path';
import type { Context } from '../context.js';
import { examples, json, seconds, type Deps } from './shared.js';

/** Adds init, doctor, profile check, skill install and show, mcp, serve, web and logs. */
export function registerSetup(program: Command, e: Deps): void {
  const { ctx, setExit } = e;

  program
    .command('init')
    .description('write a jaggers.json naming the team')
    .option('--agents <list>', 'comma-separated agent/profile names', 'claude,gemini')
    .option('--force', 'overwrite an existing jaggers.json')
    .addHelpText('after', examples(['jaggers init', 'jaggers init --agents claude,codex,qwen']))
    .action(async (o: { agents: string; force?: boolean }) => {
      const { init } = await import('../commands/init.js');
      e.io.writeOut(`wrote ${(await init(await ctx(), o.agents, o.force ?? false)).file}\n`);
    });

  program
    .command('doctor')
    .description('check tmux, the socket, jaggers.json, every profile and its command, and the supervisor')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers doctor']))
    .action(async (o: { json?: boolean }) => {
      const { doctor, renderDoctor } = await import('../commands/doctor.js');
      const r = await doctor(await ctx());
      if (!r.ok) setExit(1);
      e.io.writeOut(o.json ? json(r) : renderDoctor(r));
    });

  const profileCmd = program
    .command('profile')
    .description('profiles: how jaggers starts, reads and pins a CLI (profiles/<name>.json, .jaggers/profiles/<name>.json)');
  profileCmd
    .command('check <name>')
    .description(
      "run the profile's CLI on a private tmux server, walk it through idle, busy and done with a short prompt, and report which rule decided each state on which screen lines",
    )
    .option('--prompt <text>', 'the prompt to send (one line; default: a question that needs no tool)')
    .option('--timeout <s>', 'seconds for each wait: ready, the turn (default 60)', seconds)
    .option('--cwd <dir>', 'where the CLI runs (default: a new empty folder; a CLI that asks to trust new folders needs one it trusts)')
    .option('--capture [dir]', 'save the screen of each state (default .jaggers/profile-check/<name>)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples(['jaggers profile check claude', 'jaggers profile check mycli --capture --prompt "Say hi"', 'jaggers profile check qwen --cwd .']),
    )
    .action(async (name: string, o: { prompt?: string; timeout?: number; cwd?: string; capture?: string | boolean; json?: boolean }) => {
      const c = await ctx();
      const { profileCheck, renderProfileCheck } = await import('../commands/profile-check.js');
      const capture = o.capture === true ? path.join(c.jaggersDir, 'profile-check', name) : o.capture || undefined;
      const r = await profileCheck(c, name, { prompt: o.prompt, timeout: o.timeout, cwd: o.cwd, capture });
      e.io.writeOut(o.json ? json(r) : renderProfileCheck(r));
      if (!r.ok) setExit(1);
    });

  const skill = program.command('skill').description('the guide that teaches agents to use jaggers (MCP tools or commands)');
  skill
    .command('install')
    .description('write it: .claude/skills/jaggers/SKILL.md, and a section between markers in GEMINI.md, QWEN.md and AGENTS.md')
    .option('--agent <list>', 'only for these: claude, gemini, qwen, codex (comma-separated; default all four)')
    .option('--remove', 'take it out again (each file as it was before)')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers skill install', 'jaggers skill install --agent claude,codex', 'jaggers skill install --remove']))
    .action(async (o: { agent?: string; remove?: boolean; json?: boolean }) => {
      const c = await ctx();
      const { skill: run, renderSkill } = await import('../commands/skill.js');
      const changes = await run(c, o);
      e.io.writeOut(o.json ? json(changes) : renderSkill(changes));
    });
  skill
    .command('show')
    .description('print the guide')
    .action(async () => {
      const { GUIDE } = await import('../skill/guide.js');
      e.io.writeOut(GUIDE);
    });

  program
    .command('mcp')
    .description("serve jaggers' MCP tools on stdio (agents started by jaggers get it registered); --print-config shows that registration")
    .option('--print-config <cli>', 'show what jaggers registers in an agent of this profile (claude, gemini, qwen, codex, demo...) or of this name')
    .option('--json', 'with --print-config: as JSON')
    .addHelpText('after', examples(['jaggers mcp --print-config claude', 'jaggers mcp --print-config codex --json', 'claude mcp add jaggers -- jaggers mcp']))
    .action(async (o: { printConfig?: string; json?: boolean }) => {
      const c = await ctx();
      if (o.printConfig !== undefined) {
        const { printConfig, renderConfig } = await import('../commands/mcp.js');
        const v = await printConfig(c, o.printConfig);
        e.io.writeOut(o.json ? json(v) : renderConfig(v));
        return;
      }
      const { serveMcp } = await import('../mcp/server.js');
      await serveMcp(c);
      e.leave();
    });

  program
    .command('serve')
    .description('serve the API on TCP as well (bearer token in .jaggers/token), kept across supervisor restarts')
    .option('--listen <host:port>', 'address to listen on (default 127.0.0.1:7420; a busy one is an error; the listener that works stays)')
    .option('--allow-remote', 'allow an address beyond this machine (0.0.0.0, a LAN address): the token travels unencrypted')
    .option('--stop', 'stop serving on TCP')
    .option('--web', 'serve the web dashboard instead (as `jaggers web`: --listen is its address, default 127.0.0.1 on a free port)')
    .option('--json', 'with --web: print JSON')
    .addHelpText(
      'after',
      examples([
        'jaggers serve --listen 127.0.0.1:7420',
        'curl -H "Authorization: Bearer $(cat .jaggers/token)" http://127.0.0.1:7420/v1/health',
        'jaggers serve --listen 0.0.0.0:7420 --allow-remote',
        'jaggers serve --stop',
      ]),
    )
    .action(async (o: { listen?: string; stop?: boolean; allowRemote?: boolean; web?: boolean; json?: boolean }) => {
      const c = await ctx();
      if (o.web) return runWeb(c, o);
      const { serve, renderServe } = await import('../commands/serve.js');
      const shown = renderServe(await serve(c, o));
      if (shown.warning) c.warn(shown.warning);
      e.io.writeOut(shown.out);
    });

  /** `jaggers web`, `jaggers serve --web`. */
  const runWeb = async (c: Context, o: { listen?: string; allowRemote?: boolean; stop?: boolean; json?: boolean }) => {
    const { web, renderWeb } = await import('../commands/web.js');
    const r = await web(c, o);
    const shown = renderWeb(r);
    if (shown.warning) c.warn(shown.warning);
    e.io.writeOut(o.json ? json(r) : shown.out);
  };

  program
    .command('web')
    .description('serve the web dashboard (from the supervisor, on 127.0.0.1) and print its URL with a one-time login token')
    .option('--listen <host:port>', 'address to listen on (default: where it listens already, else 127.0.0.1 on a free port)')
    .option('--allow-remote', 'allow an address beyond this machine (0.0.0.0, a LAN address): the login travels unencrypted')
    .option('--stop', 'stop serving the dashboard')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers web', 'jaggers web --listen 127.0.0.1:7421', 'jaggers web --json', 'jaggers web --stop']))
    .action(async (o: { listen?: string; allowRemote?: boolean; stop?: boolean; json?: boolean }) => runWeb(await ctx(), o));

  program
    .command('logs')
    .description("print the supervisor's log (JSON lines in .jaggers/logs/), or follow it")
    .option('-f, --follow', 'keep printing new lines')
    .option('--json', 'print the JSON lines as they are')
    .action(async (o: { follow?: boolean; json?: boolean }) => {
      const c = await ctx();
      const { followLog, prettyLogLine } = await import('../commands/logs.js');
      const print = (l: string) => e.io.writeOut(`${o.json ? l : prettyLogLine(l)}\n`);
      const abort = new AbortController();
      if (!o.follow) queueMicrotask(() => setImmediate(() => abort.abort()));
      else process.once('SIGINT', () => abort.abort());
      await followLog(c, print, abort.signal, 0);
    });
}
