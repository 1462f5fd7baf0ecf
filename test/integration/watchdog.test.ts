// The watchdog on a real tmux server with the fake agent: a turn that hangs (`/hang`: the spinner and its
// timer run, nothing else) is found stuck after `stuckAfter`: an event on /v1/events, a notice, `why`
// saying so; with `"onStuck": "interrupt"` the CLI's own interrupt key goes in once and the turn ends.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StreamEvent, TerminalView } from '../../src/api/types.js';
import { api, untilEvent } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('the watchdog', () => {
  let rig: Rig;
  const jg = (args: string[]) => rig.run(args);

  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '200']);
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake', stuckAfter: 2, onStuck: 'interrupt' },
        { name: 'beta', profile: 'fake', stuckAfter: 2 },
      ],
    });
    expect((await jg(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  it('finds a silent busy agent stuck, tells, and interrupts it once', async () => {
    const events: StreamEvent[] = [];
    const stop = new AbortController();
    const stream = api(rig)
      .events('/v1/events?agent=alpha&types=stuck,notice,state', (e: StreamEvent) => events.push(e), { signal: stop.signal })
      .catch(() => {});
    const sent = await jg(['send', 'alpha', '/hang']);
    expect(sent.code, sent.stderr).toBe(0);
    await untilEvent(api(rig), 'stuck', async () => events.find((e) => e.type === 'stuck') ?? null, 'a stuck event');
    const stuck = events.find((e) => e.type === 'stuck')!;
    expect(stuck.data).toMatchObject({ agent: 'alpha', kind: 'silent', interrupted: true });
    expect(String(stuck.data.reason)).toMatch(/^busy with no output and no hook event for \d+ s$/);
    // The interrupt ended the turn: the agent is quiet again.
    const view = await untilEvent(
      api(rig),
      'state',
      async () => ((v) => (v.state === 'idle' || v.state === 'done' ? v : null))(await api(rig).call<TerminalView>('GET', '/v1/terminals/alpha')),
      'alpha quiet after the interrupt',
    );
    expect(view.state).toMatch(/idle|done/);
    await untilEvent(api(rig), 'notice', async () => events.find((e) => e.type === 'notice' && e.data.state === 'stuck') ?? null, 'the stuck notice');
    stop.abort();
    await stream;
    expect(events.filter((e) => e.type === 'stuck')).toHaveLength(1);
  });

  it('without onStuck it only tells: `why` and the agent view say so while it stands', async () => {
    expect((await jg(['send', 'beta', '/hang'])).code).toBe(0);
    const view = await untilEvent(
      api(rig),
      'stuck',
      async () => ((v) => (v.stuck ? v : null))(await api(rig).call<TerminalView>('GET', '/v1/terminals/beta')),
      'beta stuck',
    );
    expect(view.state).toBe('busy');
    expect(view.stuck).toMatchObject({ kind: 'silent' });
    // `why` says it while it stands. A late screen (a loaded machine) may clear the finding in between;
    // the hang stays silent, so it is found again and `why` says so then.
    const stuckLine = /^stuck \(silent, since \S+\): busy with no output and no hook event for \d+ s$/m;
    const why = await untilEvent(
      api(rig),
      'stuck',
      async () => ((out) => (stuckLine.test(out) ? out : null))((await jg(['why', 'beta'])).stdout),
      '`why` saying beta is stuck',
    );
    expect(why).toMatch(stuckLine);
  });
});
