// `jaggers answer`: a fake agent's permission menu answered by number and by label, a stale question
// refused with nothing typed, and clear errors for an agent that waits for nothing or a choice not offered.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnswerResult, TerminalView } from '../../src/api/types.js';
import { isJaggersError } from '../../src/errors.js';
import { api } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('answer: a menu an agent waits on', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
    await writeProject(rig.root, { agents: [{ name: 'ag', profile: 'fake' }] });
    expect((await rig.run(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  /** Open the fake agent's menu and wait until the supervisor reports it with its question. */
  const openMenu = async (): Promise<TerminalView> => {
    const sent = await rig.run(['send', 'ag', '/menu']);
    expect(sent.code, sent.stderr + sent.stdout).toBe(0);
    const v = await api(rig).call<TerminalView>('GET', '/v1/terminals/ag/wait?state=waiting_input&timeout=15');
    expect(v.question?.text).toMatch(/Allow execution of \[Shell\]: touch approved\.txt\?/);
    expect(v.question?.choices).toEqual(['Allow once', 'Deny']);
    return v;
  };

  it('by number, then by label: the menu goes away with the choice taken', async () => {
    await openMenu();
    const r = await rig.run(['answer', 'ag', '1', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const a = JSON.parse(r.stdout) as AnswerResult;
    // The highlight is already on 1: Enter, checked first.
    expect(a).toMatchObject({ agent: 'ag', chose: { number: 1, label: 'Allow once' }, keys: ['Enter'] });
    expect(a.state).not.toBe('waiting_input');
    await rig.waitForScreen('ag', /approved/);

    await openMenu();
    const d = await rig.run(['answer', 'ag', 'deny', '--json']);
    expect(d.code, d.stderr).toBe(0);
    // Another item: its digit, which this menu takes at once.
    expect(JSON.parse(d.stdout)).toMatchObject({ chose: { number: 2, label: 'Deny' }, keys: ['2'] });
    await rig.waitForScreen('ag', /denied/);

    await openMenu();
    const t = await rig.run(['answer', 'ag', 'deny']);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(/^ag: answered "Allow execution of \[Shell\]: touch approved\.txt\?" with 2\. Deny; now \w+\n$/);
    await rig.waitForScreen('ag', /denied/);
  });

  it('a menu in the middle of a handoff: the answer does not wait behind the turn, and the turn ends', async () => {
    const h = await rig.run(['handoff', 'ag', '-m', 'this needs-approval first', '--no-wait']);
    expect(h.code, h.stderr).toBe(0);
    await api(rig).call<TerminalView>('GET', '/v1/terminals/ag/wait?state=waiting_input&timeout=15');
    // Well within the handoff's own timeout (600 s): the answer does not queue behind its turn.
    const a = await rig.run(['answer', 'ag', 'allow once', '--json']);
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(a.stdout)).toMatchObject({ chose: { number: 1 } });
    const done = await api(rig).call<TerminalView>('GET', '/v1/terminals/ag/wait?state=done&timeout=15');
    expect(done.state).toBe('done');
    await rig.waitForScreen('ag', /approved/);
  });

  it('a menu without numbers (a trust dialog): the highlight moved with the arrow keys, then Enter', async () => {
    const openTrust = async () => {
      expect((await rig.run(['send', 'ag', '/trust'])).code).toBe(0);
      const v = await api(rig).call<TerminalView>('GET', '/v1/terminals/ag/wait?state=waiting_input&timeout=15');
      expect(v.question).toEqual({
        text: 'Quick safety check: Is this a project you created or one you trust?',
        choices: ['Yes, I trust this folder', 'No, exit'],
        selected: 0,
      });
    };
    await openTrust();
    const no = await rig.run(['answer', 'ag', 'no', '--json']);
    expect(no.code, no.stderr).toBe(0);
    expect(JSON.parse(no.stdout)).toMatchObject({ chose: { number: 2, label: 'No, exit' }, keys: ['Down', 'Enter'] });
    await rig.waitForScreen('ag', /not trusted/);

    await openTrust();
    const yes = await rig.run(['answer', 'ag', '1', '--json']);
    expect(yes.code, yes.stderr).toBe(0);
    expect(JSON.parse(yes.stdout)).toMatchObject({ chose: { number: 1, label: 'Yes, I trust this folder' }, keys: ['Enter'] });
    await rig.waitForScreen('ag', /^ *trusted$/m);
  });

  it('refuses a stale question with nothing typed, a choice not offered, and an agent that waits for nothing', async () => {
    const idle = await rig.run(['answer', 'ag', '1']);
    expect(idle.code).toBe(1);
    expect(idle.stderr).toMatch(/E_NOT_WAITING|answer: ag is \w+, not waiting for an answer/);

    await openMenu();
    // What another screen asked: refused, and the menu still waits.
    const stale = await api(rig)
      .call('POST', '/v1/terminals/ag/answer', { choice: '1', expect: { text: 'Do you trust this folder?', choices: ['Yes', 'No'] } })
      .catch((e: unknown) => e);
    expect(isJaggersError(stale) && stale.code).toBe('E_SCREEN_CHANGED');
    expect((stale as Error).message).toMatch(
      /now asks "Allow execution of .*" \(Allow once \/ Deny\), not "Do you trust this folder\?" \(Yes \/ No\); nothing was sent/,
    );
    const still = await api(rig).call<TerminalView>('GET', '/v1/terminals/ag');
    expect(still.state).toBe('waiting_input');

    for (const [choice, why] of [
      ['3', /there is no choice 3: the menu offers 1\. Allow once, 2\. Deny/],
      ['maybe', /no choice matches "maybe": the menu offers 1\. Allow once, 2\. Deny/],
    ] as const) {
      const r = await rig.run(['answer', 'ag', choice]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(why);
    }
    expect((await api(rig).call<TerminalView>('GET', '/v1/terminals/ag')).state).toBe('waiting_input');
    // And a right answer still works after the refusals.
    expect((await rig.run(['answer', 'ag', 'allow'])).code).toBe(0);
    await rig.waitForScreen('ag', /approved/);
  });
});
