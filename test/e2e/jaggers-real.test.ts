// jaggers itself driving the four real CLIs, offline against the stub model server: `up` with the
// shipped profiles (only the environment is overlaid, to point each CLI at the stub and a throwaway
// HOME), handoffs with reply capture, approval prompts seen as waiting_input, pinned sessions resumed
// after the tmux server died, and a reply handed from one CLI to another.
// One team of every installed CLI shares one tmux server and one `up`; the steps run in order.
// Needs `npm run build` (window 0 runs the built supervisor) and scripts/install-real-clis.sh; a CLI
// that is not installed is skipped (JAGGERS_REQUIRE_REAL_CLIS=1 makes it fail instead).

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/mcp/tools.js';
import type { HandoffResult, StreamEvent } from '../../src/api/types.js';
import type { AgentStatusRow } from '../../src/commands/status.js';
import type { PinRow } from '../../src/commands/sessions.js';
import { parseArtifact } from '../../src/handover/artifact.js';
import { builtinProfilesDir } from '../../src/package-root.js';
import { api } from '../helpers/api.js';
import { CLI_NAMES, cliBinary, CLIS, isChosen, isCliInstalled, type CliName } from './clis.js';
import { codexSessionIds, firstJsonLine, opencodeSessions, sessionFile } from './session-files.js';
import { argvOf, profileResumeArgs, secretOf, teamChecks } from './team-checks.js';
import { createTeam, HOOKS_OFF, mcpToolName, MULTI_LINE_REPLY, type Team, SIGNALS } from './team.js';

const required = process.env.JAGGERS_REQUIRE_REAL_CLIS === '1';
// JAGGERS_E2E_CLIS=claude,codex narrows the team (to look into one CLI).
const team = CLI_NAMES.filter((cli) => (required || isCliInstalled(cli)) && isChosen(cli));
const inTeam = (cli: CliName) => team.includes(cli);

const title = (cli: CliName) => {
  const why = inTeam(cli) ? '' : isCliInstalled(cli) ? ' (skipped: not in JAGGERS_E2E_CLIS)' : ' (skipped: not installed; run scripts/install-real-clis.sh)';
  return `jaggers with real ${cli} ${CLIS[cli].version}${why}`;
};

/**
 * A test whose outcome does not depend on where a turn's states come from (an MCP call, a stray prompt
 * cleared, a pin, a reply handed on, a second restart) runs in the hooks-on project only: with hooks
 * off it would type the same keys and read the same files, and its CLI starts and turns cost the suite
 * minutes (docs/testing.md). Its title says so there.
 */
const hooksOnOnly = (name: string): string => (HOOKS_OFF ? `${name} (skipped with hooks off: it does not depend on the signal source)` : name);

/** The pattern of the shipped profile's approval-menu rule. */
const approvalPattern = (cli: CliName): string => {
  const profile = JSON.parse(readFileSync(path.join(builtinProfilesDir, `${cli}.json`), 'utf8')) as { detect: { rules: { name: string; pattern: string }[] } };
  return profile.detect.rules.find((r) => r.name === 'approval-menu')?.pattern ?? 'no approval-menu rule';
};

/**
 * The CLIs whose native hooks jaggers installs here (docs/hooks.md): with them on, a hook decides each
 * turn's start and end, and a Stop with the reply in it gives the reply.
 */
const HOOKED: readonly CliName[] = HOOKS_OFF ? [] : ['claude', 'qwen', 'codex', 'opencode', 'copilot', 'gemini'];
/** The hook event that ends a turn, per CLI (docs/hooks.md). */
const END_EVENT: Partial<Record<CliName, string>> = {
  claude: 'Stop',
  qwen: 'Stop',
  codex: 'Stop',
  opencode: 'session.idle',
  copilot: 'agentStop',
  gemini: 'AfterAgent',
};
/**
 * Where a reply comes from: the end hook's payload where it holds the reply (copilot's names only its
 * transcript; gemini's `prompt_response` is not the reply, and jaggers reads no gemini transcript).
 */
const replyFrom = (cli: CliName): string =>
  HOOKED.includes(cli) && cli !== 'copilot' && cli !== 'gemini' ? 'hook' : cli === 'claude' || cli === 'qwen' || cli === 'copilot' ? 'transcript' : 'screen';

/** The first handoff's result per CLI: its reply is handed on in the chain, its prompt must come back after a resume. */
const firstHandoff = new Map<CliName, HandoffResult>();

const STEP_MS = 120_000;

/** Every `state` event of the first supervisor (until the first restart), with when it reached this process. */
const stateEvents: { e: StreamEvent; receivedAt: number }[] = [];
const stateWaiters = new Set<() => void>();
/** Resolves once a state event satisfies `ok` (failing after `ms` with the events seen). */
const stateEvent = (ok: (e: StreamEvent) => boolean, what: string, ms = 20_000): Promise<StreamEvent> =>
  new Promise((resolve, reject) => {
    const check = (): boolean => {
      const hit = stateEvents.find((x) => ok(x.e));
      if (!hit) return false;
      stateWaiters.delete(w);
      clearTimeout(timer);
      resolve(hit.e);
      return true;
    };
    const w = () => void check();
    const timer = setTimeout(() => {
      stateWaiters.delete(w);
      reject(new Error(`no state event ${what} within ${ms} ms; got ${JSON.stringify(stateEvents.map((x) => x.e.data))}`));
    }, ms);
    stateWaiters.add(w);
    check();
  });

/** Each CLI's hook latency (docs/hooks.md): from the bridge's start to the supervisor applying it, and to the event on /v1/events. */
function printHookLatency(clis: readonly CliName[]): void {
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!.toFixed(1);
  for (const cli of clis) {
    const xs = stateEvents.filter(({ e }) => e.data.agent === cli && typeof e.data.hookLagMs === 'number');
    if (!xs.length) continue;
    const applied = xs.map(({ e }) => e.data.hookLagMs as number);
    // The bridge started at the change's time less its lag (`since` is to the ms).
    const toEvent = xs.map(({ e, receivedAt }) => receivedAt - (Date.parse(e.data.since as string) - (e.data.hookLagMs as number)));
    const rules = [...new Set(xs.map(({ e }) => String(e.data.rule)))].join(', ');
    console.log(
      `hook latency ${cli} ${CLIS[cli].version}: ${xs.length} state events decided by a hook (${rules}); bridge start -> supervisor applied it ` +
        `p50 ${pct(applied, 50)} / max ${pct(applied, 100)} ms; -> the event on /v1/events p50 ${pct(toEvent, 50)} / max ${pct(toEvent, 100)} ms`,
    );
  }
}

/** jaggers' MCP tools; the name each CLI gives them in its requests is recorded (docs/mcp.md). */
const MCP_TOOLS = TOOLS.map((t) => t.name);
const MCP_NAMES = new Map<CliName, string[]>();

describe.skipIf(team.length === 0)(`jaggers drives the real CLIs (${SIGNALS})`, () => {
  let t: Team;

  /** How each agent's wait for its first idle ended (every CLI boots before any is handed work). */
  const firstIdle = new Map<CliName, Promise<AgentStatusRow>>();

  beforeAll(async () => {
    t = await createTeam(team);
    const up = await t.jg(['up']);
    expect(up.code, up.stderr).toBe(0);
    // Ends when the first restart kills this supervisor.
    void api(t.rig)
      .events('/v1/events?types=state', (e) => {
        stateEvents.push({ e, receivedAt: Date.now() });
        for (const w of [...stateWaiters]) w();
      })
      .catch(() => undefined);
    for (const cli of team) {
      const idle = t.waitForStatus(cli, (s) => s.state === 'idle', { timeoutMs: 90_000, what: 'idle after up' });
      idle.catch(() => undefined); // reported by the agent's own test
      firstIdle.set(cli, idle);
    }
    await Promise.allSettled(firstIdle.values());
  }, STEP_MS);

  afterAll(async () => {
    if (MCP_NAMES.size) console.log(`MCP tool names: ${JSON.stringify(Object.fromEntries(MCP_NAMES))}`);
    printHookLatency(team);
    await t?.dispose();
  });

  const { handoff, expectReply, requestWith, sessionText } = teamChecks(() => t);

  for (const cli of CLI_NAMES) {
    describe.skipIf(!inTeam(cli))(title(cli), () => {
      it(
        'up: the agent reaches idle',
        async () => {
          const row = await firstIdle.get(cli)!;
          expect(row).toMatchObject({ agent: cli, state: 'idle', from: 'supervisor' });
          const why = await t.jg(['why', cli]);
          expect(why.stdout).toContain(`${cli} is idle`);
        },
        STEP_MS,
      );

      it(
        'handoff: delivered, busy then done, the reply captured and written as an artifact',
        async () => {
          const secret = secretOf(cli);
          const res = await handoff(cli, ['--message', secret]);
          expect(res.delivery.kind).toBe('delivered');
          expect(res.states, `states seen: ${res.states.join(' -> ')}`).toContain('busy');
          expect(res.states.at(-1)).toBe('done');
          expect(res.states.indexOf('busy')).toBeLessThan(res.states.lastIndexOf('done'));
          // The handover file holds the message under its front matter; the CLI got the pointer to it.
          const handover = parseArtifact(readFileSync(res.artifact, 'utf8'));
          expect(handover.body.trim()).toBe(secret);
          expect(handover.meta).toMatchObject({ turn: 1, target_agent: cli });
          requestWith(cli, res.pointer);

          expect(res.reply, 'a reply').not.toBeNull();
          const reply = res.reply!;
          await expectReply(cli, res, `answer: ${secret}`);
          expect(reply.from).toBe(replyFrom(cli));
          // What decided the turn's end: the CLI's own Stop hook where it has one.
          const decided = await t.jgJson<{ rule: string; source: string }>(['why', cli, '--json']);
          if (HOOKED.includes(cli)) {
            expect(decided, 'why').toMatchObject({ source: 'hook', rule: `hook ${END_EVENT[cli]}` });
            // Its state event on /v1/events says how long the hook took to be applied (printed at the end).
            const done = await stateEvent((e) => e.data.agent === cli && e.data.rule === `hook ${END_EVENT[cli]}`, `of ${cli} decided by its end hook`);
            expect(done.data.hookLagMs, JSON.stringify(done.data)).toSatisfy((ms: unknown) => typeof ms === 'number' && ms >= 0 && ms < 10_000);
          } else expect(decided.source).not.toBe('hook');
          expect(existsSync(reply.artifact)).toBe(true);
          const artifact = parseArtifact(readFileSync(reply.artifact, 'utf8'));
          expect(artifact.meta).toMatchObject({ task: res.task, turn: 2, source_agent: cli, target_agent: 'user', reply_to: path.basename(res.artifact) });
          expect(artifact.body.trim()).toBe(reply.text.trim());
          firstHandoff.set(cli, res);
        },
        STEP_MS,
      );

      // jaggers registers no MCP server with gemini (docs/mcp.md).
      it.skipIf(cli === 'gemini')(`${cli} is offered jaggers' MCP tools: the request for the handoff's turn names all eleven`, () => {
        const res = firstHandoff.get(cli);
        expect(res, 'the handoff test ran first').toBeDefined();
        const req = requestWith(cli, res!.pointer);
        const wanted = MCP_TOOLS.map((tool) => mcpToolName(cli, tool));
        const searcher = req.toolNames.find((n) => n === 'tool_search' || n === 'ToolSearch');
        if (searcher) {
          // qwen 0.15 and claude 2.1.330 defer MCP tools behind a tool-search tool (`tool_search`,
          // `ToolSearch`): the request names them in its text instead of declaring them.
          const text = JSON.stringify(req.body);
          expect(wanted.filter((n) => !text.includes(n))).toEqual([]);
        } else {
          expect(
            wanted.filter((n) => !req.toolNames.includes(n)),
            `${cli} declared ${JSON.stringify(req.toolNames)}`,
          ).toEqual([]);
        }
        MCP_NAMES.set(cli, wanted);
      });

      it.skipIf(HOOKS_OFF || (cli !== 'claude' && cli !== 'opencode' && cli !== 'copilot'))(
        hooksOnOnly(`${cli} calls a jaggers tool through the MCP server jaggers registered, with no approval asked, and gets its answer`),
        async () => {
          const res = await handoff(cli, ['--message', 'Please call mcp__jaggers__list_agents and say what it returns.']);
          await expectReply(cli, res, 'stub: the command ran.');
          const after = t.turnsOf(cli).filter((r) => r.hasToolResult && r.at >= t.turnsOf(cli).find((q) => q.lastUserText === res.pointer)!.at);
          expect(after.length, 'a request carrying the tool result').toBeGreaterThanOrEqual(1);
          const body = JSON.stringify(after[0]!.body);
          // The tool's answer, as jaggers' server gave it: the agents, and this one is "you" (copilot
          // passes the result on without its indentation).
          expect(body).toMatch(new RegExp(`\\\\"agent\\\\": ?\\\\"${cli}\\\\"`));
          expect(body).toMatch(/\\"you\\": ?true/);
        },
        STEP_MS,
      );

      it(`the reply artifact holds only ${cli}'s answer: no reply marker, hint line, rule or turn summary`, () => {
        const reply = firstHandoff.get(cli)?.reply;
        expect(reply, 'the handoff step captured a reply').toBeTruthy();
        expect(reply!.text.trim()).toBe(`answer: ${secretOf(cli)}`);
      });

      it(
        'a reply of several paragraphs arrives as those paragraphs, line for line',
        async () => {
          const res = await handoff(cli, ['--message', 'Answer in three paragraphs.']);
          const paragraphs = res
            .reply!.text.split('\n')
            .map((l) => l.trim())
            .filter(Boolean);
          // Markdown renderers may drop the backticks around `code`; everything else must be there.
          expect(
            paragraphs.map((l) => l.replace(/`/g, '')),
            `${cli}'s reply ${JSON.stringify(res.reply)}`,
          ).toEqual(MULTI_LINE_REPLY.split('\n\n').map((l) => l.replace(/`/g, '')));
        },
        STEP_MS,
      );

      it(
        'turns that finish in under a second end on their evidence: five in a row, each reply captured',
        async () => {
          for (let i = 1; i <= 5; i++) {
            const started = Date.now();
            const res = await handoff(cli, ['--message', `answer at once, number ${i}`]);
            await expectReply(cli, res, `answer: answer at once, number ${i}`);
            expect(res.confirmedBy, `${cli} turn ${i}`).toMatch(replyFrom(cli) === 'hook' ? /^hook$/ : /^(transcript|screen)$/);
            // The stub answered at once: what is left is the CLI's own time and jaggers' (not a timeout).
            expect(Date.now() - started, `${cli} turn ${i} took`).toBeLessThan(30_000);
          }
          if (cli === 'codex') {
            // codex sums a turn under a second up as `Worked for <1s`: the profile's turn-summary rule reads it.
            const why = await t.jgJson<{ state: string; rule: string }>(['why', cli, '--json']);
            expect(why.state).toBe('done');
          }
        },
        3 * STEP_MS,
      );

      it.skipIf(HOOKS_OFF)(
        hooksOnOnly('a jaggers prompt left in the input box and never submitted (a supervisor killed before its Enter) is cleared, never sent'),
        async () => {
          const pane = await t.pane(cli);
          const stale = 'Read .jaggers/handover/turn_99_stale.md and do what it asks. [jg:5a1e5a1e5a1e5a1e]';
          await t.rig.tmux(['send-keys', '-t', pane.paneId, '-l', stale]);
          await t.rig.waitForScreen(pane.paneId, /\[jg:5a1e5a1e5a1e5a1e\]/);
          const res = await handoff(cli, ['--message', `after a stray prompt, ${cli} answers`]);
          await expectReply(cli, res, `answer: after a stray prompt, ${cli} answers`);
          // The CLI's requests carry the new pointer alone: the stray one was emptied out of the box (clearKeys).
          expect(requestWith(cli, res.pointer).lastUserText).toBe(res.pointer);
          expect(t.turnsOf(cli).filter((r) => JSON.stringify(r.body).includes('5a1e5a1e5a1e5a1e'))).toEqual([]);
        },
        STEP_MS,
      );

      it(
        'a tool call that needs approval: jaggers reports waiting_input, then done once approved',
        async () => {
          const res = await handoff(cli, ['--message', 'Run the command that needs-approval', '--no-wait']);
          expect(res.delivery.kind).toBe('delivered');
          const waiting = await t.waitForStatus(cli, (s) => s.state === 'waiting_input', { what: 'waiting_input' });
          // The menu on screen, or claude's own state file saying `waiting` (it may come first), or the
          // CLI's permission hook (claude and codex PermissionRequest, qwen its Notification, opencode
          // permission.asked, copilot its notification).
          expect(waiting.rule).toMatch(
            HOOKED.includes(cli)
              ? /^(approval-menu$|state-file |hook (PermissionRequest|Notification|permission\.asked|notification)$)/
              : /^(approval-menu$|state-file )/,
          );
          const why = await t.jg(['why', cli]);
          expect(why.stdout).toContain(`${cli} is waiting_input`);
          const pane = await t.pane(cli);
          const menu = await t.rig.waitForScreen(pane.paneId, new RegExp(approvalPattern(cli), 'mu'));
          expect(menu).toContain(`touch approved-${cli}.txt`);

          // Approve with `jaggers answer`: the first choice is the approval in all four menus.
          const answered = await t.jg(['answer', cli, '1', '--json']);
          expect(answered.code, answered.stderr).toBe(0);
          expect((JSON.parse(answered.stdout) as { chose: { number: number } }).chose.number).toBe(1);
          await t.waitForStatus(cli, (s) => s.state === 'done' && s.turns > waiting.turns, { what: 'done after the approval' });
          await t.rig.waitForScreen(pane.paneId, /stub: the command ran/);
          expect(existsSync(path.join(t.cwds[cli], `approved-${cli}.txt`))).toBe(true);
          expect(t.turnsOf(cli).some((r) => r.hasToolResult)).toBe(true);
        },
        STEP_MS,
      );

      // With hooks off the resume below still checks the pin: found before the kill, resumed, unmoved.
      it.skipIf(HOOKS_OFF)(
        hooksOnOnly('the session is pinned, and the CLI keeps it under that id'),
        async () => {
          const pins = await t.jgJson<PinRow[]>(['sessions', '--json']);
          const pin = pins.find((p) => p.agent === cli);
          expect(pin?.sessionId, `${cli}'s pin in ${JSON.stringify(pins)}`).toBeTruthy();
          const id = pin!.sessionId!;
          const home = t.homes[cli]!;
          if (cli === 'codex') {
            // Not given at start: discovered from its rollout file at the end of the first waiting handoff.
            expect(codexSessionIds(home)).toEqual([id]);
          } else if (cli === 'opencode') {
            // Not given at start: discovered from `opencode session list` at the end of the first handoff.
            expect(opencodeSessions(cliBinary(cli), t.envs[cli]!, t.cwds[cli]).map((s) => s.id)).toEqual([id]);
          } else {
            // Pre-generated and passed with --session-id: the first handover file names it as the target.
            expect(parseArtifact(readFileSync(firstHandoff.get(cli)!.artifact, 'utf8')).meta.target_session).toBe(id);
          }
          const file = sessionFile(cli, home, t.cwds[cli], id);
          expect(file, `${cli}'s own session file for ${id}`).toBeDefined();
          if (cli === 'gemini') expect(firstJsonLine(file!).sessionId).toBe(id);
          expect(sessionText(cli, id)).toContain(firstHandoff.get(cli)!.pointer);
        },
        STEP_MS,
      );
    });
  }

  describe('after tmux kill-server, up resumes every pinned conversation', () => {
    let pinsBefore: PinRow[] = [];

    beforeAll(async () => {
      pinsBefore = await t.jgJson<PinRow[]>(['sessions', '--json']);
      await t.killServer();
      const up = await t.jg(['up']);
      expect(up.code, up.stderr).toBe(0);
    }, STEP_MS);

    for (const cli of CLI_NAMES) {
      it.skipIf(!inTeam(cli))(
        `${cli}: resumed with its pinned id, the earlier turns in the next request`,
        async () => {
          const id = pinsBefore.find((p) => p.agent === cli)?.sessionId;
          expect(id, `${cli} was pinned before the kill`).toBeTruthy();
          await t.waitForStatus(cli, (s) => s.state === 'idle', { timeoutMs: 90_000, what: 'idle after the resume' });
          // Started with the profile's resume arguments for the pinned id, and the pin did not move.
          const pane = await t.pane(cli);
          expect(argvOf(pane.panePid).join(' '), `${cli}'s command line`).toContain(` ${profileResumeArgs(cli, id!).join(' ')}`);
          const pins = await t.jgJson<PinRow[]>(['sessions', '--json']);
          expect(pins.find((p) => p.agent === cli)).toMatchObject({ sessionId: id, previous: [] });

          const res = await handoff(cli, ['--message', `after the restart, ${cli} continues`]);
          await expectReply(cli, res, `answer: after the restart, ${cli} continues`);
          // The stub got the conversation's earlier turns with the new prompt.
          const req = requestWith(cli, res.pointer);
          expect(req.userTexts).toEqual(expect.arrayContaining([firstHandoff.get(cli)!.pointer, res.pointer]));
          expect(req.assistantTexts.join('\n')).toContain(`answer: ${secretOf(cli)}`);
          // And the CLI wrote the new turn into the same session file.
          expect(sessionText(cli, id!)).toContain(res.pointer);
        },
        STEP_MS,
      );
    }
  });

  describe.skipIf(HOOKS_OFF)(hooksOnOnly('a reply handed on from one CLI to another'), () => {
    for (const [i, from] of team.entries()) {
      const to = team[(i + 1) % team.length]!;
      it.skipIf(team.length < 2)(
        `${from}'s reply artifact handed to ${to} with --file --from`,
        async () => {
          const first = firstHandoff.get(from);
          expect(first?.reply, `${from}'s first handoff has a reply`).toBeTruthy();
          const replyFile = path.relative(t.rig.root, first!.reply!.artifact);
          const res = await handoff(to, ['--file', replyFile, '--from', from, '--task', first!.task]);
          expect(res.delivery.kind).toBe('delivered');
          // A new handover file: the reply's body under a new header (the old header stripped).
          const given = parseArtifact(readFileSync(first!.reply!.artifact, 'utf8'));
          const handover = parseArtifact(readFileSync(res.artifact, 'utf8'));
          expect(res.artifact).not.toBe(first!.reply!.artifact);
          expect(handover.body).toBe(given.body);
          expect(handover.meta).toMatchObject({ task: first!.task, turn: 3, source_agent: from, target_agent: to });
          await expectReply(to, res, secretOf(from));
          const reply = parseArtifact(readFileSync(res.reply!.artifact, 'utf8'));
          expect(reply.meta).toMatchObject({ turn: 4, source_agent: to, target_agent: from, reply_to: path.basename(res.artifact) });
        },
        STEP_MS,
      );
    }
  });

  // Right after a resume is when CLIs drop an Enter (gemini often does) and an old turn summary is on
  // screen: one more restart, followed by a handoff to every agent at once (there were two; each costs a
  // run a minute and six CLI starts).
  describe.skipIf(HOOKS_OFF)(hooksOnOnly('one more restart, with a handoff to every agent at once'), () => {
    it(
      'every agent answers in its pinned conversation',
      async () => {
        const pinsBefore = await t.jgJson<PinRow[]>(['sessions', '--json']);
        await t.killServer();
        const up = await t.jg(['up']);
        expect(up.code, up.stderr).toBe(0);
        await Promise.all(
          team.map(async (cli) => {
            await t.waitForStatus(cli, (s) => s.state === 'idle', { timeoutMs: 90_000, what: 'idle after the second restart' });
            const res = await handoff(cli, ['--message', `round 1 for ${cli}`]);
            expect(res.delivery.kind).toBe('delivered');
            await expectReply(cli, res, `answer: round 1 for ${cli}`);
            // The request carried the conversation so far: the first handoff's prompt is in it.
            const req = requestWith(cli, res.pointer);
            expect(req.userTexts, `${cli}'s request ${req.path} (assistant texts: ${JSON.stringify(req.assistantTexts)})`).toContain(
              firstHandoff.get(cli)!.pointer,
            );
          }),
        );
        const pins = await t.jgJson<PinRow[]>(['sessions', '--json']);
        expect(pins.map((p) => [p.agent, p.sessionId])).toEqual(pinsBefore.map((p) => [p.agent, p.sessionId]));
      },
      3 * STEP_MS,
    );
  });
});
