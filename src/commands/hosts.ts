// `jaggers host list` and `jaggers host check <name>` (docs/hosts.md): read-only, like doctor; the
// check runs one script over one SSH connection and lists everything missing or wrong there at once.
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { checkScript, judgeHost, parseCheckOutput, type CheckItem } from '../hosts/check.js';
import type { HostSpec } from '../hosts/schema.js';
import { classifySshFailure, describeSshFailure, remoteCommandLine, sshArgv, sshSettings } from '../hosts/ssh.js';
import { packageVersion } from '../package-root.js';
import type { ProjectFile } from '../project/project-file.js';

export interface HostView {
  name: string;
  ssh: string;
  port: number | null;
  identity: string | null;
  dir: string;
  /** The agents jaggers.json puts on it. */
  agents: string[];
}

async function hostsOf(ctx: Context): Promise<{ project: ProjectFile; hosts: Record<string, HostSpec> }> {
  const project = await ctx.project();
  if (!project) throw new JaggersError('E_PROJECT_MISSING', `no jaggers.json in ${ctx.projectRoot}: hosts are named in its \`hosts\` (docs/hosts.md)`);
  return { project, hosts: project.hosts ?? {} };
}

export async function hostList(ctx: Context): Promise<HostView[]> {
  const { project, hosts } = await hostsOf(ctx);
  return Object.entries(hosts).map(([name, h]) => ({
    name,
    ssh: h.ssh,
    port: h.port ?? null,
    identity: h.identity ?? null,
    dir: h.dir,
    agents: project.agents.filter((a) => a.host === name).map((a) => a.name),
  }));
}

export function renderHostList(hosts: HostView[]): string {
  if (hosts.length === 0) return 'no hosts in jaggers.json (docs/hosts.md)\n';
  return hosts
    .map(
      (h) =>
        `${h.name}  ${h.ssh}${h.port !== null ? ` port ${h.port}` : ''}${h.identity ? ` key ${h.identity}` : ''}  dir ${h.dir}  agents: ${h.agents.join(', ') || '(none)'}\n`,
    )
    .join('');
}

export interface HostCheckReport {
  host: string;
  ssh: string;
  port: number | null;
  ok: boolean;
  items: CheckItem[];
}

/** Run `ssh` once: what it printed and how it ended (a binary that did not start is `spawnError`). */
export type SshRunner = (
  bin: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
) => Promise<{ exitCode: number | null; stdout: string; stderr: string; spawnError: string | null }>;

export const runSsh: SshRunner = async (bin, argv, env) => {
  const { execa } = await import('execa');
  const r = await execa(bin, argv, { env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 60_000, stripFinalNewline: false });
  const errno = (r as { code?: string }).code;
  const spawnError = errno === 'ENOENT' || (r.failed && r.exitCode === undefined) ? String(errno ?? r.message) : null;
  return { exitCode: r.exitCode ?? null, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), spawnError };
};

export async function hostCheck(ctx: Context, name: string, run: SshRunner = runSsh): Promise<HostCheckReport> {
  const { project, hosts } = await hostsOf(ctx);
  if (!Object.hasOwn(hosts, name)) {
    const known = Object.keys(hosts);
    throw new JaggersError(
      'E_HOST_UNKNOWN',
      `no host ${JSON.stringify(name)} in jaggers.json: ${known.length ? `its hosts are ${known.join(', ')}` : 'it has no `hosts`'}`,
    );
  }
  const host = hosts[name]!;
  const items: CheckItem[] = [];
  // The commands its agents' CLIs run, from their profiles (read here: the host needs the same CLIs).
  const commands = new Set<string>();
  const { loadProfile } = await import('../profiles/load.js');
  for (const a of project.agents.filter((x) => x.host === name)) {
    try {
      commands.add((await loadProfile(a.profile, ctx.jaggersDir)).profile.command);
    } catch (e) {
      items.push({ what: `agent ${a.name}`, ok: false, detail: (e as Error).message });
    }
  }
  const settings = sshSettings(ctx.env);
  const script = checkScript({ dir: host.dir, commands: [...commands] });
  const r = await run(settings.bin, sshArgv(host, settings, remoteCommandLine(['sh', '-c', script])), ctx.env);
  const failure = classifySshFailure(r, settings.bin);
  const facts = failure ? null : parseCheckOutput(r.stdout);
  const base = { host: name, ssh: host.ssh, port: host.port ?? null };
  if (failure) items.unshift({ what: 'ssh', ok: false, detail: describeSshFailure(name, host, failure) });
  else if (!facts) {
    const said = r.stderr.trim().split('\n').pop() ?? '';
    items.unshift({
      what: 'ssh',
      ok: false,
      detail: `host ${name} (${host.ssh}): logged in, but the check did not answer (exit ${r.exitCode}${said ? `: ${said.slice(0, 300)}` : ''}); is the login shell there a POSIX shell?`,
    });
  } else items.unshift(...judgeHost(facts, packageVersion(), ` on ${host.ssh}${host.port !== undefined ? ` port ${host.port}` : ''}`));
  return { ...base, ok: items.every((i) => i.ok), items };
}

export function renderHostCheck(r: HostCheckReport): string {
  const bad = r.items.filter((i) => !i.ok).length;
  return (
    r.items.map((i) => `${i.ok ? 'ok  ' : 'FAIL'} ${i.what}: ${i.detail}\n`).join('') +
    (bad ? `host ${r.host}: ${bad} problem${bad === 1 ? '' : 's'}\n` : `host ${r.host}: ready\n`)
  );
}
