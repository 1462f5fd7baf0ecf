// jaggers' headless turns on the real CLIs, through the supervisor: the conversation's first turn
// headless (its TUI in the pane had taken none, so the resume arguments would find nothing), then a
// turn typed into the pane, which must be in that same conversation, then headless again. The pane's
// TUI is stopped before each headless turn and resumed after it (the real CLIs need that; see docs/handoffs-and-jobs.md).
// Needs `npm run build` and scripts/install-real-clis.sh; a CLI that is not installed is skipped.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandoffResult } from '../../src/api/types.js';
import type { PinRow } from '../../src/commands/sessions.js';
import { builtinProfilesDir } from '../../src/package-root.js';
import { CLI_NAMES, CLIS, isChosen, isCliInstalled, type CliName } from './clis.js';
import { createTeam, type Team, SIGNALS } from './team.js';

const required = process.env.JAGGERS_REQUIRE_REAL_CLIS === '1';
const team = CLI_NAMES.filter((cli) => (required || isCliInstalled(cli)) && isChosen(cli));
const STEP_MS = 180_000;

describe.skipIf(team.length === 0)(`jaggers: headless turns on the real CLIs (${SIGNALS})`, () => {
  let t: Team;
  beforeAll(async () => {
    t = await createTeam(team);
    const up = await t.jg(['up']);
    expect(up.code, up.stderr).toBe(0);
    await Promise.all(team.map((cli) => t.waitForStatus(cli, (s) => s.state === 'idle', { timeoutMs: 90_000, what: 'idle after up' })));
  }, STEP_MS);
  afterAll(async () => t?.dispose());

  const run = async (cli: CliName, args: string[]): Promise<HandoffResult> => {
    const r = await t.jg(['handoff', cli, ...args, '--timeout', '120', '--json']);
    if (r.code !== 0) {
      const screen = (await t.jg(['capture', cli])).stdout;
      expect.fail(
        `jaggers handoff ${cli} ${args.join(' ')} exited ${r.code}: ${r.stderr}\nprompts the stub got: ${JSON.stringify(t.turnsOf(cli).map((q) => q.lastUserText))}\nscreen:\n${screen}`,
      );
    }
    return JSON.parse(r.stdout) as HandoffResult;
  };

  /** The stub's one turn request whose newest user text is `pointer`. */
  const requestWith = (cli: CliName, pointer: string) => {
    const sent = t.turnsOf(cli).filter((r) => r.lastUserText === pointer);
    expect(sent, `${cli} sent ${JSON.stringify(pointer)} once; it sent ${JSON.stringify(t.turnsOf(cli).map((r) => r.lastUserText))}`).toHaveLength(1);
    return sent[0]!;
  };

  for (const cli of CLI_NAMES) {
    it.skipIf(!team.includes(cli))(
      `${cli} ${CLIS[cli].version}: a headless first turn, a pane turn in the same conversation, headless again`,
      async () => {
        const first = await run(cli, ['--headless', '--message', `headless first for ${cli}`]);
        expect(first.delivery.kind).toBe('headless');
        expect(first.reply?.text.trim()).toBe(`answer: headless first for ${cli}`);
        const pin = (await t.jgJson<PinRow[]>(['sessions', '--json'])).find((p) => p.agent === cli);
        expect(pin?.sessionId, `${cli} is pinned after its headless first turn`).toBeTruthy();

        // The pane came back resumed in that conversation (its command line carries the resume arguments).
        await t.waitForStatus(cli, (s) => s.state === 'idle', { timeoutMs: 90_000, what: 'idle after the headless turn' });
        const pane = await t.pane(cli);
        const argv = readFileSync(`/proc/${pane.panePid}/cmdline`, 'utf8').split('\0').join(' ');
        const resumeArgs = (
          JSON.parse(readFileSync(path.join(builtinProfilesDir, `${cli}.json`), 'utf8')) as { session: { resumeArgs: string[] } }
        ).session.resumeArgs.map((a) => a.replace('{sessionId}', pin!.sessionId!));
        expect(argv, `${cli}'s command line`).toContain(` ${resumeArgs.join(' ')}`);

        const inPane = await run(cli, ['--message', `then in the pane for ${cli}`]);
        expect(inPane.reply?.text).toContain(`answer: then in the pane for ${cli}`);
        const req = requestWith(cli, inPane.pointer);
        expect(req.userTexts, `${cli}'s pane turn carried the headless one`).toContain(first.pointer);
        expect(req.assistantTexts.join('\n')).toContain(`answer: headless first for ${cli}`);

        const again = await run(cli, ['--headless', '--message', `headless again for ${cli}`]);
        expect(again.reply?.text.trim()).toBe(`answer: headless again for ${cli}`);
        const req2 = requestWith(cli, again.pointer);
        expect(req2.userTexts).toEqual(expect.arrayContaining([first.pointer, inPane.pointer, again.pointer]));
        // Still one pinned conversation.
        expect((await t.jgJson<PinRow[]>(['sessions', '--json'])).find((p) => p.agent === cli)).toMatchObject({ sessionId: pin!.sessionId, previous: [] });
      },
      STEP_MS,
    );
  }
});
