// `jaggers demo` end to end on a private tmux server: the shipped demo profile's agents answer in the
// work reply mode, so the brief comes back as a plan, the plan as a diff and the diff as a review.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_BRIEF } from '../../src/commands/demo.js';
import { workReply } from '../../src/fake-agent/work-reply.js';
import { parseArtifact } from '../../src/handover/artifact.js';
import { Rig } from '../helpers/rig.js';

/** The replies `jaggers demo` printed, per agent, without the two-space indent it adds. */
function printedReplies(stdout: string): Map<string, { text: string; artifact: string }> {
  const out = new Map<string, { text: string; artifact: string }>();
  const parts = stdout.split(/^\[(planner|coder|reviewer)\] turn \d+, \d+ ms, handover (\S+)\n/m);
  for (let i = 1; i + 2 < parts.length; i += 3) {
    const text = parts[i + 2]!.split('\n\n')[0]!.replace(/^ {2}/gm, '');
    out.set(parts[i]!, { text, artifact: parts[i + 1]! });
  }
  return out;
}

describe('jaggers demo on real tmux', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
  });
  afterEach(async () => rig.cleanup());

  it('planner -> coder -> reviewer: a plan, a diff of it and a review of the diff, on screen and on disk', async () => {
    const r = await rig.run(['demo']);
    expect(r.code, r.stderr).toBe(0);
    // stderr holds only each handoff's progress lines (`coder: busy (1.2 s)`).
    expect(
      r.stderr
        .split('\n')
        .filter(Boolean)
        .every((l) => /^(planner|coder|reviewer): /.test(l)),
      r.stderr,
    ).toBe(true);

    // Made from the handover text alone, so the real chain gives what the pure function gives.
    const plan = workReply(DEMO_BRIEF, { agentName: 'planner' });
    const diff = workReply(plan.join('\n'), { agentName: 'coder' });
    const review = workReply(diff.join('\n'), { agentName: 'reviewer' });
    expect(plan[0]).toBe('Plan: a small command-line tool that counts the words in a file');
    expect(diff).toContain('+++ b/bin/count-words.js');
    expect(review[0]).toMatch(/^Verdict: /);

    const printed = printedReplies(r.stdout);
    expect([...printed.keys()]).toEqual(['planner', 'coder', 'reviewer']);
    expect(printed.get('planner')!.text).toBe(plan.join('\n'));
    expect(printed.get('coder')!.text).toBe(diff.join('\n'));
    expect(printed.get('reviewer')!.text).toBe(review.join('\n'));

    // Each agent got the previous reply as its handover body.
    const coderHandover = parseArtifact(await readFile(path.resolve(rig.root, printed.get('coder')!.artifact), 'utf8'));
    expect(coderHandover.meta).toMatchObject({ source_agent: 'planner', target_agent: 'coder', workflow: 'demo' });
    expect(coderHandover.body).toBe(`${plan.join('\n')}\n`);

    // Drawn by the fake agent's TUI: reply marker on the first line, the rest indented under it.
    await rig.waitForScreen(
      'planner',
      /\n ✦ Plan: a small command-line tool that counts the words in a file\n {3}1\. Read the file[^\n]*\n {3}2\. Count the words[\s\S]*Worked for \d+s/,
    );
    await rig.waitForScreen(
      'coder',
      /\n ✦ Implemented the 3-step plan as bin\/count-words\.js[^\n]*\n\n {3}--- \/dev\/null\n {3}\+\+\+ b\/bin\/count-words\.js\n {3}@@ -0,0 \+1,15 @@[\s\S]*\n {6}"type": "module",[\s\S]*Worked for \d+s/,
    );
    await rig.waitForScreen(
      'reviewer',
      /\n ✦ Verdict: [^\n]+\n {3}Reviewed bin\/count-words\.js[^\n]*\n {3}1\. \[\w+\] bin\/count-words\.js:\d+[\s\S]*Worked for \d+s/,
    );
  });
});
