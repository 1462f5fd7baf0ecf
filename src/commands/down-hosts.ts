// `down` on the hosts `up` started agents on (docs/hosts.md): for each record in `.jaggers/hosts/`, one
// ssh run of `jaggers down` in the remote project there (its tmux server, agents and supervisor), then
// the record goes. Its own connection, so it works with the local supervisor gone too.
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from '../context.js';
import { hostRecordPath, readHostRecord } from '../hosts/record.js';
import { remoteDownArgv } from '../hosts/remote-project.js';
import { classifySshFailure, describeSshFailure, remoteCommandLine, sshArgv, sshSettings } from '../hosts/ssh.js';
import { runSsh, type SshRunner } from './hosts.js';

export interface HostDown {
  host: string;
  /** The remote project whose session was stopped. */
  root: string;
  ok: boolean;
  /** What the host's `jaggers down` said, or why it could not be run. */
  detail: string;
}

/** The hosts with a record (started by an `up`), each stopped; a host that cannot be reached keeps its record (a later `down` tries again). */
export async function downHosts(ctx: Context, run: SshRunner = runSsh): Promise<HostDown[]> {
  const names = (await readdir(path.join(ctx.jaggersDir, 'hosts')).catch(() => [] as string[]))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length));
  if (names.length === 0) return [];
  const project = await ctx.project().catch(() => null);
  const settings = sshSettings(ctx.env);
  return Promise.all(
    names.map(async (host): Promise<HostDown> => {
      const rec = await readHostRecord(ctx.jaggersDir, host);
      const spec = project?.hosts && Object.hasOwn(project.hosts, host) ? project.hosts[host] : undefined;
      if (!rec) return { host, root: '', ok: false, detail: `${hostRecordPath(ctx.jaggersDir, host)} cannot be read` };
      if (!spec)
        return {
          host,
          root: rec.root,
          ok: false,
          detail: `jaggers.json has no host ${host} any more: stop it there with \`jaggers --project ${rec.root} down\``,
        };
      const r = await run(settings.bin, sshArgv(spec, settings, remoteCommandLine(remoteDownArgv(rec.root))), ctx.env);
      const failure = classifySshFailure(r, settings.bin);
      if (failure) return { host, root: rec.root, ok: false, detail: describeSshFailure(host, spec, failure) };
      if (r.exitCode !== 0)
        return { host, root: rec.root, ok: false, detail: `\`jaggers down\` there failed (exit ${r.exitCode}): ${r.stderr.trim().slice(0, 300)}` };
      await rm(hostRecordPath(ctx.jaggersDir, host), { force: true });
      return { host, root: rec.root, ok: true, detail: r.stdout.trim() };
    }),
  );
}
