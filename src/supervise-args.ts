// The argv of window 0's supervisor (src/supervise.ts), as `supervisorCommand` writes it.
import { JaggersError } from './errors.js';

/** The options of `supervisorCommand`'s argv: `--project P --socket S --session N supervise`. */
export function parseSuperviseArgs(argv: readonly string[]): { project: string; socket: string; session: string } {
  const got: Record<string, string> = {};
  const rest = [...argv];
  if (rest.pop() !== 'supervise') throw new JaggersError('E_USAGE', `the supervisor's argv must end with "supervise", got ${JSON.stringify(argv)}`);
  while (rest.length > 0) {
    const flag = rest.shift()!;
    const value = rest.shift();
    const key = flag.slice(2);
    if (!['--project', '--socket', '--session'].includes(flag) || value === undefined || Object.hasOwn(got, key)) {
      throw new JaggersError('E_USAGE', `the supervisor takes --project, --socket and --session once each, got ${JSON.stringify(argv)}`);
    }
    got[key] = value;
  }
  const { project, socket, session } = got;
  if (project === undefined || socket === undefined || session === undefined) {
    throw new JaggersError('E_USAGE', `the supervisor needs --project, --socket and --session, got ${JSON.stringify(argv)}`);
  }
  return { project, socket, session };
}
