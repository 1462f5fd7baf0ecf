// First-run dialogs of the real CLIs under jaggers: claude (2.1.330 and newer) asks whether to trust a
// fresh git repository before anything else, and copilot whether to trust any folder it was not told of. jaggers must say what it asks (status, why), fail a
// handoff at once with that question, refuse an answer given to another screen, and answer it with
// `jaggers answer`, after which a handoff goes through. Needs `npm run build`.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TerminalDetail } from '../../src/api/types.js';
import { isJaggersError } from '../../src/errors.js';
import { api } from '../helpers/api.js';
import { CLIS, isChosen, isCliInstalled, type CliName } from './clis.js';
import { createTeam, SIGNALS, type Team } from './team.js';

const required = process.env.JAGGERS_REQUIRE_REAL_CLIS === '1';

/**
 * Each CLI with a first-run trust dialog, a word of the choice that trusts the folder, and the last key
 * `answer` sends: claude's highlight moves on a digit and Enter chooses; copilot chooses on the digit.
 */
const DIALOGS: { cli: CliName; pick: string; lastKey: string }[] = [
  { cli: 'claude', pick: 'trust', lastKey: 'Enter' },
  { cli: 'copilot', pick: 'remember', lastKey: '2' },
];

for (const { cli, pick, lastKey } of DIALOGS) {
  const run = (required || isCliInstalled(cli)) && isChosen(cli);
  describe.skipIf(!run)(`${cli} ${CLIS[cli].version}: the trust dialog of a fresh repository, answered with jaggers answer (${SIGNALS})`, () => {
    let t: Team;
    beforeAll(async () => {
      t = await createTeam([cli], { untrusted: true });
      execFileSync('git', ['init', '-q', t.cwds[cli]]);
      const up = await t.jg(['up', '--no-wait']);
      expect(up.code, up.stderr).toBe(0);
    }, 120_000);
    afterAll(async () => t?.dispose());

    it('status and why name the question and its choices; a handoff fails at once with it', async () => {
      const s = await t.waitForStatus(cli, (p) => p.state === 'waiting_input', { timeoutMs: 60_000, what: 'the trust dialog' });
      expect(s.question?.text).toMatch(/trust/i);
      expect(s.question?.choices.length).toBeGreaterThanOrEqual(2);
      expect(s.question?.choices.some((c) => c.includes(pick))).toBe(true);
      const status = await t.jg(['status']);
      expect(status.stdout).toMatch(new RegExp(`\\n${cli} asks ".*trust.*" \\[1\\. .* \\/ 2\\. .*\\]: jaggers answer ${cli} <number or label>\\n`, 'i'));
      const why = await t.jg(['why', cli]);
      expect(why.stdout).toMatch(/it asks: .*trust/i);

      const t0 = Date.now();
      const h = await t.jg(['handoff', cli, '-m', 'say hello', '--timeout', '60']);
      expect(h.code).toBe(1);
      expect(Date.now() - t0).toBeLessThan(60_000);
      expect(h.stderr).toMatch(
        new RegExp(`waiting_input: ${cli} asks ".*trust.*" \\[1\\. .*\\]; answer it with \`jaggers answer ${cli} <number or label>\``, 'i'),
      );
      // Nothing reached the model: the dialog comes before any turn.
      expect(t.turnsOf(cli)).toEqual([]);
    }, 120_000);

    it('an answer meant for another screen is refused and nothing is typed; the right one clears the dialog, then a handoff works', async () => {
      const before = await api(t.rig).call<TerminalDetail>('GET', `/v1/terminals/${cli}`);
      const stale = await api(t.rig)
        .call('POST', `/v1/terminals/${cli}/answer`, { choice: '1', expect: { text: 'Do you want to proceed?', choices: ['Yes', 'No'] } })
        .catch((e: unknown) => e);
      expect(isJaggersError(stale) && stale.code).toBe('E_SCREEN_CHANGED');
      expect((await api(t.rig).call<TerminalDetail>('GET', `/v1/terminals/${cli}`)).question).toEqual(before.question);

      const a = await t.jg(['answer', cli, pick, '--json']);
      expect(a.code, a.stderr).toBe(0);
      const r = JSON.parse(a.stdout) as { chose: { label: string }; keys: string[] };
      expect(r.chose.label).toContain(pick);
      expect(r.keys.at(-1)).toBe(lastKey);
      await t.waitForStatus(cli, (p) => p.state === 'idle' || p.state === 'done', { timeoutMs: 60_000, what: 'ready once trusted' });

      const h = await t.jg(['handoff', cli, '-m', 'say hello', '--timeout', '90', '--json']);
      expect(h.code, h.stderr).toBe(0);
      expect((JSON.parse(h.stdout) as { reply: { text: string } }).reply.text).toBe('answer: say hello');
      expect(t.turnsOf(cli).length).toBeGreaterThanOrEqual(1);
    }, 240_000);
  });
}
