import type { LimitSeen, TerminalStatus } from '../../machines/terminal.machine.js';
import type { Profile } from '../profiles/schema.js';

const names = (profile: Profile, status: string) =>
  profile.detect.rules
    .filter((r) => r.status === status)
    .map((r) => r.name)
    .join(', ') || 'none';

/** What the terminal machine waits for to leave `state`, in words (for `why` and the API). */
export function waitingFor(state: TerminalStatus, profile: Profile | null, agent: string, limit?: LimitSeen | null): string {
  if (!profile) return 'a valid profile: this pane is not watched';
  const settle = `${profile.detect.settleMs} ms`;
  switch (state) {
    case 'starting':
      return `the CLI's first input box, busy screen or menu (rules: ${names(profile, 'idle')} / ${names(profile, 'busy')} / ${names(profile, 'waiting_input')})`;
    case 'idle':
      return 'a prompt (jaggers handoff or send), or busy evidence on screen';
    case 'busy':
      return profile.detect.doneNeedsEvidence
        ? `the turn's end: its turn summary on screen (rule ${names(profile, 'done')}), or the turn engine's confirmation`
        : `a quiet screen (none of: ${names(profile, 'busy')}) for ${settle}, or the turn engine's confirmation`;
    case 'booting':
      return `its quiet screen to stay so for ${profile.detect.startSettleMs} ms (it may still be loading)`;
    case 'settling':
      return `the screen to stay quiet for ${settle} before the turn counts as done`;
    case 'waiting_input':
      return `a person to answer on screen (jaggers attach ${agent})`;
    case 'done':
      return 'the next prompt, or busy evidence on screen';
    case 'limited':
      return limit?.resetAt
        ? `its usage limit to reset at ${new Date(limit.resetAt).toISOString()} (${limit.said ?? 'as shown'}); its queue goes on then`
        : `${Math.round(((limit?.until ?? 0) - (limit?.at ?? 0)) / 60_000)} min (its limit showed no reset time) before its queue is tried again`;
    case 'error':
      return 'the input box again';
    case 'exited':
      return '`jaggers up` to restart it in its pinned conversation';
  }
}
