import type { LaunchInput } from '../../src/agents/plan.js';

/** What `planLaunch` needs besides the spec and profile, for a project at `projectRoot` (tests override parts). */
export function launchInput(projectRoot: string, o: Partial<LaunchInput> = {}): LaunchInput {
  return {
    projectRoot,
    session: 's',
    socket: 'sock',
    binDir: '/pkg/bin',
    basePath: '/usr/bin',
    size: { width: 200, height: 50 },
    task: null,
    newSessionId: () => 'uuid-1',
    ...o,
  };
}
