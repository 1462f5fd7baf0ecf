// The commander program. Every action imports its command's module when it runs, so a command loads
// only what it uses: `status` and `ls` talk to the supervisor and never load tmux, zod or xstate code.
import { Command, CommanderError, Option } from 'commander';
import path from 'node:path';
import { resolveContext, type Context, type GlobalOptions } from './context.js';
import { isJaggersError, JaggersError } from './errors.js';
import type { Output } from './output.js';
import type { AddOptions } from './commands/flows.js';

export interface Env {
  io: Output;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';
const TASK = /^[A-Za-z0-9_.-]{1,64}$/;

function checkTask(task: string | undefined, flag: string): void {
  if (task !== undefined && !TASK.test(task))
    throw new JaggersError('E_USAGE', `${flag} must be 1-64 letters, digits, '.', '-' or '_', got ${JSON.stringify(task)}`);
}

function seconds(v: string): number {
  const n = Number(v);
  if (!(n > 0)) throw new JaggersError('E_USAGE', `--timeout must be a positive number of seconds, got ${JSON.stringify(v)}`);
  return n;
}

export function buildProgram(e: Env, setExit: (code: number) => void): Command {
  const program = new Command('jaggers')
    .description('Run coding-agent CLIs side by side in tmux and make them work together')
    .option('--project <dir>', 'project folder (default: nearest folder with jaggers.json, else the current one)')
    .option('--socket <name|path>', 'tmux socket name (-L) or path (-S); default jaggers-<8 hex of the project path> (env JAGGERS_SOCKET)')
    .option('--session <name>', 'tmux session name (default: jaggers.json session, else the project folder name)')
    .option('-v, --verbose', "show the supervisor's log lines on stderr while the command runs (also JAGGERS_LOG=debug)")
    .configureOutput({ writeOut: e.io.writeOut, writeErr: e.io.writeErr })
    .exitOverride()
    .enablePositionalOptions()
    .showHelpAfterError();
  // Each warning once per command, on stderr (the registry says so when it repaired itself after a crash).
  const warned = new Set<string>();
  const warn = (m: string) => {
    if (!warned.has(m)) e.io.writeErr(`jaggers: warning: ${m}\n`);
    warned.add(m);
  };
  const ctx = async (): Promise<Context> => resolveContext(program.opts<GlobalOptions>(), e.env, e.cwd, warn);

  // --verbose: follow the supervisor's log while the command runs.
  let stopLog: (() => Promise<void>) | null = null;
  program.hook('preAction', async (_program, action) => {
    if (action.name() === 'supervise' || action.name() === 'logs') return;
    if (!program.opts<GlobalOptions>().verbose && e.env.JAGGERS_LOG?.toLowerCase() !== 'debug') return;
    const c = await ctx();
    const { followLog, prettyLogLine } = await import('./commands/logs.js');
    const abort = new AbortController();
    const done = followLog(c, (l) => e.io.writeErr(`${prettyLogLine(l)}\n`), abort.signal).catch(() => {});
    stopLog = async () => {
      abort.abort();
      await done;
    };
  });
  program.hook('postAction', async () => {
    await stopLog?.();
  });

  program
    .command('up')
    .description('open the tmux session with one window per agent (idempotent: adds what is missing) and start the supervisor')
    .option('--agents <list>', 'ad hoc team: comma-separated profile names')
    .option('--size <WxH>', 'agent window size (default 200x50)')
    .option('--task <id>', 'open the team for a task: its own windows and conversations, JAGGERS_TASK_ID set')
    .option('--no-wait', 'do not wait for the agents to be ready')
    .addHelpText('after', examples(['jaggers up', 'jaggers up --agents claude,gemini', 'jaggers up --task fix-login', 'jaggers up --size 160x48']))
    .action(async (o: { agents?: string; size?: string; task?: string; wait: boolean }) => {
      checkTask(o.task, '--task');
      const c = await ctx();
      const { loadTeam, teamSpecs } = await import('./commands/team.js');
      const { up, renderUp, upFailed } = await import('./commands/up.js');
      const r = await up(c, await loadTeam(c, await teamSpecs(c, o.agents)), { size: o.size, task: o.task ?? null, wait: o.wait });
      e.io.writeOut(renderUp(r));
      if (upFailed(r)) setExit(1);
    });

  program
    .command('demo')
    .description('open a session with three built-in demo agents (no API keys needed) and run a planner -> coder -> reviewer handoff chain')
    .option('--size <WxH>', 'agent window size (default 200x50)')
    .option('--no-run', 'only open the session')
    .addHelpText('after', examples(['jaggers demo', 'jaggers demo --no-run && jaggers attach']))
    .action(async (o: { size?: string; run: boolean }) => {
      const { demo } = await import('./commands/demo.js');
      await demo(await ctx(), e.io, o);
    });

  program
    .command('resume <task>')
    .description("reopen a task's agents, each in its own pinned conversation; a workflow task goes on from its last finished turn")
    .option('--detach', 'return once the workflow goes on (the supervisor sees it through)')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers resume fix-login', 'jaggers resume t-5e6f7a8b --detach']))
    .action(async (task: string, o: { detach?: boolean; json?: boolean }) => {
      checkTask(task, 'resume');
      const { resumeTask, renderRunEnd } = await import('./commands/tasks.js');
      const { renderUp, upFailed } = await import('./commands/up.js');
      const { opened, task: v } = await resumeTask(await ctx(), e.io, task, o);
      if (!v) {
        e.io.writeOut(o.json ? json(opened) : renderUp(opened));
        if (upFailed(opened)) setExit(1);
        return;
      }
      e.io.writeOut(o.json ? json(v) : o.detach ? `${v.id} ${v.status}${v.reason ? `: ${v.reason}` : ''}\n` : renderRunEnd(v));
      if (!o.detach && v.status !== 'done') setExit(1);
    });

  program
    .command('sessions')
    .description('list the pinned conversations: task, agent, terminal, session id, forks')
    .option('--task <id>', "only this task's")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers sessions', 'jaggers sessions --task fix-login --json']))
    .action(async (o: { task?: string; json?: boolean }) => {
      const { sessions, renderPins } = await import('./commands/sessions.js');
      const rows = await sessions(await ctx(), o.task);
      e.io.writeOut(o.json ? json(rows) : renderPins(rows));
    });

  program
    .command('exec <cli> [args...]')
    .description('run a CLI with "-r latest", "--resume latest" or "-c" rewritten into the session pinned for $JAGGERS_TASK_ID and the agent')
    .option('--agent <name>', 'whose pin (default: $JAGGERS_AGENT, else the CLI name)')
    .option('--task <id>', 'which task (default: $JAGGERS_TASK_ID, else the default team)')
    .passThroughOptions()
    .allowUnknownOption()
    .addHelpText('after', examples(['jaggers exec claude -c -p "status?"', 'jaggers exec gemini -r latest', 'jaggers exec codex resume --last']))
    .action(async (cli: string, args: string[], o: { agent?: string; task?: string }) => {
      const { execPinned } = await import('./commands/sessions.js');
      setExit(await execPinned(await ctx(), cli, args, o));
    });

  program
    .command('init')
    .description('write a jaggers.json naming the team')
    .option('--agents <list>', 'comma-separated agent/profile names', 'claude,gemini')
    .option('--force', 'overwrite an existing jaggers.json')
    .addHelpText('after', examples(['jaggers init', 'jaggers init --agents claude,codex,qwen']))
    .action(async (o: { agents: string; force?: boolean }) => {
      const { init } = await import('./commands/init.js');
      const names = o.agents
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      e.io.writeOut(`wrote ${(await init(await ctx(), names, o.force ?? false)).file}\n`);
    });

  program
    .command('attach [agent]')
    .description("attach this terminal to the session, at an agent's window if named")
    .option('-r, --read-only', 'watch without typing into the agents')
    .addHelpText('after', examples(['jaggers attach', 'jaggers attach claude --read-only']))
    .action(async (agent: string | undefined, o: { readOnly?: boolean }) => {
      const { attach } = await import('./commands/attach.js');
      setExit(await attach(await ctx(), agent, o.readOnly ?? false));
    });

  program
    .command('ls')
    .description('list agents: terminal ids, windows, pids, states')
    .option('--json', 'print JSON')
    .option('--watch', 'redraw whenever a state changes')
    .addHelpText('after', examples(['jaggers ls', 'jaggers ls --json', 'jaggers ls --watch']))
    .action(async (o: { json?: boolean; watch?: boolean }) => {
      const c = await ctx();
      const { ls, renderAgents } = await import('./commands/ls.js');
      if (o.watch) {
        const { watchStates } = await import('./commands/watch.js');
        return watchStates(c, async () => e.io.writeOut(`\x1b[H\x1b[2J${renderAgents(await ls(c))}`));
      }
      const rows = await ls(c);
      e.io.writeOut(o.json ? json(rows) : renderAgents(rows));
    });

  program
    .command('status [agent]')
    .description("each agent's state (starting, idle, busy, waiting_input, done, error, exited) and since when")
    .option('--json', 'print JSON')
    .option('--watch', 'redraw whenever a state changes')
    .addHelpText('after', examples(['jaggers status', 'jaggers status claude --json', 'jaggers status --watch']))
    .action(async (agent: string | undefined, o: { json?: boolean; watch?: boolean }) => {
      const c = await ctx();
      const { status, renderStatus } = await import('./commands/status.js');
      const show = async () => {
        const rows = await status(c, agent);
        return o.json ? json(agent ? rows[0] : rows) : renderStatus(rows);
      };
      if (o.watch) {
        const { watchStates } = await import('./commands/watch.js');
        return watchStates(c, async () => e.io.writeOut(`\x1b[H\x1b[2J${await show()}`));
      }
      e.io.writeOut(await show());
    });

  program
    .command('why <agent>')
    .description('why jaggers thinks an agent is in its state: the rule, what it matched, what is on screen now and what the state waits for')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers why claude', 'jaggers why codex --json']))
    .action(async (agent: string, o: { json?: boolean }) => {
      const { why, renderWhy } = await import('./commands/status.js');
      const r = await why(await ctx(), agent);
      e.io.writeOut(o.json ? json(r) : renderWhy(r));
    });

  program
    .command('send <agent> <text...>')
    .description(
      "type text into an agent's pane and press Enter, after any turn in progress there; verified (busy, an echo, or the text leaving the input box)",
    )
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers send claude "explain src/cli.ts"', 'jaggers send claude /clear']))
    .action(async (agent: string, text: string[], o: { json?: boolean }) => {
      const { send } = await import('./commands/pane.js');
      const r = await send(await ctx(), agent, text.join(' '));
      e.io.writeOut(o.json ? json(r) : `sent ${r.bytes} bytes to ${r.agent} (${r.pane}): ${r.evidence}\n`);
    });

  program
    .command('answer <agent> <choice>')
    .description(
      'answer the menu an agent waits on (a permission or trust question): by its number or a part of its label; refused if the screen changed meanwhile',
    )
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers answer claude 1', 'jaggers answer gemini "allow once"']))
    .action(async (agent: string, choice: string, o: { json?: boolean }) => {
      const { answer } = await import('./commands/pane.js');
      const r = await answer(await ctx(), agent, choice);
      e.io.writeOut(o.json ? json(r) : `${r.agent}: answered ${JSON.stringify(r.question.text)} with ${r.chose.number}. ${r.chose.label}; now ${r.state}\n`);
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
      const { profileCheck, renderProfileCheck } = await import('./commands/profile-check.js');
      const capture = o.capture === true ? path.join(c.jaggersDir, 'profile-check', name) : o.capture || undefined;
      const r = await profileCheck(c, name, { prompt: o.prompt, timeout: o.timeout, cwd: o.cwd, capture });
      e.io.writeOut(o.json ? json(r) : renderProfileCheck(r));
      if (!r.ok) setExit(1);
    });

  program
    .command('assign <agent-or-profile>')
    .description('give an agent (or a new worker of a profile) a job in the background: prints its id and returns at once')
    .option('-m, --message <text>', 'the work, as text')
    .option('-f, --file <path>', 'the work, from a file')
    .option('--name <name>', 'a name for the job, shown by `jobs`')
    .option('--timeout <seconds>', "how long the job's turn may run (default 3600)", seconds)
    .option('--from <agent>', "who assigns it: the result goes to this agent's inbox (default: the calling agent's JAGGERS_TERMINAL_ID)")
    .option('--keep', "keep a worker's window open after its job ends")
    .option('--json', 'print the job as JSON')
    .addHelpText(
      'after',
      examples([
        'jaggers assign coder -m "add a --verbose flag to the CLI"',
        'jaggers assign claude -f task.md --name review   # a new claude worker window',
        'JOB=$(jaggers assign reviewer -m "review the last commit") && jaggers wait $JOB && jaggers result $JOB',
      ]),
    )
    .action(async (target: string, o: { message?: string; file?: string; name?: string; timeout?: number; from?: string; keep?: boolean; json?: boolean }) => {
      const { assign } = await import('./commands/jobs.js');
      const j = await assign(await ctx(), target, { ...o, timeoutS: o.timeout });
      if (o.json) return e.io.writeOut(json(j));
      e.io.writeOut(`${j.id}\n`);
      e.io.writeErr(
        `jaggers: ${j.id} queued for ${j.kind === 'worker' ? `a new ${j.target} worker` : j.target}; see \`jaggers wait ${j.id}\` and \`jaggers result ${j.id}\`\n`,
      );
    });

  program
    .command('jobs')
    .description('list background jobs: state, agent, why')
    .option('--json', 'print JSON')
    .option('--watch', 'redraw whenever a job changes')
    .addHelpText('after', examples(['jaggers jobs', 'jaggers jobs --json', 'jaggers jobs --watch']))
    .action(async (o: { json?: boolean; watch?: boolean }) => {
      const c = await ctx();
      const { jobs, renderJobs } = await import('./commands/jobs.js');
      if (o.watch) {
        const { watchStates } = await import('./commands/watch.js');
        return watchStates(c, async () => e.io.writeOut(`\x1b[H\x1b[2J${renderJobs(await jobs(c))}`), undefined, 'job,hello');
      }
      const list = await jobs(c);
      e.io.writeOut(o.json ? json(list) : renderJobs(list));
    });

  program
    .command('wait <job...>')
    .description('wait until the jobs end; exit status 0 all done, 1 one failed or was cancelled, 3 timed out')
    .option('--timeout <seconds>', 'give up after this long', seconds)
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers wait j-1a2b3c4d', 'jaggers wait j-1a2b3c4d j-5e6f7a8b --timeout 600']))
    .action(async (ids: string[], o: { timeout?: number; json?: boolean }) => {
      const { waitJobs, waitExitCode, renderWait } = await import('./commands/jobs.js');
      const r = await waitJobs(await ctx(), ids, o.timeout);
      e.io.writeOut(o.json ? json(r) : renderWait(r));
      setExit(waitExitCode(r));
    });

  program
    .command('result <job>')
    .description("a job's reply (and its artifact with --json)")
    .option('--json', 'print JSON: the job, the reply, its artifact')
    .addHelpText('after', examples(['jaggers result j-1a2b3c4d', 'jaggers result j-1a2b3c4d --json']))
    .action(async (id: string, o: { json?: boolean }) => {
      const { result, renderResult } = await import('./commands/jobs.js');
      const r = await result(await ctx(), id);
      e.io.writeOut(o.json ? json(r) : renderResult(r));
      if (r.job.state !== 'done') setExit(1);
    });

  program
    .command('cancel <id>')
    .description(
      "cancel a job (a queued one never starts, a running one's agent is interrupted with its profile's interrupt keys) or a workflow task (its turn's job is cancelled)",
    )
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers cancel j-1a2b3c4d', 'jaggers cancel t-5e6f7a8b']))
    .action(async (id: string, o: { json?: boolean }) => {
      if (/^j-[0-9a-f]{8,16}$/.test(id)) {
        const { cancel } = await import('./commands/jobs.js');
        const j = await cancel(await ctx(), id);
        return e.io.writeOut(o.json ? json(j) : `${j.id} ${j.state}: ${j.reason}\n`);
      }
      checkTask(id, 'cancel');
      const { cancelTask } = await import('./commands/tasks.js');
      const t = await cancelTask(await ctx(), id);
      e.io.writeOut(o.json ? json(t) : `${t.id} ${t.status}${t.reason ? `: ${t.reason}` : ''}\n`);
    });

  program
    .command('message <agent>')
    .description("put a message in an agent's inbox: stored before this returns, delivered once when the agent is ready")
    .option('-m, --message <text>', 'the message, as text')
    .option('-f, --file <path>', 'the message, from a file')
    .option('--from <agent>', "the sender (default: the calling agent's JAGGERS_TERMINAL_ID, else you)")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers message coder -m "the tests in test/api pass now"', 'jaggers message reviewer -f notes.md --from coder']))
    .action(async (to: string, o: { message?: string; file?: string; from?: string; json?: boolean }) => {
      const { message, renderSent } = await import('./commands/inbox.js');
      const m = await message(await ctx(), to, o);
      e.io.writeOut(o.json ? json(m) : renderSent(m));
    });

  program
    .command('inbox <agent>')
    .description("an agent's messages: pending ones (and why they wait) and delivered ones")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers inbox coder', 'jaggers inbox coder --json']))
    .action(async (agent: string, o: { json?: boolean }) => {
      const { inbox, renderInbox } = await import('./commands/inbox.js');
      const v = await inbox(await ctx(), agent);
      e.io.writeOut(o.json ? json(v) : renderInbox(v));
    });

  program
    .command('handoff <agent>')
    .description('hand work to an agent: write a handover file, type a pointer to it, wait for the reply')
    .option('-m, --message <text>', 'the work, as text')
    .option('-f, --file <path>', 'the work, from a file')
    .option('--from <agent>', 'the agent handing the work over (recorded in the handover file)')
    .option('--task <id>', 'the task this turn belongs to (default: $JAGGERS_TASK_ID, else a new one)')
    .option('--timeout <seconds>', 'how long to wait for the agent to be ready and to reply (default 600)', seconds)
    .option('--no-wait', 'return once the agent took the prompt (the supervisor still captures the reply)')
    .option('--headless', "run the turn headless in the agent's pinned session (its profile's headlessArgs) instead of typing into its pane")
    .option('--json', 'print JSON: artifact paths, timings, states')
    .addHelpText(
      'after',
      examples([
        'jaggers handoff coder --message "implement the plan in PLAN.md"',
        'jaggers handoff reviewer --file review.md --from coder --json',
        'jaggers handoff coder -m "start" --no-wait',
      ]),
    )
    .action(
      async (
        agent: string,
        o: { message?: string; file?: string; from?: string; task?: string; timeout?: number; wait: boolean; json?: boolean; headless?: boolean },
      ) => {
        checkTask(o.task, '--task');
        const { handoff } = await import('./commands/handoff.js');
        const r = await handoff(
          await ctx(),
          agent,
          { message: o.message, file: o.file, from: o.from, task: o.task, timeoutS: o.timeout, wait: o.wait, headless: o.headless },
          e.io,
        );
        if (o.json) return e.io.writeOut(json(r));
        if (!r.reply) return e.io.writeOut(`delivered turn ${r.turn} of task ${r.task} to ${r.agent}: ${r.artifact}\n`);
        e.io.writeOut(r.reply.text.replace(/\n*$/, '\n'));
      },
    );

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
      const { skill: run, renderSkill } = await import('./commands/skill.js');
      const changes = await run(c, o);
      e.io.writeOut(o.json ? json(changes) : renderSkill(changes));
    });
  skill
    .command('show')
    .description('print the guide')
    .action(async () => {
      const { GUIDE } = await import('./skill/guide.js');
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
        const { printConfig, renderConfig } = await import('./commands/mcp.js');
        const v = await printConfig(c, o.printConfig);
        e.io.writeOut(o.json ? json(v) : renderConfig(v));
        return;
      }
      const { serveMcp } = await import('./mcp/server.js');
      await serveMcp(c);
    });

  program
    .command('workflows')
    .description("list the workflows: built-in ones and the project's .jaggers/workflows/*.yaml")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers workflows', 'jaggers workflows --json']))
    .action(async (o: { json?: boolean }) => {
      const c = await ctx();
      const { workflows, renderWorkflows } = await import('./commands/workflows.js');
      const list = await workflows(c);
      e.io.writeOut(o.json ? json(list) : renderWorkflows(c, list));
      // Like doctor: the whole list, and a failure when a project file does not load.
      if (list.some((w) => w.error)) setExit(1);
    });

  program
    .command('workflow')
    .description('one workflow')
    .command('show <name>')
    .description("a workflow's steps: agent role, what each reads, loops and exit conditions, and each prompt template")
    .option('--yaml', 'print it as YAML (copy it to .jaggers/workflows/<name>.yaml to change it)')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers workflow show collaborative', 'jaggers workflow show adversarial --yaml > .jaggers/workflows/adversarial.yaml']))
    .action(async (name: string, o: { yaml?: boolean; json?: boolean }) => {
      const c = await ctx();
      const { showWorkflow, renderWorkflow, renderWorkflowYaml } = await import('./commands/workflows.js');
      const w = await showWorkflow(c, name);
      e.io.writeOut(o.json ? json(w) : o.yaml ? renderWorkflowYaml(w) : renderWorkflow(c, w));
    });

  const flow = program
    .command('flow')
    .description('scheduled flows: a prompt for an agent, a profile or a workflow, on a cron schedule (.jaggers/flows/<name>.md)');
  flow
    .command('add <name>')
    .description('write .jaggers/flows/<name>.md (checked first: the cron expression, the agent, profile or workflow)')
    .requiredOption('--schedule <cron>', 'a cron expression: 5 fields, or 6 with seconds first ("0 3 * * *": at 03:00 every day)')
    .option('--agent <name>', 'each run is a job for this agent of the team')
    .option('--profile <name>', 'each run is a job for a new worker of this profile')
    .option('--workflow <name>', 'each run is a workflow task')
    .option('--agents <a,b>', 'with --workflow: the agents for its roles')
    .option('--prompt <text>', 'the prompt')
    .option('--file <file>', 'the prompt, from a file')
    .option('--timeout <s>', 'seconds a run may take', seconds)
    .option('--disabled', 'write it disabled')
    .option('--force', 'replace an existing flow')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples([
        'jaggers flow add nightly-review --schedule "0 3 * * *" --agent claude --prompt "Review the commits of the last day"',
        'jaggers flow add triage --schedule "0 * * * *" --workflow adversarial --agents claude,gemini --file triage.md',
      ]),
    )
    .action(async (name: string, o: AddOptions & { json?: boolean }) => {
      const c = await ctx();
      const { addFlow } = await import('./commands/flows.js');
      const d = await addFlow(c, name, o);
      e.io.writeOut(o.json ? json(d) : `flow ${d.name}: ${d.file}${d.enabled ? '' : ' (disabled)'}\n`);
    });
  flow
    .command('ls')
    .description('the flows: schedule, what runs, enabled, next run, last run (a file that does not load, with its error)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const c = await ctx();
      const { flows, renderFlows } = await import('./commands/flows.js');
      const list = await flows(c);
      e.io.writeOut(o.json ? json(list) : renderFlows(list));
      if (list.some((f) => f.problem)) setExit(1);
    });
  flow
    .command('show <name>')
    .description("a flow's schedule, what it runs, its last run and its prompt")
    .option('--json', 'print JSON')
    .action(async (name: string, o: { json?: boolean }) => {
      const c = await ctx();
      const { showFlow, renderFlow1 } = await import('./commands/flows.js');
      const r = await showFlow(c, name);
      e.io.writeOut(o.json ? json(r) : renderFlow1(c, r));
    });
  flow
    .command('run <name>')
    .description('run a flow now (refused while its last run still goes)')
    .option('--json', 'print JSON')
    .action(async (name: string, o: { json?: boolean }) => {
      const c = await ctx();
      const { runFlow } = await import('./commands/flows.js');
      const v = await runFlow(c, name);
      e.io.writeOut(o.json ? json(v) : `${v.last?.id ?? ''}\n`);
    });
  for (const [cmd, on] of [
    ['enable', true],
    ['disable', false],
  ] as const)
    flow
      .command(`${cmd} <name>`)
      .description(`${cmd} a flow (sets \`enabled: ${on}\` in its file; the supervisor picks it up)`)
      .action(async (name: string) => {
        const c = await ctx();
        const { setEnabled } = await import('./commands/flows.js');
        const r = await setEnabled(c, name, on);
        e.io.writeOut(`flow ${name}: ${r.changed ? `${cmd}d` : `already ${cmd}d`}\n`);
      });
  flow
    .command('rm <name>')
    .description("delete a flow's file (its past runs stay in jobs and tasks)")
    .action(async (name: string) => {
      const c = await ctx();
      const { removeFlow } = await import('./commands/flows.js');
      e.io.writeOut(`removed ${await removeFlow(c, name)}\n`);
    });

  program
    .command('run <workflow>')
    .description('run a workflow (collaborative, adversarial, troubleshoot, handshake, handoff, or your own) as a task of its own')
    .requiredOption('--task <text>', 'what the task is about (the prompts quote it)')
    .option('--agents <a,b>', "the agents for the workflow's roles, in order (default: the first agents of the team)")
    .option('--detach', 'return at once with the task id; the supervisor runs it (and resumes it after its own restart)')
    .option('--dry-run', 'print the prompts the first pass would send, and start nothing')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples([
        'jaggers run collaborative --task "design the cache layer" --agents claude,gemini',
        'jaggers run adversarial --task "harden src/parse.ts" --detach',
        'jaggers run review --task "review the last commit" --dry-run',
      ]),
    )
    .action(async (workflow: string, o: { task: string; agents?: string; detach?: boolean; dryRun?: boolean; json?: boolean }) => {
      const { run, renderRunEnd, renderDryRun } = await import('./commands/tasks.js');
      const r = await run(await ctx(), e.io, workflow, o);
      if ('prompts' in r) return e.io.writeOut(o.json ? json(r) : renderDryRun(r));
      if (o.detach) {
        e.io.writeOut(o.json ? json(r) : `${r.id}\n`);
        if (!o.json) e.io.writeErr(`jaggers: task ${r.id} runs ${r.workflow}; follow it with \`jaggers show ${r.id}\` or \`jaggers resume ${r.id}\`\n`);
        return;
      }
      e.io.writeOut(o.json ? json(r) : renderRunEnd(r));
      if (r.status !== 'done') setExit(1);
    });

  program
    .command('tasks')
    .description('list tasks: workflow, status, turn, agents')
    .option('--json', 'print JSON')
    .option('--watch', 'redraw whenever a task changes')
    .addHelpText('after', examples(['jaggers tasks', 'jaggers tasks --json']))
    .action(async (o: { json?: boolean; watch?: boolean }) => {
      const c = await ctx();
      const { tasks, renderTasks } = await import('./commands/tasks.js');
      if (o.watch) {
        const { watchStates } = await import('./commands/watch.js');
        return watchStates(c, async () => e.io.writeOut(`\x1b[H\x1b[2J${renderTasks(await tasks(c))}`), undefined, 'task,hello');
      }
      const list = await tasks(c);
      e.io.writeOut(o.json ? json(list) : renderTasks(list));
    });

  program
    .command('show <task>')
    .description("a task's turns: step, agent, state, time, the session each went to, its handover and reply files")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers show t-5e6f7a8b', 'jaggers show t-5e6f7a8b --json']))
    .action(async (task: string, o: { json?: boolean }) => {
      checkTask(task, 'show');
      const { show, renderShow } = await import('./commands/tasks.js');
      const t = await show(await ctx(), task);
      e.io.writeOut(o.json ? json(t) : renderShow(t));
    });

  program
    .command('capture <agent>')
    .description("print an agent's screen as text")
    .option('--ansi', 'keep colours and attributes (escape sequences)')
    .option('--history <lines>', 'include this many lines of scrollback', (v) => Number(v))
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers capture claude', 'jaggers capture gemini --ansi', 'jaggers capture codex --json']))
    .action(async (agent: string, o: { ansi?: boolean; history?: number; json?: boolean }) => {
      const { capture } = await import('./commands/pane.js');
      const r = await capture(await ctx(), agent, o);
      e.io.writeOut(o.json ? json(r) : r.screen);
    });

  program
    .command('down')
    .description("stop the project's tmux server, every agent in it and the supervisor")
    .addHelpText('after', examples(['jaggers down']))
    .action(async () => {
      const { down } = await import('./commands/down.js');
      const r = await down(await ctx());
      e.io.writeOut(r.stopped ? `stopped tmux ${r.socket}\n` : `nothing running on tmux ${r.socket}\n`);
    });

  program
    .command('doctor')
    .description('check tmux, the socket, jaggers.json, every profile and its command, and the supervisor')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers doctor']))
    .action(async (o: { json?: boolean }) => {
      const { doctor, renderDoctor } = await import('./commands/doctor.js');
      const r = await doctor(await ctx());
      if (!r.ok) setExit(1);
      e.io.writeOut(o.json ? json(r) : renderDoctor(r));
    });

  program
    .command('serve')
    .description('serve the API on TCP as well (bearer token in .jaggers/token), kept across supervisor restarts')
    .option('--listen <host:port>', 'address to listen on', '127.0.0.1:7420')
    .option('--stop', 'stop serving on TCP')
    .addHelpText(
      'after',
      examples([
        'jaggers serve --listen 127.0.0.1:7420',
        'curl -H "Authorization: Bearer $(cat .jaggers/token)" http://127.0.0.1:7420/v1/health',
        'jaggers serve --stop',
      ]),
    )
    .action(async (o: { listen: string; stop?: boolean }) => {
      const { serve } = await import('./commands/serve.js');
      const r = await serve(await ctx(), o);
      e.io.writeOut(r.listen ? `serving the API on http://${r.listen} (bearer token in ${r.token})\n` : 'stopped serving on TCP\n');
    });

  program
    .command('logs')
    .description("print the supervisor's log (JSON lines in .jaggers/logs/), or follow it")
    .option('-f, --follow', 'keep printing new lines')
    .option('--json', 'print the JSON lines as they are')
    .action(async (o: { follow?: boolean; json?: boolean }) => {
      const c = await ctx();
      const { followLog, prettyLogLine } = await import('./commands/logs.js');
      const print = (l: string) => e.io.writeOut(`${o.json ? l : prettyLogLine(l)}\n`);
      const abort = new AbortController();
      if (!o.follow) queueMicrotask(() => setImmediate(() => abort.abort()));
      else process.once('SIGINT', () => abort.abort());
      await followLog(c, print, abort.signal, 0);
    });

  program
    .command('supervise', { hidden: true })
    .description('the supervisor (window 0): owns the session, serves the API')
    .action(async () => {
      const { runSupervisor } = await import('./supervisor/main.js');
      await runSupervisor(await ctx(), e.io);
    });

  program.addOption(new Option('--debug', 'print stack traces').hideHelp());
  return program;
}

/** Run the CLI; returns the exit code. Only cli.ts turns it into the process's exit. */
export async function main(argv: string[], e: Env): Promise<number> {
  let code = 0;
  const program = buildProgram(e, (c) => (code = c));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (isJaggersError(err)) {
      e.io.writeErr(`jaggers: ${err.message}\n`);
      return 1;
    }
    e.io.writeErr(`jaggers: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    return 70;
  }
}
