// Window 0's argv: what supervisorCommand writes is what the supervisor's entry reads back, odd paths and
// names included; anything else is refused with the argv named.
import { describe, expect, it } from 'vitest';
import { supervisorCommand } from '../../src/api/ensure.js';
import { resolveContext } from '../../src/context.js';
import { superviseEntry, SUPERVISOR_NODE_FLAGS } from '../../src/package-root.js';
import { parseSuperviseArgs } from '../../src/supervise-args.js';

describe("the supervisor's argv", () => {
  it.each([
    ['/tmp/a project/x', 'jaggers-1a2b3c4d', 'demo'],
    ['/tmp/--socket', '/tmp/socks dir/s', '--project'],
    ['/tmp/p', 'supervise', 'supervise'],
  ])('reads back what supervisorCommand wrote (project %j, socket %j, session %j)', async (project, socket, session) => {
    const ctx = await resolveContext({ project, socket, session }, {}, '/');
    const argv = supervisorCommand(ctx);
    expect(argv.slice(0, 2 + SUPERVISOR_NODE_FLAGS.length)).toEqual([process.execPath, ...SUPERVISOR_NODE_FLAGS, superviseEntry]);
    const back = parseSuperviseArgs(argv.slice(2 + SUPERVISOR_NODE_FLAGS.length));
    expect(back).toEqual({ project, socket, session });
    // And the context built from it is the one the command had.
    const again = await resolveContext(back, {}, '/');
    expect([again.projectRoot, again.server.socket, again.session]).toEqual([ctx.projectRoot, ctx.server.socket, ctx.session]);
  });

  it.each([
    [[], 'must end with "supervise"'],
    [['--project', '/p', '--socket', 's', '--session', 'n'], 'must end with "supervise"'],
    [['--project', '/p', '--socket', 's', 'supervise'], 'needs --project, --socket and --session'],
    [['--project', '/p', '--project', '/q', '--socket', 's', '--session', 'n', 'supervise'], 'once each'],
    [['--verbose', '--project', '/p', '--socket', 's', '--session', 'n', 'supervise'], 'once each'],
    [['--project', '/p', '--socket', 's', '--session', 'supervise'], 'once each'],
    [['--__proto__', 'x', '--project', '/p', '--socket', 's', '--session', 'n', 'supervise'], 'once each'],
  ])('refuses %j, naming it', (argv, why) => {
    expect(() => parseSuperviseArgs(argv)).toThrow(expect.objectContaining({ code: 'E_USAGE', message: expect.stringContaining(why) }));
    expect(() => parseSuperviseArgs(argv)).toThrow(JSON.stringify(argv));
  });
});
