// An agent's nice value for its whole pane session. Where Linux shares the CPU between sessions
// (autogroup: `kernel.sched_autogroup_enabled` on, for processes in the root cgroup), a process's own
// nice counts only inside its session's group, and every tmux pane is a session of its own: 100 busy
// agents would get 100 shares to the supervisor's one whatever `nice` they run under. So the pane's group
// gets the agent's nice too, through /proc/<pane pid>/autogroup. The kernel lets a user without
// CAP_SYS_ADMIN change one group per 100 ms (EAGAIN before): the changes wait their turn here.
import { readFileSync, writeFileSync } from 'node:fs';

export interface SessionNicePorts {
  /** Whether the kernel groups by session at all (false: nothing to do). */
  enabled(): boolean;
  /** Write the group's nice; throws with the system's error code. */
  write(pid: number, nice: number): void;
  setTimeout(fn: () => void, ms: number): unknown;
  /** A group that could not be changed (not EAGAIN): said once per pane, at debug level. */
  failed(pid: number, why: string): void;
}

/** The kernel's own wait between two changes by an unprivileged user. */
export const RETRY_MS = 110;
/** Tries per pane before it is given up (about 3 s at most). */
const MAX_TRIES = 30;

export const realSessionNicePorts = (failed: SessionNicePorts['failed']): SessionNicePorts => ({
  enabled: () => {
    try {
      return readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1';
    } catch {
      return false;
    }
  },
  write: (pid, nice) => writeFileSync(`/proc/${pid}/autogroup`, String(nice)),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  failed,
});

export class SessionNice {
  private readonly queue: { pid: number; nice: number; tries: number }[] = [];
  private waiting = false;
  private on: boolean | null = null;
  constructor(private readonly ports: SessionNicePorts) {}

  /** Give `pid`'s session group `nice` (0 or less: nothing; a pane already queued gets the latest). */
  set(pid: number, nice: number): void {
    if (!(pid > 0) || !(nice > 0)) return;
    this.on ??= this.ports.enabled();
    if (!this.on) return;
    const queued = this.queue.find((q) => q.pid === pid);
    if (queued) queued.nice = nice;
    else this.queue.push({ pid, nice, tries: 0 });
    if (!this.waiting) this.next();
  }

  /** How many wait for their turn. */
  get pending(): number {
    return this.queue.length;
  }

  private next(): void {
    while (this.queue.length) {
      const q = this.queue[0]!;
      try {
        q.tries++;
        this.ports.write(q.pid, q.nice);
        this.queue.shift();
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' && q.tries < MAX_TRIES) {
          this.waiting = true;
          this.ports.setTimeout(() => {
            this.waiting = false;
            this.next();
          }, RETRY_MS);
          return;
        }
        this.queue.shift();
        // Gone already (ENOENT), a kernel without it, or still refused after every try.
        this.ports.failed(q.pid, code === 'EAGAIN' ? `still refused after ${q.tries} tries` : (code ?? String(e)));
      }
    }
  }
}
