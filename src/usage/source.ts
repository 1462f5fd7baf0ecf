// The supervisor's UsageSource: a session's usage from its CLI's records, found under the HOME (and
// CODEX_HOME...) the agent's process runs with, read from /proc once per pid. Timings of the last reads
// are kept for `scripts/bench-usage.mjs`.
import os from 'node:os';
import { USAGE_READERS } from '../clis/kinds.js';
import { envOfPid } from '../panes/process-home.js';
import type { UsageSource } from '../work/usage.js';

export function usageSource(): UsageSource {
  const envs = new Map<number, Readonly<Record<string, string | undefined>>>();
  const envFor = async (pid: number | null, given?: Readonly<Record<string, string | undefined>>) => {
    if (given) return given;
    if (!pid) return process.env;
    let env = envs.get(pid);
    if (!env) {
      env = (await envOfPid(pid)) ?? process.env;
      if (envs.size > 1000) envs.clear();
      envs.set(pid, env);
    }
    return env;
  };
  return {
    async read(w) {
      const kind = w.profile.session.usage;
      const read = kind === undefined ? undefined : USAGE_READERS[kind];
      if (!read) return null;
      const env = await envFor(w.pid, w.env);
      return read({ home: env.HOME || os.homedir(), cwd: w.cwd, sessionId: w.sessionId, env });
    },
  };
}
