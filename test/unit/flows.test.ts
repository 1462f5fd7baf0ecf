// Flow files: parsing, every error naming the file (and line), the run a restart owes, enable/disable.
import { Cron } from 'croner';
import { describe, expect, it } from 'vitest';
import { checkTarget, missedTick, parseFlowFile, renderFlow, withEnabled } from '../../src/flows/flow.js';
import { runId } from '../../src/flows/scheduler.js';

const FILE = '/p/.jaggers/flows/nightly.md';
const ok = '---\nname: nightly\nschedule: "0 3 * * *"\nagent: claude\ntimeout: 600\n---\nReview the commits of the last day.\n';
const known = { agents: ['claude', 'gemini'], profiles: ['claude', 'codex'], workflows: ['collaborative'] };
const err = (text: string, file = FILE) => {
  try {
    parseFlowFile(text, file);
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
};

describe('flow files', () => {
  it('parses the front matter and the prompt', () => {
    const f = parseFlowFile(ok, FILE);
    expect(f).toMatchObject({ name: 'nightly', schedule: '0 3 * * *', target: { kind: 'agent', name: 'claude' }, enabled: true, timeout: 600 });
    expect(f.prompt).toBe('Review the commits of the last day.');
    expect(() => checkTarget(f, known)).not.toThrow();
  });

  it('renders what it parses back', () => {
    const text = renderFlow({
      name: 'nightly',
      schedule: '*/5 * * * * *',
      target: { kind: 'workflow', name: 'collaborative' },
      agents: ['claude', 'gemini'],
      enabled: false,
      prompt: 'é ✓ task\n',
    });
    const f = parseFlowFile(text, FILE);
    expect([f.schedule, f.target.kind, f.agents, f.enabled, f.prompt]).toEqual(['*/5 * * * * *', 'workflow', ['claude', 'gemini'], false, 'é ✓ task']);
  });

  it('every problem names the file, and the line where there is one', () => {
    expect(err(ok.replace('"0 3 * * *"', '"61 * * * *"'))).toMatch(
      /^\/p\/\.jaggers\/flows\/nightly\.md: field `schedule`: "61 \* \* \* \*" is not a cron expression/,
    );
    expect(err(ok.replace('"0 3 * * *"', 'every night'))).toMatch(/nightly\.md: field `schedule`: "every night" is not a cron expression/);
    expect(err('---\nname: nightly\nschedule: [oops\n---\nx\n')).toMatch(/^\/p\/\.jaggers\/flows\/nightly\.md:\d+: the front matter is not valid YAML/);
    expect(err('---\nschedule: "0 3 * * *"\nagent: claude\ntimeout: soon\n---\nx\n')).toBe(
      '/p/.jaggers/flows/nightly.md:4: field `timeout`: Invalid input: expected number, received string, got "soon"',
    );
    expect(err('just a prompt\n')).toMatch(/nightly\.md: must start with a front matter block/);
    expect(err('---\nschedule: "0 3 * * *"\nagent: claude\n')).toMatch(/no closing `---`/);
    expect(err('---\nschedule: "0 3 * * *"\nagent: claude\n---\n  \n')).toMatch(/nightly\.md: the prompt .* is empty/);
    expect(err('---\nschedule: "0 3 * * *"\nagent: claude\nworkflow: collaborative\n---\nx\n')).toMatch(
      /exactly one of agent, profile or workflow, got agent and workflow/,
    );
    expect(err('---\nschedule: "0 3 * * *"\n---\nx\n')).toMatch(/exactly one of agent, profile or workflow/);
    expect(err('---\nschedule: "0 3 * * *"\nagent: claude\nagents: [a]\n---\nx\n')).toMatch(/field `agents`: is for a workflow flow only/);
    expect(err('---\nschedule: "0 3 * * *"\nagent: claude\ncolour: red\n---\nx\n')).toMatch(/nightly\.md: .*colour/);
    expect(err(ok.replace('name: nightly', 'name: daily'))).toMatch(/field `name`: "daily" must be the file's name, "nightly"/);
    expect(err(ok, '/p/.jaggers/flows/Bad Name.md')).toMatch(/the file name "Bad Name" must be/);
    const f = parseFlowFile(ok.replace('agent: claude', 'agent: nobody'), FILE);
    expect(() => checkTarget(f, known)).toThrow('/p/.jaggers/flows/nightly.md: field `agent`: unknown agent "nobody"; agents are claude, gemini');
    const w = parseFlowFile(ok.replace('agent: claude', 'workflow: nope'), FILE);
    expect(() => checkTarget(w, known)).toThrow(/field `workflow`: unknown workflow "nope"; workflows are collaborative/);
  });

  it('a restart owes one run for any number of missed ticks, and none before the next tick', () => {
    const cron = new Cron('*/2 * * * * *', { paused: true });
    const last = new Date('2026-11-24T01:00:00.000Z');
    expect(missedTick(cron, last, new Date('2026-11-24T01:00:01.500Z'))).toBeNull();
    expect(missedTick(cron, last, new Date('2026-11-24T01:00:02.000Z'))?.toISOString()).toBe('2026-11-24T01:00:02.000Z');
    // Ten minutes down: 300 ticks missed, one run owed (the first missed tick is named).
    expect(missedTick(cron, last, new Date('2026-11-24T01:10:00.000Z'))?.toISOString()).toBe('2026-11-24T01:00:02.000Z');
    const daily = new Cron('0 3 * * *', { paused: true, timezone: 'UTC' });
    expect(missedTick(daily, new Date('2026-11-24T03:00:00Z'), new Date('2026-11-25T02:59:59Z'))).toBeNull();
    expect(missedTick(daily, new Date('2026-11-24T03:00:00Z'), new Date('2026-11-27T12:00:00Z'))).not.toBeNull();
  });

  it('run ids come from the flow and the tick: the same tick never makes two runs', () => {
    const f = parseFlowFile(ok, FILE);
    expect(runId(f, 't1')).toEqual(runId(f, 't1'));
    expect(runId(f, 't1').id).not.toBe(runId(f, 't2').id);
    expect(runId(f, 't1').id).toMatch(/^j-[0-9a-f]{12}$/);
    expect(runId(parseFlowFile(ok.replace('agent: claude', 'workflow: collaborative'), FILE), 't1')).toMatchObject({
      kind: 'task',
      id: expect.stringMatching(/^flow-nightly-[0-9a-f]{8}$/),
    });
  });

  it('enable and disable change the one field and keep the rest of the file byte for byte', () => {
    const off = withEnabled(ok, false, FILE);
    expect(off).toBe(ok.replace('timeout: 600\n', 'timeout: 600\nenabled: false\n'));
    expect(withEnabled(off, true, FILE)).toBe(ok.replace('timeout: 600\n', 'timeout: 600\nenabled: true\n'));
    const crlf = '---\r\nschedule: "0 3 * * *"\r\nagent: claude\r\nenabled: true\r\n---\r\nprompt ✓\r\n';
    expect(withEnabled(crlf, false, FILE)).toBe(crlf.replace('enabled: true', 'enabled: false'));
    expect(parseFlowFile(withEnabled(crlf, false, FILE), FILE).enabled).toBe(false);
  });
});
