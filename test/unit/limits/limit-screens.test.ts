import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify } from '../../../src/detect/classify.js';
import { readReset } from '../../../src/detect/limit.js';
import { parseProfile } from '../../../src/profiles/load.js';
import { builtinProfilesDir } from '../../../src/package-root.js';

const screens = path.join(import.meta.dirname, '..', '..', 'fixtures', 'screens');
const load = (name: string) =>
  parseProfile(JSON.parse(readFileSync(path.join(builtinProfilesDir, `${name}.json`), 'utf8')), path.join(builtinProfilesDir, `${name}.json`));
// 2026-11-26 13:30 UTC; the pane's clock in Paris (UTC+1).
const AT = Date.UTC(2026, 10, 26, 13, 30);

describe('the limit screens of the real CLIs: limited, with the reset time they show', () => {
  it.each([
    ['claude', 'claude-2.1.197-limited-session.txt', '2026-11-26T22:14:00.000Z'],
    ['claude', 'claude-2.1.197-limited-session-menu.txt', '2026-11-26T22:14:00.000Z'],
    ['claude', 'claude-2.1.197-limited-429.txt', null],
    ['codex', 'codex-0.169.0-limited-usage.txt', '2026-11-26T22:53:00.000Z'],
    ['codex', 'codex-0.169.0-limited-retries.txt', null],
    ['gemini', 'gemini-0.61.0-limited-pro-models.txt', '2026-11-26T20:43:00.000Z'],
    ['gemini', 'gemini-0.61.0-limited-after-stop.txt', null],
    ['qwen', 'qwen-0.15.10-limited-429.txt', null],
    // Captured from the real CLIs answered by the stub's plan limit (test/e2e/limits-real.test.ts).
    ['claude', 'claude-2.1.330-limited-plan-stub.txt', null],
    ['codex', 'codex-0.169.0-limited-plan-stub.txt', '2026-11-27T00:49:00.000Z'],
    ['gemini', 'gemini-0.61.0-limited-plan-stub.txt', null],
    // copilot's done screen with the limit lines users pasted in https://github.com/github/copilot-cli/issues/2144
    // (`Please try again in 2 hours`: seen at 13:30) and /2828 (`reset on April 20, 2026 at 2:00 AM`, in the pane's zone).
    ['copilot', 'copilot-1.0.102-limited-rate-from-issue.txt', '2026-11-26T15:30:00.000Z'],
    ['copilot', 'copilot-1.0.102-limited-weekly-from-issue.txt', '2026-04-20T00:00:00.000Z'],
  ])('%s %s', (profile, file, reset) => {
    const c = classify({ screen: readFileSync(path.join(screens, file), 'utf8'), raw: '', rules: load(profile).detect.rules });
    expect(c.status).toBe('limited');
    expect(c.rule).toBe('usage-limit');
    const r = readReset(c.lines, AT, 'Europe/Paris');
    expect(r.resetAt === null ? null : new Date(r.resetAt).toISOString()).toBe(reset);
  });
});

describe('a limit whose reset passed, still on screen', () => {
  it('reads as what the other rules say (the next turn busy), until the CLI prints another', async () => {
    const { classifyAfterLimit } = await import('../../../src/detect/classify.js');
    const rules = load('claude').detect.rules;
    const old = "  ⎿  You've hit your session limit · resets 10:14pm (UTC)";
    const busy = `❯ do it\n${old}\n\n❯ next prompt [jg:1]\n✻ Thinking… (esc to interrupt)\n`;
    expect(classifyAfterLimit({ screen: busy, raw: '', rules }, null).status).toBe('limited');
    expect(classifyAfterLimit({ screen: busy, raw: '', rules }, old).status).toBe('busy');
    expect(classifyAfterLimit({ screen: `${busy}${old}\n`, raw: '', rules }, old).status).toBe('limited');
  });
});

describe("the fake agent's `limit:` line", () => {
  it('draws the limit line the demo profile reads as limited', async () => {
    const { limitIn } = await import('../../../src/fake-agent/limit-line.js');
    expect(limitIn('do it\nlimit: try again in 3 seconds\n')).toBe('✕ Usage limit reached · try again in 3 seconds');
    expect(limitIn('limit:')).toBe('✕ Usage limit reached');
    expect(limitIn('no limit here')).toBeUndefined();
    expect(limitIn('limit(alpha): try again in 3 seconds', 'alpha')).toBe('✕ Usage limit reached · try again in 3 seconds');
    expect(limitIn('limit(alpha): try again in 3 seconds', 'beta')).toBeUndefined();
    const c = classify({ screen: `✦ ${limitIn('limit: resets 9pm (UTC)')!}\n\n│ > │\n`, raw: '', rules: load('demo').detect.rules });
    expect(c.status).toBe('limited');
  });
});

describe("a turn's reply that is a limit's message (the transcript's or a hook's)", () => {
  it('is read with the profile rules, only when the reply is that message alone', async () => {
    const { limitInReply } = await import('../../../src/detect/classify.js');
    const rules = load('claude').detect.rules;
    expect(limitInReply("You've hit your session limit · resets 10:14pm (UTC)", rules)).toEqual(["You've hit your session limit · resets 10:14pm (UTC)"]);
    expect(limitInReply('API Error: Request rejected (429) · rate limited\n', rules)).toHaveLength(1);
    expect(limitInReply('Here is the plan.\n\nWhen the API says `API Error: 429`, retry.\nStep 2.\nStep 3.', rules)).toBeNull();
    expect(limitInReply('done: all tests pass', rules)).toBeNull();
  });
});
