// A usage or rate limit in a headless run's output (src/clis/shared/headless-limit.ts), on fixtures of
// what each CLI prints (test/fixtures/headless/limits/): the lines that say so, the reset time they give
// (read as the pane's machine reads a screen's), and runs that are no limit: an answer that talks about
// limits, a retry the CLI got past, a failure of another kind.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { headlessLimit } from '../../../src/clis/shared/headless-limit.js';
import { regexOf } from '../../../src/detect/classify.js';
import { readReset } from '../../../src/detect/limit.js';
import { builtinProfilesDir } from '../../../src/package-root.js';
import { parseProfile } from '../../../src/profiles/load.js';
import { Runner } from '../../../src/work/runner.js';
import { FakeStore, jobEvent, recordingLog, settle, terminalEvents } from '../../helpers/work-fakes.js';

const dir = path.join(import.meta.dirname, '..', '..', 'fixtures', 'headless', 'limits');
const AT = Date.UTC(2026, 10, 26, 13, 30);
const rulesOf = (name: string) => {
  const file = path.join(builtinProfilesDir, `${name}.json`);
  return parseProfile(JSON.parse(readFileSync(file, 'utf8')), file)
    .detect.rules.filter((r) => r.status === 'limited')
    .map((r) => regexOf(r.pattern));
};
const read = (name: string, ext: 'out' | 'err') => {
  try {
    return readFileSync(path.join(dir, `${name}.${ext}`), 'utf8');
  } catch {
    return '';
  }
};
const run = (profile: string, name: string, status: number, reply?: string) =>
  headlessLimit({ stdout: read(name, 'out'), stderr: read(name, 'err'), status, rules: rulesOf(profile), at: AT, ...(reply !== undefined ? { reply } : {}) });

describe('a limit in headless output', () => {
  it.each([
    ['claude', 'claude-2.1.330-p-session-limit', 1, "You've hit your session limit · resets 10:14pm (UTC)", '2026-11-26T22:14:00.000Z'],
    ['claude', 'claude-2.1.330-p-429', 1, 'API Error: Request rejected (429) · Error', null],
    ['claude', 'claude-2.1.330-p-json-429', 1, 'API Error: Request rejected (429) · Error', null],
    ['claude', 'claude-2.1.197-p-usage-limit-epoch', 1, 'Claude AI usage limit reached|1795727400', '2026-11-26T21:10:00.000Z'],
    [
      'codex',
      'codex-0.169.0-exec-usage-limit',
      1,
      'ERROR: You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 5:06 PM.',
      '2026-11-26T17:06:00.000Z',
    ],
    [
      'codex',
      'codex-0.169.0-exec-json-usage-limit',
      1,
      'You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 5:06 PM.',
      '2026-11-26T17:06:00.000Z',
    ],
    ['codex', 'codex-0.169.0-exec-retries', 1, 'ERROR: exceeded retry limit, last status: 429 Too Many Requests, request id: req_8c1f2e3d4b5a69780', null],
    [
      'gemini',
      'gemini-0.61.0-p-daily-quota',
      1,
      'You exceeded your current quota, please check your plan and billing details. · RESOURCE_EXHAUSTED (HTTP 429) · try again in 41 seconds',
      '2026-11-26T13:30:41.000Z',
    ],
    [
      'qwen',
      'qwen-0.15.10-p-429',
      1,
      '[API Error: 429 You exceeded your current quota, please check your plan and billing details. (insufficient_quota)]',
      null,
    ],
    ['opencode', 'opencode-1.18.33-run-json-429', 0, 'Rate limit exceeded. Please try again later. (HTTP 429)', null],
  ])('%s %s (exit %i)', (profile, name, status, first, reset) => {
    const lines = run(profile, name, status, status === 0 ? '' : undefined);
    expect(lines?.[0]).toBe(first);
    expect(readReset(lines!, AT, 'UTC').resetAt).toBe(reset === null ? null : Date.parse(reset));
  });

  it('is none in an answer that talks about limits, a retry the CLI got past, or a failure of another kind', () => {
    expect(run('claude', 'claude-2.1.330-p-answer-about-limits', 0)).toBeNull();
    // codex said 429 while it retried, then answered.
    expect(run('codex', 'codex-0.169.0-exec-json-retried', 0, 'Done: the tests pass.')).toBeNull();
    expect(run('gemini', 'gemini-0.61.0-p-auth-error', 1)).toBeNull();
  });

  it("a run that exited 0 with a reply that is a limit's message alone is a limit", () => {
    expect(headlessLimit({ stdout: '', stderr: '', status: 0, rules: rulesOf('qwen'), at: AT, reply: '[API Error: 429 Rate limit reached]' })).toEqual([
      '[API Error: 429 Rate limit reached]',
    ]);
  });
});

describe('a headless item whose run a limit stopped, on an agent with no live pane', () => {
  it('waits until the reset its record gives (the runner says so), then runs', async () => {
    const store = new FakeStore();
    const T = 'jg-c0de';
    store.seed(...terminalEvents(T, 'coder'), jobEvent('j-000000000001', { terminalId: T, headless: true, work: 'handoff' }));
    const ran: string[] = [];
    const runner = new Runner({
      data: () => store.data,
      pane: () => undefined,
      status: () => undefined,
      run: async (item) => {
        ran.push(item.id);
        store.seed({ type: 'job-state', jobId: item.id, state: 'done', reason: 'answered' });
      },
      lost: async () => {},
      broken: async () => {},
      log: recordingLog(),
    });
    const cut = (resetAt: number) =>
      store.seed({
        type: 'job-state',
        jobId: 'j-000000000001',
        state: 'queued',
        reason: "its turn was cut by coder's usage limit",
        limit: { resetAt: new Date(resetAt).toISOString(), said: 'in 1 hour' },
      });
    const reset = Date.now() + 3600_000;
    cut(reset);
    runner.kick(T);
    await settle();
    expect(ran).toEqual([]);
    expect(runner.waiting(T, 'j-000000000001')).toBe(
      `its run was stopped by coder's usage limit (in 1 hour); it runs again at ${new Date(reset).toISOString()}`,
    );
    // Its reset passed (as the runner's own timer finds it): it goes in.
    cut(Date.now() - 1000);
    runner.kick(T);
    await settle();
    expect(ran).toEqual(['j-000000000001']);
    runner.stop();
  });
});
