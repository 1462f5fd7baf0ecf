// First-run dialogs of the real CLIs under jaggers: claude (2.1.330 and newer) asks whether to trust a
// fresh git repository before anything else. jaggers must say what it asks (status, why), fail a
// handoff at once with that question, refuse an answer given to another screen, and answer it with
// `jaggers answer`, after which a handoff goes through. Needs `npm run build`.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TerminalDetail } from '../../src/api/types.js';
import { isJaggersError } from '../../src/errors.js';
import { api } from '../helpers/api.js';
import { CLIS, isCliInstalled } from './clis.js';
import { createTeam, type Team } from './team.js';

const required = process.env.JAGGERS_REQUIRE_REAL_CLIS === '1';
const only = process.env.JAGGERS_E2E_CLIS?.split(',').map((s) => s.trim());
const run = (required || isCliInstalled('claude')) && (only === undefined || only.includes('claude'));

describe.skipIf(!run)(`claude ${CLIS.claude.version}: the trust dialog of a fresh repository, answered with jaggers answer`, () => {
  let t: Team;
  beforeAll(async () => {
    t = await createTeam(['claude'], { untrusted: true });
    execFileSync('git', ['init', '-q', t.cwds.claude]);
    const up = await t.jg(['up', '--no-wait']);
    expect(up.code, up.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => t?.dispose());

  it('status and why name the question and its choices; a handoff fails at once with it', async () => {
    const s = await t.waitForStatus('claude', (p) => p.state === 'waiting_input', { timeoutMs: 60_000, what: 'the trust dialog' });
    expect(s.question?.text).toMatch(/trust/i);
    expect(s.question?.choices.length).toBeGreaterThanOrEqual(2);
    expect(s.question?.choices.some((c) => /trust/i.test(c))).toBe(true);
    const status = await t.jg(['status']);
    expect(status.stdout).toMatch(/\nclaude asks ".*trust.*" \[1\. .* \/ 2\. .*\]: jaggers answer claude <number or label>\n/i);
    const why = await t.jg(['why', 'claude']);
    expect(why.stdout).toMatch(/it asks: .*trust/i);

    const t0 = Date.now();
    const h = await t.jg(['handoff', 'claude', '-m', 'say hello', '--timeout', '60']);
    expect(h.code).toBe(1);
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(h.stderr).toMatch(/waiting_input: claude asks ".*trust.*" \[1\. .*\]; answer it with `jaggers answer claude <number or label>`/i);
    // Nothing reached the model: the dialog comes before any turn.
    expect(t.turnsOf('claude')).toEqual([]);
  }, 120_000);

  it('an answer meant for another screen is refused and nothing is typed; the right one clears the dialog, then a handoff works', async () => {
    const before = await api(t.rig).call<TerminalDetail>('GET', '/v1/terminals/claude');
    const stale = await api(t.rig)
      .call('POST', '/v1/terminals/claude/answer', { choice: '1', expect: { text: 'Do you want to proceed?', choices: ['Yes', 'No'] } })
      .catch((e: unknown) => e);
    expect(isJaggersError(stale) && stale.code).toBe('E_SCREEN_CHANGED');
    expect((await api(t.rig).call<TerminalDetail>('GET', '/v1/terminals/claude')).question).toEqual(before.question);

    const a = await t.jg(['answer', 'claude', 'trust', '--json']);
    expect(a.code, a.stderr).toBe(0);
    const r = JSON.parse(a.stdout) as { chose: { label: string }; keys: string[] };
    expect(r.chose.label).toMatch(/trust/i);
    expect(r.keys.at(-1)).toBe('Enter');
    await t.waitForStatus('claude', (p) => p.state === 'idle' || p.state === 'done', { timeoutMs: 60_000, what: 'ready once trusted' });

    const h = await t.jg(['handoff', 'claude', '-m', 'say hello', '--timeout', '90', '--json']);
    expect(h.code, h.stderr).toBe(0);
    expect((JSON.parse(h.stdout) as { reply: { text: string } }).reply.text).toBe('answer: say hello');
    expect(t.turnsOf('claude').length).toBeGreaterThanOrEqual(1);
  }, 240_000);
});
