// Context use and the CLI's own compaction on the real CLIs (docs/usage.md, Context), offline against the
// stub model server. One team of one agent per CLI whose profile has a `compactCommand` (copilot has none:
// not here), with `"autoCompact": true`. The stub reports for every answer a prompt of as many tokens as
// the conversation it was sent holds (its characters / 4, system prompt and tool schemas left out), so the
// figures follow what the CLI really sends:
//   1. a job whose answer is long (FILLER): the next prompt carries it;
//   2. jaggers.json gets a window for the stub's model that the second prompt fills past `compactAt`;
//   3. a second job, and a third queued behind it before it ends: the second turn's end sends a `context`
//      event and queues a `compact` item, typed after that turn's end and before the third job, which
//      goes in only once the compaction is over;
//   4. the CLI sends its own summarise request (test/e2e/stub-compact.ts: the stub answers it with a
//      summary in the shape it asks for, as the service would);
//   5. the third job's prompt no longer carries the long answer but the summary, the pin is the same and
//      the CLI's own record of that session holds the third prompt, the agent is done again, and `status`
//      shows a smaller share of the window than after step 3.
// Needs `npm run build` (window 0 runs the built supervisor) and scripts/install-real-clis.sh; a CLI that
// is not installed is skipped (JAGGERS_REQUIRE_REAL_CLIS=1 makes it fail instead).

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobView, StreamEvent } from '../../src/api/types.js';
import type { AgentStatusRow } from '../../src/commands/status.js';
import { builtinProfilesDir } from '../../src/package-root.js';
import { api, collectEvents } from '../helpers/api.js';
import { CLI_NAMES, CLIS, isChosen, isCliInstalled, type CliName } from './clis.js';
import { conversationOf as conversation, promptTokensOf as promptTokens, STUB_SUMMARY } from './stub-compact.js';
import { geminiSlug, sessionFile } from './session-files.js';
import { defaultScript } from './stub-script.js';
import { teamChecks } from './team-checks.js';
import { cliOf, createTeam, SIGNALS, type Team } from './team.js';

const required = process.env.JAGGERS_REQUIRE_REAL_CLIS === '1';
const STEP_MS = 240_000;

/** Each shipped profile's compaction command (none: the CLI has no compaction jaggers can run). */
const compactCommandOf = (cli: CliName): string | undefined =>
  (JSON.parse(readFileSync(path.join(builtinProfilesDir, `${cli}.json`), 'utf8')) as { compactCommand?: string }).compactCommand;

/** The long answer of the first turn: about 3,300 tokens by the stub's count. */
const FILLER = Array.from({ length: 200 }, (_, i) => `filler line ${String(i).padStart(3, '0')} of the long answer that fills the context window.`).join('\n');
const FILLER_TOKENS = Math.ceil(FILLER.length / 4);

type Json = Record<string, unknown>;

for (const cli of CLI_NAMES) {
  const command = compactCommandOf(cli);
  if (!command || !isChosen(cli)) continue;
  const installed = required || isCliInstalled(cli);
  const title = `${cli} ${CLIS[cli].version}: ${command.trim()} past compactAt (${SIGNALS})${installed ? '' : ` — skipped: not installed (scripts/install-real-clis.sh ${cli})`}`;

  describe.skipIf(!installed)(title, () => {
    let t: Team;
    let events: ReturnType<typeof collectEvents>;
    /** The tokens the stub reported for each request it answered, by its seq. */
    const reported = new Map<number, number>();
    const file = () => path.join(t.rig.root, 'jaggers.json');
    const project = () => JSON.parse(readFileSync(file(), 'utf8')) as Json & { agents: Json[] };

    beforeAll(async () => {
      t = await createTeam([cli]);
      const p = project();
      p.agents[0]!.autoCompact = true;
      writeFileSync(file(), `${JSON.stringify(p, null, 2)}\n`);
      const cwd = t.cwds[cli];
      t.stub.setScript((req) => {
        const tokens = promptTokens(req);
        reported.set(req.seq, tokens);
        const usage = { input: tokens, output: 12 };
        const base = defaultScript(req, cwd);
        if (base.kind !== 'text') return { ...base, usage };
        return { kind: 'text', text: base.text.includes('long answer') ? `${base.text}\n${FILLER}` : base.text, usage };
      });
      const up = await t.jg(['up']);
      expect(up.code, up.stderr).toBe(0);
      await t.waitForStatus(cli, (s) => s.state === 'idle', { timeoutMs: 90_000, what: 'idle after up' });
      events = collectEvents(api(t.rig), '/v1/events?types=job,state,context');
    }, STEP_MS);

    afterAll(async () => {
      await events?.stop();
      await t?.dispose();
    });

    /** gemini's homes: its own `~/.gemini`, and with hooks on the pane's overlay, where its `projects.json` lands (as in worktrees-real). */
    const geminiDirs = (): string[] => {
      const hooks = path.join(t.rig.root, '.jaggers', 'hooks');
      const overlays = existsSync(hooks) ? readdirSync(hooks).map((id) => path.join(hooks, id, 'home', '.gemini')) : [];
      return [path.join(t.homes.gemini!, '.gemini'), ...overlays];
    };
    const { sessionText } = teamChecks(() => t, {
      sessionFile: (c, id) => sessionFile(c, t.homes[c]!, t.cwds[c], id, c === 'gemini' ? geminiSlug(geminiDirs(), t.cwds[c]) : undefined),
    });
    const jobs = () => t.jgJson<JobView[]>(['jobs', '--json']);
    const status = () => t.jgJson<AgentStatusRow>(['status', cli, '--json']);
    const assign = async (text: string): Promise<string> => {
      const a = await t.jg(['assign', cli, '-m', text]);
      expect(a.code, a.stderr).toBe(0);
      return a.stdout.trim();
    };
    const wait = async (id: string): Promise<JobView> => {
      const w = await t.jg(['wait', id, '--timeout', '120']);
      if (w.code !== 0) expect.fail(`jaggers wait ${id} exited ${w.code}: ${w.stdout}${w.stderr}\n${await explain()}`);
      return (await jobs()).find((j) => j.id === id)!;
    };
    const at = (j: JobView, state: string): number => Date.parse(j.history.find((h) => h.state === state)?.at ?? 'x');

    /** What jaggers and the pane showed and what the stub got, for failure messages. */
    const explain = async (): Promise<string> => {
      const why = (await t.jg(['why', cli])).stdout;
      const screen = (await t.jg(['capture', cli])).stdout;
      const sent = t.stub.requests
        .filter((r) => cliOf(r) === cli && r.method === 'POST')
        .map((r) => `#${r.seq} ${r.purpose} ${r.path} ${JSON.stringify(r.lastUserText?.slice(0, 160))} (${reported.get(r.seq) ?? '-'} tokens)`);
      const seen = events.events.map((e: StreamEvent) => `${e.at.slice(11)} ${e.type} ${JSON.stringify(e.data).slice(0, 300)}`);
      return `${why}\nrequests the stub got:\n${sent.join('\n')}\nevents:\n${seen.join('\n')}\nscreen:\n${screen}`;
    };

    it(
      'a context event past compactAt, the compaction between turns, the summarise request, the same session, a smaller share after',
      async () => {
        try {
          // 1. The long answer.
          const first = await wait(await assign('a long answer, please, at once'));
          expect(first.state).toBe('done');
          const firstTurn = t.turnsOf(cli).at(-1)!;
          const model = (firstTurn.body as Json).model ?? /models\/([^/:]+)/.exec(firstTurn.path)?.[1];
          expect(typeof model, `the model ${cli} asked the stub for`).toBe('string');

          // 2. A window that the second prompt (the first one, the long answer and a line more) fills to about 92%.
          const window = Math.ceil((reported.get(firstTurn.seq)! + FILLER_TOKENS + 60) / 0.92);
          const p = project();
          p.contextWindows = { [model as string]: window };
          writeFileSync(file(), `${JSON.stringify(p, null, 2)}\n`);
          const before = await status();

          // 3. The second job, and the third queued behind it while it runs.
          const secondId = await assign('the second job, at once');
          const thirdId = await assign('the third job, at once');
          const second = await wait(secondId);
          expect(second.state).toBe('done');
          const secondTurn = t.turnsOf(cli).find((r) => r.lastUserText?.includes(path.basename(second.artifact!)));
          expect(secondTurn, "the second job's request").toBeDefined();
          expect(conversation(secondTurn!), 'the second prompt carries the long answer').toContain('filler line 199');

          const ctx = await events.waitFor((e) => e.type === 'context' && e.data.agent === cli, 'a context event', 30_000);
          console.log(`${cli} ${CLIS[cli].version}: ${String(ctx.data.text)}`);
          expect(ctx.data).toMatchObject({ agent: cli, model, window, compactAt: 85 });
          expect(ctx.data.percent as number).toBeGreaterThanOrEqual(85);
          expect(ctx.data.compact, 'the compaction queued').toMatch(/^j-/);
          const afterSecond = await status();
          expect(afterSecond.context).toMatchObject({ model, window });
          expect(afterSecond.context!.percent!).toBeGreaterThanOrEqual(85);

          // The compaction: typed after the second turn's end, before the third job.
          const compactId = ctx.data.compact as string;
          const third = await wait(thirdId);
          expect(third.state).toBe('done');
          const all = await jobs();
          const compact = all.find((j) => j.id === compactId)!;
          expect(compact, `${compactId} in jobs --json`).toMatchObject({ work: 'compact', state: 'done', agent: cli });
          expect(readFileSync(path.resolve(t.rig.root, compact.prompt), 'utf8')).toBe(command);
          expect(at(compact, 'starting'), 'the compaction starts after the second turn ended').toBeGreaterThanOrEqual(at(second, 'done'));
          expect(at(third, 'starting'), 'the third job starts after the compaction was typed').toBeGreaterThanOrEqual(at(compact, 'done'));
          expect(
            all.filter((j) => j.work === 'compact'),
            'one compaction',
          ).toHaveLength(1);

          // 4. The CLI's own summarise request, after the second turn's last answer and before the third job's prompt.
          const thirdTurn = t.turnsOf(cli).find((r) => r.lastUserText?.includes(path.basename(third.artifact!)));
          expect(thirdTurn, "the third job's request").toBeDefined();
          const between = t.stub.requests.filter((r) => cliOf(r) === cli && r.seq > secondTurn!.seq && r.seq < thirdTurn!.seq);
          const summarise = between.filter((r) => r.purpose === 'compact');
          console.log(
            `${cli}: between the second and third prompts the stub got: ${JSON.stringify(between.map((r) => ({ seq: r.seq, purpose: r.purpose, path: r.path, asked: r.lastUserText?.slice(0, 100) })))}`,
          );
          expect(summarise.length, `${cli}'s summarise request`).toBeGreaterThanOrEqual(1);
          expect(conversation(summarise[0]!), 'the summarise request carries the conversation').toContain('filler line 199');
          expect(summarise[0]!.at, 'sent after the compaction was typed').toBeGreaterThanOrEqual(at(compact, 'starting'));
          expect(summarise[0]!.at, "sent after the second turn's answer").toBeGreaterThan(secondTurn!.endedAt!);

          // 5. The third prompt: the summary instead of the long answer.
          const carried = conversation(thirdTurn!);
          expect(carried, 'the third prompt no longer carries the long answer').not.toContain('filler line 199');
          expect(carried, "the third prompt carries the stub's summary").toContain(STUB_SUMMARY);
          const after = await status();
          expect(after.sessionId, 'the same session').toBe(before.sessionId);
          // The CLI's own record of the pinned conversation holds the third prompt: it went on in the same session.
          expect(sessionText(cli, after.sessionId!), `${cli}'s record of ${after.sessionId}`).toContain(`[jg:${third.nonce}]`);
          console.log(`${cli}: ${compact.reason}; context ${afterSecond.context!.percent}% after the second turn, ${after.context!.percent}% after the third`);
          expect(['idle', 'done']).toContain(after.state);
          expect(after.context).toMatchObject({ model, window });
          expect(after.context!.percent!, 'a smaller share of the window after the compaction').toBeLessThan(afterSecond.context!.percent!);
        } catch (e) {
          (e as Error).message += `\n${await explain()}`;
          throw e;
        }
      },
      STEP_MS,
    );
  });
}
