// A workflow task on the real CLIs, offline against the stub model server: `jaggers run collaborative`
// over two CLIs (a proposes, b critiques, a synthesizes), each in the task's own window with its own
// pinned conversation. What the stub received is the proof that turn 3 went back to turn 1's
// conversation: a's request for turn 3 carries turn 1's pointer and turn 1's reply in its history,
// while b's request for turn 2 is a conversation of its own that never saw turn 1's pointer.
// Two pairs run at the same time in one project and one tmux server, so that every CLI takes part;
// codex and opencode are never a-agents (their sessions cannot be pinned at start: the id is read after
// the first turn); a third pair is copilot with opencode.
// Needs `npm run build` (window 0 runs the built supervisor) and scripts/install-real-clis.sh; a CLI
// that is not installed is skipped (JAGGERS_REQUIRE_REAL_CLIS=1 makes it fail instead).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../../src/api/types.js';
import { parseArtifact } from '../../src/handover/artifact.js';
import { CLIS, isChosen, isCliInstalled, type CliName } from './clis.js';
import { firstBodyLine } from './stub-script.js';
import { createTeam, type Team, SIGNALS } from './team.js';

const required = process.env.JAGGERS_REQUIRE_REAL_CLIS === '1';
/** The a-agents first; codex last, so it is only ever a b-agent. */
const ORDER: CliName[] = ['claude', 'gemini', 'qwen', 'codex'];
const team = ORDER.filter((cli) => (required || isCliInstalled(cli)) && isChosen(cli));

/** [a, b] pairs over the team, every CLI in one: claude with qwen, gemini with codex when all four are there. */
function pairsOf(clis: CliName[]): [CliName, CliName][] {
  if (clis.length < 2) return [];
  const [first, ...rest] = clis;
  // claude's partner is the third of the order when there are four, so that codex gets an a-agent of its own.
  const partner = rest.length === 3 ? rest[1]! : rest[0]!;
  const others = rest.filter((c) => c !== partner);
  const pairs: [CliName, CliName][] = [[first!, partner]];
  if (others.length === 2) pairs.push([others[0]!, others[1]!]);
  else if (others.length === 1) pairs.push([first!, others[0]!]);
  return pairs;
}
const has = (cli: CliName) => (required || isCliInstalled(cli)) && isChosen(cli);
/** The third pair: copilot proposes (its session is pinned at start, as claude's), opencode critiques. */
function thirdPair(): [CliName, CliName][] {
  if (has('copilot') && has('opencode')) return [['copilot', 'opencode']];
  if (has('opencode') && team[0]) return [[team[0], 'opencode']];
  if (has('copilot') && team[0]) return [['copilot', team[0]]];
  return [];
}
const pairs: [CliName, CliName][] = [...pairsOf(team), ...thirdPair()];

/** Foreground `run` of one task; past this it is cancelled and the test fails with what each side showed. */
const RUN_MS = 150_000;

describe.skipIf(pairs.length === 0)(`a collaborative workflow on the real CLIs (${SIGNALS})`, () => {
  let t: Team;

  beforeAll(async () => {
    // No `up`: `run` opens the task's own windows (`up --task`), and starts the supervisor.
    t = await createTeam([...new Set(pairs.flat())]);
  });

  afterAll(async () => {
    await t?.dispose();
  });

  const read = (file: string) => parseArtifact(readFileSync(path.resolve(t.rig.root, file), 'utf8'));

  /** The task `run` started with this text, as `show --json` gives it (null before `run` recorded it). */
  const taskOf = async (text: string): Promise<TaskView | null> => {
    const list = await t.jgJson<TaskView[]>(['tasks', '--json']).catch(() => []);
    const found = list.find((x) => x.text === text);
    return found ? t.jgJson<TaskView>(['show', found.id, '--json']) : null;
  };

  /** The task, each agent's screen, the prompts the stub got and the supervisor's last log lines: for failure messages. */
  const explain = async (text: string, clis: CliName[]): Promise<string> => {
    const task = await taskOf(text);
    const screens = await Promise.all(
      clis.map(async (cli) => {
        const p = await t.pane(cli).catch(() => undefined);
        const screen = p ? await t.rig.tmux(['capture-pane', '-p', '-t', p.paneId]).catch((e: unknown) => String(e)) : '(no pane)';
        return `--- ${cli}: prompts the stub got: ${JSON.stringify(t.turnsOf(cli).map((q) => q.lastUserText))}\nscreen:\n${screen.trimEnd()}`;
      }),
    );
    const log = (await t.jg(['logs'])).stdout.trimEnd().split('\n').slice(-40).join('\n');
    return `the task: ${JSON.stringify(task, null, 1)}\n${screens.join('\n')}\nthe supervisor's log:\n${log}`;
  };

  /** `run collaborative --json` to its end, bounded by RUN_MS. */
  const runTask = async (text: string, a: CliName, b: CliName): Promise<TaskView> => {
    const running = t.jg(['run', 'collaborative', '--task', text, '--agents', `${a},${b}`, '--json']);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), RUN_MS)));
    const r = await Promise.race([running, late]).finally(() => clearTimeout(timer));
    if (r === 'late') {
      const why = await explain(text, [a, b]);
      const task = await taskOf(text);
      if (task) await t.jg(['cancel', task.id]);
      await running;
      expect.fail(`jaggers run collaborative (${a}, ${b}) did not end within ${RUN_MS} ms\n${why}`);
    }
    if (r.code !== 0) expect.fail(`jaggers run collaborative (${a}, ${b}) exited ${r.code}: ${r.stderr}${r.stdout}\n${await explain(text, [a, b])}`);
    return JSON.parse(r.stdout) as TaskView;
  };

  for (const [a, b] of pairs) {
    it.concurrent(
      `${a} ${CLIS[a].version} proposes, ${b} ${CLIS[b].version} critiques, ${a} synthesizes in turn 1's conversation`,
      async () => {
        const text = `collaborate on a word counter (${a} and ${b})`;
        const ran = await runTask(text, a, b);
        try {
          expect(ran.status, ran.reason ?? '').toBe('done');
          const task = await t.jgJson<TaskView>(['show', ran.id, '--json']);
          expect(task).toMatchObject({ status: 'done', workflow: 'collaborative', roles: { a, b }, seq: 3 });
          expect(task.turns.map((x) => [x.seq, x.step, x.agent, x.state, x.attempts])).toEqual([
            [1, 'propose', a, 'done', 1],
            [2, 'critique', b, 'done', 1],
            [3, 'synthesize', a, 'done', 1],
          ]);
          const [t1, t2, t3] = task.turns as [TaskView['turns'][number], TaskView['turns'][number], TaskView['turns'][number]];

          // Turns 1 and 3 went to a's conversation of this task, turn 2 elsewhere.
          expect(t1.sessionId).toMatch(/^[0-9a-f-]{36}$/);
          expect(t3.sessionId).toBe(t1.sessionId);
          expect(t2.sessionId).not.toBe(t1.sessionId);
          expect(task.agents[a]?.sessionId).toBe(t1.sessionId);

          // Each turn's reply artifact holds the stub's scripted answer to that turn's handover file.
          const answerTo = (turn: typeof t1) => `answer: ${firstBodyLine(readFileSync(path.resolve(t.rig.root, turn.prompt!), 'utf8'))}`;
          expect(answerTo(t1)).toBe(`answer: Task (${task.id}, step 1 of 3: propose)`);
          for (const turn of [t1, t2, t3]) {
            const handover = read(turn.prompt!);
            expect(handover.meta).toMatchObject({ task: task.id, workflow: 'collaborative', target_agent: turn.agent });
            expect(handover.body).toContain(text);
            const reply = read(turn.reply!);
            expect(reply.body.trim(), `turn ${turn.seq}'s reply (${turn.agent})`).toBe(answerTo(turn));
            expect(reply.meta).toMatchObject({ task: task.id, source_agent: turn.agent, reply_to: path.basename(turn.prompt!) });
          }
          // The critique reads the proposal; the synthesis reads both.
          expect(read(t2.prompt!).body).toContain(t1.reply!);
          expect(read(t3.prompt!).body).toContain(t1.reply!);
          expect(read(t3.prompt!).body).toContain(t2.reply!);
          // The final artifact is turn 3's reply: the synthesis.
          expect(task.final).toBe(t3.reply);
          expect(ran.final).toBe(t3.reply);
          expect(read(task.final!).body.trim()).toBe(`answer: Task (${task.id}, step 3 of 3: synthesize)`);

          // What the stub got: each turn's pointer once, as the newest user text of its agent's request.
          const requestFor = (cli: CliName, turn: typeof t1) => {
            const sent = t.turnsOf(cli).filter((r) => r.lastUserText?.includes(path.basename(turn.prompt!)));
            expect(sent, `${cli} sent turn ${turn.seq}'s pointer once; it sent ${JSON.stringify(t.turnsOf(cli).map((r) => r.lastUserText))}`).toHaveLength(1);
            return sent[0]!;
          };
          const r1 = requestFor(a, t1);
          const r2 = requestFor(b, t2);
          const r3 = requestFor(a, t3);
          const pointer1 = r1.lastUserText!;
          // Turn 3's request is turn 1's conversation: turn 1's pointer and its reply come before turn 3's pointer.
          expect(r3.userTexts, `${a}'s request for turn 3 (assistant texts: ${JSON.stringify(r3.assistantTexts)})`).toEqual([pointer1, r3.lastUserText]);
          // (qwen's history also holds its own `Got it. Thanks for the context!` after the context it sends first.)
          expect(r3.assistantTexts.filter((x) => x.startsWith('answer: '))).toEqual([answerTo(t1)]);
          // Turn 2's request is b's own conversation: turn 1's pointer is no user message of it, turn 1's reply no answer in it.
          expect(r2.userTexts, `${b}'s request for turn 2`).toEqual([r2.lastUserText]);
          expect(r2.userTexts.some((u) => u.includes(path.basename(t1.prompt!)))).toBe(false);
          expect(r2.assistantTexts.filter((x) => x.startsWith('answer: '))).toEqual([]);
          // And turn 1 opened a's conversation: nothing before its pointer.
          expect(r1.userTexts).toEqual([pointer1]);
        } catch (e) {
          (e as Error).message += `\n${await explain(text, [a, b])}`;
          throw e;
        }
      },
      RUN_MS + 30_000,
    );
  }
});
