// A jaggers project whose agents are the real CLIs: jaggers' own test rig (private tmux server, HOME,
// socket), one stub model server for all of them, and per CLI a throwaway HOME from prepareCliHome.
// The agents use the shipped profiles; jaggers.json only overlays each agent's environment.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AgentStatusRow } from '../../src/commands/status.js';
import { coalesced } from '../../src/coalesced.js';
import { ApiClient } from '../../src/api/client.js';
import { apiSocketPath } from '../../src/api/paths.js';
import type { TerminalView } from '../../src/api/types.js';
import { listPanes, type PaneInfo } from '../../src/tmux/commands.js';
import type { ControlClient } from '../../src/tmux/control-client.js';
import { Rig, type RunResult } from '../helpers/rig.js';
import { COPILOT_MODEL, OPENCODE_MODEL, prepareCliHome } from './cli-env.js';
import { cliBinary, type CliName } from './clis.js';
import { killGroup, processStart } from './private-tmux.js';
import type { StubApi } from './stub-requests.js';
import { defaultScript, namedFile } from './stub-script.js';
import { startStubServer, type RecordedRequest, type Reply, type StubServer } from './stub-server.js';

/** The wire API each CLI speaks: the stub's requests of one CLI are told apart by it. */
/** The run has the agents' native hooks off (`JAGGERS_E2E_HOOKS=off`): states from state files and screens. */
export const HOOKS_OFF = process.env.JAGGERS_E2E_HOOKS === 'off';
/** Said in the name of a suite that runs both ways. */
export const SIGNALS = HOOKS_OFF ? 'hooks off' : 'hooks on';

export const API_OF: Record<CliName, StubApi> = {
  claude: 'anthropic',
  qwen: 'openai-chat',
  gemini: 'gemini',
  codex: 'openai-responses',
  opencode: 'openai-chat',
  copilot: 'openai-chat',
};

/** Which CLI sent a request to the stub: its wire API, and for the two that share one, the model it names. */
export function cliOf(req: RecordedRequest): CliName | 'unknown' {
  const model = typeof req.body === 'object' && req.body !== null ? (req.body as { model?: unknown }).model : undefined;
  if (req.api === 'openai-chat') return model === OPENCODE_MODEL ? 'opencode' : model === COPILOT_MODEL ? 'copilot' : 'qwen';
  return (Object.entries(API_OF).find(([, a]) => a === req.api)?.[0] as CliName | undefined) ?? 'unknown';
}

/** The name a CLI gives tool `tool` of jaggers' MCP server: `jaggers_<tool>` (opencode), `jaggers-<tool>` (copilot), `mcp__jaggers__<tool>`. */
export function mcpToolName(cli: CliName, tool: string): string {
  return cli === 'opencode' ? `jaggers_${tool}` : cli === 'copilot' ? `jaggers-${tool}` : `mcp__jaggers__${tool}`;
}

/**
 * Streams text replies in pieces so the busy screen lasts long enough to be seen (codex shows
 * `Working` only until the first piece arrives).
 */
export const slowly = (r: Reply): Reply => (r.kind === 'text' ? { ...r, chunks: 6, delayMs: 400 } : r);

/** The stub's answer to a handover file that asks for `three paragraphs`. */
export const MULTI_LINE_REPLY = 'First paragraph of the answer.\n\nSecond paragraph, with `code` in it.\n\nThird and last paragraph.';

/**
 * The call of the CLI's own file-reading tool on `file` (an absolute path, as each of these tools asks);
 * codex has none: `cat` through its shell tool, inside its sandbox.
 */
export function readCall(cli: CliName | 'unknown', file: string): Reply {
  const call = (name: string, args: Record<string, unknown>): Reply => ({ kind: 'tool', command: '', call: { name, args } });
  switch (cli) {
    case 'claude':
      return call('Read', { file_path: file });
    case 'qwen':
    case 'gemini':
      return call('read_file', { file_path: file });
    case 'opencode':
      return call('read', { filePath: file });
    case 'copilot':
      return call('view', { path: file });
    default:
      return { kind: 'tool', command: `cat ${JSON.stringify(file)}`, escalate: false };
  }
}

/** The words after `read-it-yourself:` in the newest tool result that carries them (what a file tool read). */
const readByTool = (req: RecordedRequest): string | undefined => [...JSON.stringify(req.body).matchAll(/read-it-yourself: ([a-z ]+)/g)].at(-1)?.[1];

/**
 * The default script, slowed down, except that a handover file asking for something that
 * `needs-approval` gets a shell tool call (`touch approved-<cli>.txt`) instead of an answer, one
 * asking for `three paragraphs` gets `MULTI_LINE_REPLY`, and one saying `at once` gets its answer
 * unslowed (a turn under a second), and one saying `read-it-yourself: <words>` is read with the CLI's
 * own file tool (`readCall`), its answer `read by its tool: <words>` taken from the tool's result.
 */
export function teamScript(cwds: string[]): (req: RecordedRequest) => Reply {
  return (req) => {
    // The pointer's path is relative to the agent's own folder: the folder it names a file in.
    const found = req.hasToolResult ? undefined : cwds.map((cwd) => ({ cwd, file: namedFile(req.lastUserText ?? '', cwd) })).find((f) => f.file !== undefined);
    const { cwd, file } = found ?? {};
    const asked = file === undefined ? '' : readFileSync(file, 'utf8');
    // `call mcp__jaggers__<tool>`: the model calls that tool of jaggers' MCP server (claude's names).
    const mcp = /call mcp__jaggers__(\w+)/.exec(asked);
    const caller = cliOf(req);
    // `read-it-yourself`: the model reads the handover file with the CLI's own tool, then answers with what it read.
    if (file !== undefined && asked.includes('read-it-yourself')) return readCall(caller, file);
    const read = req.hasToolResult ? readByTool(req) : undefined;
    if (read !== undefined) return { kind: 'text', text: `read by its tool: ${read}` };
    if (mcp && (caller === 'claude' || caller === 'opencode' || caller === 'copilot'))
      return { kind: 'tool', command: '', call: { name: mcpToolName(caller, mcp[1]!), args: {} } };
    if (asked.includes('needs-approval')) return { kind: 'tool', command: `touch approved-${cliOf(req)}.txt` };
    if (asked.includes('three paragraphs')) return slowly({ kind: 'text', text: MULTI_LINE_REPLY });
    // `at once`: the whole reply in one piece, so the turn ends in well under a second.
    if (asked.includes('at once')) return defaultScript(req, cwd);
    return slowly(defaultScript(req, cwd));
  };
}

export interface Team {
  rig: Rig;
  stub: StubServer;
  clis: CliName[];
  /** Each CLI's throwaway HOME. */
  homes: Partial<Record<CliName, string>>;
  /** Each CLI's environment as its agent gets it (HOME, config, the CLI's folder first on PATH). */
  envs: Partial<Record<CliName, Record<string, string>>>;
  /** The folder each CLI runs in. */
  cwds: Record<CliName, string>;
  /** Runs `jaggers <args>` in this process against the team's project and tmux server. */
  jg(args: string[]): Promise<RunResult>;
  /** Runs a `--json` command that must succeed and parses its output. */
  jgJson<T>(args: string[]): Promise<T>;
  pane(agent: string): Promise<PaneInfo>;
  /**
   * Waits until the supervisor's view of `agent` (`GET /v1/terminals`) satisfies `ok`, then returns
   * `jaggers status <agent> --json`. Event driven: asks again on each output of the agent's pane and
   * on tmux's report that a window's `@jaggers_state` changed; never a fixed sleep.
   */
  waitForStatus(agent: string, ok: (s: TerminalView) => boolean, opts?: { timeoutMs?: number; what?: string }): Promise<AgentStatusRow & { turns: number }>;
  /** The states the supervisor published for `agent` since `since` (ms epoch), with their times. */
  published(agent: string, since: number): Promise<string>;
  /** `tmux kill-server` on the team's server, then the process group of every pane it had. */
  killServer(): Promise<void>;
  /** The stub's turn requests sent by `cli`. */
  turnsOf(cli: CliName): RecordedRequest[];
  dispose(): Promise<void>;
}

/** The rig's project made a git repository on `main` with one commit (jaggers.json and a README). */
async function firstCommit(rig: Rig): Promise<void> {
  await writeFile(path.join(rig.home, '.gitconfig'), '[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n');
  await writeFile(path.join(rig.root, 'README.md'), '# a project\n');
  const git = (args: string[]) =>
    execFileSync('git', args, { cwd: rig.root, env: { ...rig.env, LC_ALL: 'C' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  git(['init', '-q', '-b', 'main']);
  git(['add', 'README.md', 'jaggers.json']);
  git(['commit', '-q', '-m', 'first']);
}

/**
 * This control client's name once tmux has attached it. Commands such as `refresh-client` without
 * `-t` act on tmux's "current client", which is another client while this one's attach is still
 * being processed (seen on tmux 3.3a: "no current client", or a subscription set on someone else).
 */
async function attachedName(c: ControlClient): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const mine = (await c.runOk(['list-clients', '-F', '#{client_pid}\t#{client_name}\t#{client_session}'])).find((l) => l.startsWith(`${c.pid}\t`));
    const [, name, session] = mine?.split('\t') ?? [];
    if (name && session) return name;
  }
  throw new Error(`tmux never listed control client ${c.pid} as attached`);
}

export interface TeamOptions {
  /** No folder is trusted in the CLIs' configs (claude asks its trust question). */
  untrusted?: boolean;
  /**
   * Each agent works in a git worktree of its own (`"isolation": "worktree"`, no `cwd`): the project is a
   * git repository with one commit (the identity in the rig's HOME, which the supervisor's git uses),
   * and `cwds[cli]` is `<project>/.jaggers/worktrees/<cli>`, made by `up` (git wants to make the folder).
   */
  worktrees?: boolean;
}

export async function createTeam(clis: CliName[], opts: TeamOptions = {}): Promise<Team> {
  const bins = Object.fromEntries(clis.map((cli) => [cli, cliBinary(cli)])) as Record<CliName, string>;
  const rig = await Rig.create();
  let stub: StubServer | undefined;
  /** One shared connection, made once even when several callers ask for it at the same time. */
  let control: Promise<ControlClient> | undefined;
  try {
    // claude runs in a folder of its own (its transcript is filed under that folder's name, and the
    // pointer's path must be relative to it); the others in the project root. With worktrees, each in its own.
    const cwdOf = (cli: CliName) =>
      opts.worktrees ? path.join(rig.root, '.jaggers', 'worktrees', cli) : cli === 'claude' ? path.join(rig.root, 'agents', cli) : rig.root;
    const cwds = Object.fromEntries(clis.map((cli) => [cli, cwdOf(cli)])) as Record<CliName, string>;
    stub = await startStubServer({ cwd: rig.root, script: teamScript([...new Set(Object.values(cwds))]) });
    const cliRoot = path.join(path.dirname(rig.root), 'clis');
    await mkdir(cliRoot, { recursive: true });
    const homes: Partial<Record<CliName, string>> = {};
    const envs: Partial<Record<CliName, Record<string, string>>> = {};
    const agents = await Promise.all(
      clis.map(async (cli) => {
        // A worktree's folder is made by `up` (git worktree add refuses a folder it does not know).
        if (!opts.worktrees) await mkdir(cwds[cli], { recursive: true });
        const { env, home } = prepareCliHome(cli, { root: cliRoot, port: stub!.port, cwd: cwds[cli], ...(opts.untrusted ? { trust: false } : {}) });
        homes[cli] = home;
        envs[cli] = { ...env, PATH: `${path.dirname(bins[cli])}${path.delimiter}${env.PATH}` };
        const where = opts.worktrees ? { isolation: 'worktree' } : { cwd: path.relative(rig.root, cwds[cli]) || '.' };
        return { name: cli, profile: cli, ...where, env: envs[cli] };
      }),
    );
    // JAGGERS_E2E_HOOKS=off (the `e2e-screen` project): the same tests with the CLIs' hooks off, so
    // states come from state files and screens alone.
    const hooks = HOOKS_OFF ? { hooks: false } : {};
    await writeFile(path.join(rig.root, 'jaggers.json'), `${JSON.stringify({ ...hooks, agents }, null, 2)}\n`);
    if (opts.worktrees) await firstCommit(rig);

    // The tmux server inherits the environment of the command that starts it, and every pane gets
    // that plus its agent's env: keep the test runner's own variables (VITEST, NODE_ENV...) out.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: rig.home,
      LANG: 'C.UTF-8',
      TERM: 'xterm-256color',
      TMUX_TMPDIR: rig.tmuxTmpDir,
      JAGGERS_SOCKET: rig.socket,
      JAGGERS_SESSION_NAME: rig.session,
    };
    const jg = (args: string[]) => rig.run(args, { env });
    const jgJson = async <T>(args: string[]): Promise<T> => {
      const r = await jg(args);
      if (r.code !== 0) throw new Error(`jaggers ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
      return JSON.parse(r.stdout) as T;
    };

    // Every state the supervisor published, as tmux reported it (sampled once a second), for failure messages.
    const timeline: { at: number; window: string; state: string }[] = [];
    const connect = (): Promise<ControlClient> =>
      (control ??= (async () => {
        const c = await rig.control();
        const self = await attachedName(c);
        c.onNotification((name, args) => {
          if (name !== 'subscription-changed' || args[0] !== 'e2e-timeline') return;
          const window = args.find((a) => a.startsWith('@')) ?? '?';
          timeline.push({ at: Date.now(), window, state: args.slice(args.indexOf(':') + 1).join(' ') });
        });
        await c.runOk(['refresh-client', '-t', self, '-B', 'e2e-timeline:@*:#{@jaggers_state}']);
        await c.runOk(['refresh-client', '-t', self, '-B', 'e2e-state:@*:#{@jaggers_state}']);
        return c;
      })());

    const pane = async (agent: string): Promise<PaneInfo> => {
      const c = await connect();
      const p = (await listPanes(c, rig.session)).find((x) => x.agent === agent);
      if (!p) throw new Error(`no pane for agent ${agent}`);
      return p;
    };

    const waitForStatus: Team['waitForStatus'] = async (agent, ok, opts = {}) => {
      const { timeoutMs = 60_000, what = 'the wanted state' } = opts;
      const p = await pane(agent);
      const c = await connect();
      const api = new ApiClient({ socketPath: apiSocketPath(path.join(rig.root, '.jaggers')) });
      let last: TerminalView | null = null;
      const published = await new Promise<TerminalView>((resolve, reject) => {
        let finished = false;
        const finish = (err: Error | null) => {
          if (finished) return;
          finished = true;
          clearTimeout(timer);
          offOut();
          offNote();
          stop.abort();
          if (err) reject(err);
          else resolve(last!);
        };
        // The supervisor's own state events are the trigger that cannot be missed: tmux samples a
        // window's option once a second, so done -> busy -> done within one sample is no change there,
        // and a turn that ends by a quiet screen makes no output. A stream that ends (the supervisor
        // killed and started again) is opened again on the next trigger.
        const stop = new AbortController();
        let following = false;
        const follow = () => {
          if (following || finished) return;
          following = true;
          void api
            .events('/v1/events?types=state', (e) => (e.data as { agent?: string }).agent === agent && void check(), { signal: stop.signal })
            .catch(() => undefined)
            .finally(() => (following = false));
        };
        const check = coalesced(async () => {
          if (finished) return;
          follow();
          // A supervisor not answering (starting again after a kill) is asked again on the next trigger.
          const views = await api.call<TerminalView[]>('GET', '/v1/terminals').catch(() => null);
          last = views?.find((v) => v.agent === agent) ?? last;
          if (last && ok(last)) finish(null);
        });
        const timer = setTimeout(() => {
          void (async () => {
            const capture = async (target: string) => (await rig.tmux(['capture-pane', '-p', '-t', target]).catch((e: unknown) => String(e))).trimEnd();
            const screen = await capture(p.paneId);
            // Window 0 is the supervisor that publishes states: its table and errors say why none came.
            const supervisor = await capture(`=${rig.session}:0`);
            finish(
              new Error(
                `${agent}: timed out after ${timeoutMs} ms waiting for ${what}; published: ${JSON.stringify(last)}; the screen was:\n${screen}\n` +
                  `the supervisor (window 0) showed:\n${supervisor}`,
              ),
            );
          })();
        }, timeoutMs);
        const offOut = c.onOutput((id) => {
          if (id === p.paneId) void check();
        });
        const offNote = c.onNotification((name, args) => {
          if (name === 'subscription-changed' && args[0] === 'e2e-state') void check();
        });
        void check();
      });
      const row = await jgJson<AgentStatusRow>(['status', agent, '--json']);
      // The same state, or a later one: the agent may have moved on meanwhile (CI: opencode, done with its
      // turn, went busy on the result of the job it asked for, delivered to its inbox in between).
      const later = row.since !== null && published.since !== null && Date.parse(row.since) > Date.parse(published.since);
      if (row.state !== published.state && !later)
        throw new Error(`${agent}: status says ${row.state} (since ${row.since}), the window said ${published.state} (since ${published.since})`);
      return { ...row, turns: published.turns };
    };

    const killServer = async () => {
      const c = await rig.control().catch(() => undefined);
      const panes = c ? await listPanes(c, rig.session).catch(() => []) : [];
      // Each group only while its leader is the process it was (pids wrap): a live pane's leader by its
      // start time; a dead pane's group (children it left) only while no process holds its pid.
      const groups = panes.flatMap((p) => (p.panePid ? [{ pid: p.panePid, started: p.dead ? 'gone' : processStart(p.panePid) }] : []));
      control = undefined;
      await rig.tmux(['kill-server']).catch(() => undefined);
      for (const g of groups) await killGroup(g.pid, 1500, g.started);
    };

    return {
      rig,
      stub,
      clis,
      homes,
      envs,
      cwds,
      jg,
      jgJson,
      pane,
      waitForStatus,
      killServer,
      async published(agent, since) {
        const p = await pane(agent).catch(() => undefined);
        return timeline
          .filter((e) => e.window === p?.windowId && e.at >= since)
          .map((e) => `${e.state} (at ${e.at - since} ms)`)
          .join(', ');
      },
      turnsOf: (cli) => stub!.turns().filter((t) => cliOf(t) === cli),
      async dispose() {
        // JAGGERS_E2E_KEEP=DIR: the project's .jaggers (supervisor log, journal, handover and inbox files),
        // the stub's requests and each pane's last screen, kept in DIR/<test folder> for a look.
        const keep = process.env.JAGGERS_E2E_KEEP && path.join(process.env.JAGGERS_E2E_KEEP, path.basename(path.dirname(rig.root)));
        if (keep) {
          await mkdir(keep, { recursive: true });
          for (const cli of clis) {
            const screen = await pane(cli)
              .then((p) => rig.tmux(['capture-pane', '-p', '-S', '-200', '-t', p.paneId]))
              .catch((e: unknown) => String(e));
            await writeFile(path.join(keep, `screen-${cli}.txt`), screen);
          }
          await writeFile(path.join(keep, 'stub-requests.json'), JSON.stringify(stub!.requests, null, 1));
        }
        await killServer();
        if (keep)
          await cp(path.join(rig.root, '.jaggers'), path.join(keep, 'jaggers'), { recursive: true, filter: (f) => !f.endsWith('.sock') }).catch(
            () => undefined,
          );
        await rig.cleanup().catch(() => undefined);
        await stub?.close().catch(() => undefined);
      },
    };
  } catch (e) {
    await rig.cleanup().catch(() => undefined);
    await stub?.close().catch(() => undefined);
    throw e;
  }
}
