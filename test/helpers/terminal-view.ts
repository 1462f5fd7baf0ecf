// A terminal's view (GET /v1/terminals) as the tests of views build it: an idle demo agent, changed by `over`.
import type { TerminalView } from '../../src/api/types.js';

export function terminalView(agent: string, over: Partial<TerminalView> = {}): TerminalView {
  return {
    agent,
    terminalId: `jg-${agent}`,
    task: null,
    profile: 'demo',
    window: '@1',
    windowIndex: 1,
    pane: '%1',
    pid: 42,
    state: 'idle',
    since: null,
    rule: null,
    lines: [],
    source: 'screen',
    turns: 0,
    sessionId: null,
    exitStatus: null,
    waitingFor: null,
    question: null,
    problem: null,
    usage: null,
    ...over,
  };
}
