// `POST /v1/handoffs`'s body (src/supervisor/schemas.ts) as a turn forwarded from another host sends it:
// the workflow's name by the workflows' rule (a project's may have `_`), and the files it carries.
import { describe, expect, it } from 'vitest';
import { HandoffBody } from '../../src/supervisor/schemas.js';

describe("a handoff's body", () => {
  const turn = { id: 'j-0000000000c1', agent: 'far', message: 'Review .jaggers/handover/a.md', task: 't-0000f10e', wait: false };

  it("takes a project workflow's name and the files a forwarded turn carries", () => {
    const body = HandoffBody.parse({ ...turn, workflow: 'build_and_check', files: [{ path: '.jaggers/handover/a.md', text: 'the draft\n' }] });
    expect(body).toMatchObject({ workflow: 'build_and_check', files: [{ path: '.jaggers/handover/a.md', text: 'the draft\n' }] });
    expect(HandoffBody.parse(turn).files).toBeUndefined();
  });

  it('refuses a workflow name no workflow can have, and files of another shape', () => {
    expect(HandoffBody.safeParse({ ...turn, workflow: 'Build' }).success).toBe(false);
    expect(HandoffBody.safeParse({ ...turn, workflow: `w${'x'.repeat(40)}` }).success).toBe(false);
    expect(HandoffBody.safeParse({ ...turn, files: [{ path: '', text: 'x' }] }).success).toBe(false);
    expect(HandoffBody.safeParse({ ...turn, files: [{ path: 'a.md', text: 'x', mode: 0o777 }] }).success).toBe(false);
    expect(HandoffBody.safeParse({ ...turn, files: Array.from({ length: 65 }, (_, i) => ({ path: `f${i}.md`, text: '' })) }).success).toBe(false);
  });
});
