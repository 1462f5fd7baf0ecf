// A usage limit on the real CLIs, offline: the stub model answers a turn with the service's plan limit
// (test/e2e/stub-limits.ts: anthropic's subscription headers, codex's usage_limit_reached, gemini's daily
// RESOURCE_EXHAUSTED), the CLI
// shows it, and jaggers shows the agent `limited` with the reset time it read; the job whose turn it cut
// goes back to wait for the reset (its `reason` and `waiting` say so), and the next job waits behind it. Prints what each CLI showed. Needs `npm run build` and
// scripts/install-real-clis.sh; a CLI that is not installed is skipped.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobView, TerminalView } from '../../src/api/types.js';
import { api, untilEvent } from '../helpers/api.js';
import { CLIS, isChosen, isCliInstalled, type CliName } from './clis.js';
import { createTeam, cliOf, type Team } from './team.js';
import { defaultScript } from './stub-script.js';

const team = (['claude', 'codex', 'gemini'] as CliName[]).filter((cli) => isCliInstalled(cli) && isChosen(cli));
const RESET_S = 3 * 3600;

describe.skipIf(team.length === 0)('usage limits on the real CLIs', () => {
  let t: Team;

  beforeAll(async () => {
    t = await createTeam(team);
    const up = await t.jg(['up']);
    expect(up.code, up.stderr).toBe(0);
    await Promise.all(team.map((cli) => t.waitForStatus(cli, (s) => s.state === 'idle', { timeoutMs: 90_000, what: 'idle after up' })));
    t.stub.setScript((req) => (team.includes(cliOf(req) as CliName) ? { kind: 'limit', limit: 'plan', resetInS: RESET_S } : defaultScript(req, t.rig.root)));
  }, 120_000);

  afterAll(async () => {
    await t?.dispose();
  });

  it.each(team)(
    '%s: limited with its reset time; the cut job waits for it, the next job behind it',
    async (cli) => {
      const at = Date.now();
      const first = await t.jg(['assign', cli, '-m', 'say hello']);
      expect(first.code, first.stderr).toBe(0);
      try {
        await t.waitForStatus(cli, (s) => s.state === 'limited', { timeoutMs: 90_000, what: 'limited' });
      } catch (e) {
        const screen = (await t.jg(['capture', cli])).stdout;
        throw new Error(`${(e as Error).message}\n${(await t.jg(['why', cli])).stdout}\nscreen:\n${screen}`);
      }
      const view = await api(t.rig).call<TerminalView>('GET', `/v1/terminals/${cli}`);
      // JAGGERS_CAPTURE_LIMIT_SCREENS=1 keeps the screen as a fixture (test/fixtures/screens/<cli>-<version>-limited-plan-stub.txt).
      if (process.env.JAGGERS_CAPTURE_LIMIT_SCREENS === '1') {
        const screen = await api(t.rig).call<{ screen: string }>('GET', `/v1/terminals/${cli}/screen`);
        writeFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'screens', `${cli}-${CLIS[cli].version}-limited-plan-stub.txt`), screen.screen);
      }
      console.log(`${cli} ${CLIS[cli].version} limited: ${JSON.stringify(view.limit)}`);
      expect(view.limit).toBeDefined();
      if (view.limit!.resetAt) {
        // A time of day (to the minute, or the hour) about RESET_S from now.
        const off = Date.parse(view.limit!.resetAt) - at - RESET_S * 1000;
        expect(Math.abs(off)).toBeLessThan(61 * 60_000);
      }
      // The turn the limit cut does not end with the limit's message as its reply: the job waits for the reset.
      const id = first.stdout.trim();
      const cut = await untilEvent(
        api(t.rig),
        'job',
        async () => ((j) => (j.limited || j.state === 'done' || j.state === 'failed' ? j : null))(await api(t.rig).call<JobView>('GET', `/v1/jobs/${id}`)),
        'the cut job waiting',
        60_000,
      );
      console.log(`${cli}: the cut job is ${cut.state}: ${cut.reason} (waiting: ${cut.waiting})`);
      expect(cut).toMatchObject({ state: 'queued', reply: null, limited: { cuts: 1 } });
      expect(cut.reason).toMatch(new RegExp(`^its turn was cut by ${cli}'s usage limit`));
      expect(cut.waiting).toMatch(new RegExp(`^its turn was cut by ${cli}'s usage limit .*; it runs again at `));
      const second = await t.jg(['assign', cli, '-m', 'the next job']);
      expect(second.code, second.stderr).toBe(0);
      const job = await api(t.rig).call<JobView>('GET', `/v1/jobs/${second.stdout.trim()}`);
      expect(job.state).toBe('queued');
      expect(job.waiting).toBe(`behind job ${id} (queued) for ${cli}`);
    },
    150_000,
  );
});
