// Text from people and agents carrying escape sequences, BEL, CR, backspace, DEL, a C1 CSI and a bidi
// override, run through every command that shows it, on real tmux with fake agents: what each prints
// holds no character a terminal would act on (only the newlines between lines), the text still shows
// (escaped), and `--json` gives it back exactly.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobView, TaskView } from '../../src/api/types.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

const HOSTILE = '\x1b]0;pwned\x07\x1b[2J\rX\bY\x7f\u009b31m\u202eZ';
/** What a terminal would act on; jaggers adds no colours of its own to these commands. */
const ACTS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** How the start of HOSTILE shows once inert. */
const SHOWN = '\\x1b]0;pwned\\x07\\x1b[2J\\x0dX\\x08Y';

describe('hostile text is inert in every listing', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'beta', profile: 'fake' },
      ],
    });
    expect((await rig.run(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  it('jobs, result, wait, tasks, show, inbox, why, status, ls, sessions, logs and an error print no raw control character', async () => {
    const job = (await rig.run(['assign', 'alpha', '-m', `first line ${HOSTILE}`, '--name', `name${HOSTILE}`])).stdout.trim();
    expect((await rig.run(['wait', job])).code).toBe(0);
    expect((await rig.run(['message', 'beta', '-m', `hello ${HOSTILE}`])).code).toBe(0);
    const h = await rig.run(['handoff', 'beta', '-m', `hand ${HOSTILE}`]);
    expect(h.code, h.stderr).toBe(0);
    const run = await rig.run(['run', 'collaborative', '--task', `text${HOSTILE}`, '--agents', 'alpha,beta']);
    expect(run.code, run.stderr).toBe(0);
    const task = (JSON.parse((await rig.run(['tasks', '--json'])).stdout) as TaskView[]).find((t) => t.workflow === 'collaborative')!.id;

    const commands = [
      ['jobs'],
      ['result', job],
      ['wait', job],
      ['tasks'],
      ['show', task],
      ['inbox', 'beta'],
      ['why', 'alpha'],
      ['status'],
      ['ls'],
      ['sessions'],
      ['logs'],
      ['why', `no${HOSTILE}such`],
      ['status', `no${HOSTILE}such`],
    ];
    for (const args of commands) {
      const r = await rig.run(args);
      const printed = r.stdout + r.stderr;
      expect(printed, `jaggers ${args.join(' ')}`).not.toMatch(ACTS);
    }
    // The text is there, shown rather than acted on.
    expect((await rig.run(['jobs'])).stdout).toContain(`name${SHOWN}`);
    expect((await rig.run(['show', task])).stdout).toContain(`text: text${SHOWN}`);
    expect((await rig.run(['result', job])).stdout).toContain(`first line ${SHOWN}`);
    expect((await rig.run(['why', `no${HOSTILE}such`])).stderr).toContain('no\\u001b]0;pwned');
    // jaggers' own controls still act: window 0 (the supervisor) clears its screen before each redraw.
    const w0 = await rig.tmux(['capture-pane', '-p', '-t', `=${rig.session}:0`]);
    expect(w0).toMatch(/^jaggers supervisor: session /);
    expect(w0).toMatch(/^ {2}alpha +jg-/m);
    // --json: the same value, exactly.
    const jobs = JSON.parse((await rig.run(['jobs', '--json'])).stdout) as JobView[];
    expect(jobs.find((j) => j.id === job)?.name).toBe(`name${HOSTILE}`);
    const shown = JSON.parse((await rig.run(['show', task, '--json'])).stdout) as TaskView;
    expect(shown.text).toBe(`text${HOSTILE}`);
  });
});
