// `jaggers doctor`: what a person needs to know before (or after) something went wrong: tmux, the
// socket, jaggers.json, every profile and whether its command is found, and the supervisor.
import path from 'node:path';
import { clientFor } from '../api/connect.js';
import type { HealthView } from '../api/types.js';
import { PROJECT_FILE, type Context } from '../context.js';
import { binDir } from '../package-root.js';
import { installedVersion, type VersionReport } from '../profiles/cli-version.js';
import { checkAllProfiles, loadProfile } from '../profiles/load.js';
import type { Profile } from '../profiles/schema.js';
import { profileSignals } from '../agents/hooks-install.js';
import type { AgentSpec } from '../project/project-file.js';
import { findCommand } from '../agents/find-command.js';
import { checkTmux, describeSocket, serverRunning } from '../api/session.js';
import { knownTeam } from '../api/hint.js';

export interface DoctorReport {
  ok: boolean;
  tmux: { ok: boolean; version?: string; error?: string };
  socket: string;
  session: string;
  serverRunning: boolean;
  projectFile: string | null;
  /** jaggers.json could not be read or is invalid: the error, with the line and column or the field. */
  projectError: string | null;
  /** Every profile; `found` null: its command is not installed (`install` says how, when the profile knows). */
  profiles: {
    name: string;
    file?: string;
    error?: string;
    command?: string;
    found?: string | null;
    install?: string;
    version?: VersionReport;
    /** What its agents' states are read from, strongest first, on the installed release (issue 27). */
    signals?: string[];
  }[];
  /** The team's agents (jaggers.json, else the team an earlier `up` made) and whether each command is found. */
  agents: { agent: string; profile: string; command: string | null; found: string | null; install?: string; error?: string; version?: VersionReport }[];
  supervisor: { pid: number; uptimeMs: number; socket: string; log: string } | null;
  /** The project's workflow files (.jaggers/workflows/*.yaml) and what is wrong with each. */
  workflows: { name: string; file: string; error: string | null }[];
  /** The scheduled flows (.jaggers/flows/*.md): the file, what it runs and when, or what is wrong. */
  flows: { name: string; file: string; error: string | null; schedule: string | null }[];
}

export async function doctor(ctx: Context): Promise<DoctorReport> {
  let tmux: DoctorReport['tmux'];
  let running = false;
  try {
    const v = await checkTmux(ctx.server.bin, ctx.server.env);
    tmux = { ok: true, version: v.raw };
    running = await serverRunning(ctx.server);
  } catch (e) {
    tmux = { ok: false, error: (e as Error).message };
  }
  let projectError: string | null = null;
  let team: AgentSpec[] = [];
  try {
    team = (await ctx.project())?.agents ?? (await knownTeam(ctx));
  } catch (e) {
    projectError = (e as Error).message;
  }
  const basePath = ctx.env.PATH ?? '';
  // Each installed binary is asked its version once, all at the same time.
  const asked = new Map<string, Promise<VersionReport>>();
  const versionOf = (bin: string, profile: Profile, env: Record<string, string>) => {
    const key = `${profile.name}\0${bin}`;
    if (!asked.has(key)) asked.set(key, installedVersion(bin, profile, { ...ctx.env, ...profile.env, ...env, NO_UPDATE_NOTIFIER: '1' }));
    return asked.get(key)!;
  };
  const profiles: DoctorReport['profiles'] = await checkAllProfiles(ctx.jaggersDir);
  await Promise.all(
    profiles.map(async (p) => {
      if (p.error) return;
      const { profile } = await loadProfile(p.name, ctx.jaggersDir);
      const found = findCommand(profile.command, `${binDir}${path.delimiter}${profile.env.PATH ?? basePath}`, ctx.projectRoot);
      const version = found ? await versionOf(found, profile, {}) : null;
      Object.assign(p, {
        command: profile.command,
        found,
        ...(version ? { version } : profile.install ? { install: profile.install } : {}),
        signals: profileSignals(profile, version?.installed ?? null, ctx.jaggersDir, { ...ctx.env, ...profile.env }),
      });
    }),
  );
  const agents = await Promise.all(
    team.map(async (a) => {
      try {
        const { profile } = await loadProfile(a.profile, ctx.jaggersDir);
        const where = `${binDir}${path.delimiter}${a.env.PATH ?? profile.env.PATH ?? basePath}`;
        const found = findCommand(profile.command, where, path.resolve(ctx.projectRoot, a.cwd ?? '.'));
        return {
          agent: a.name,
          profile: a.profile,
          command: profile.command,
          found,
          ...(found ? { version: await versionOf(found, profile, a.env) } : profile.install ? { install: profile.install } : {}),
        };
      } catch (e) {
        return { agent: a.name, profile: a.profile, command: null, found: null, error: (e as Error).message };
      }
    }),
  );
  let supervisor: DoctorReport['supervisor'] = null;
  if (running) {
    const h = await clientFor(ctx)
      .call<HealthView>('GET', '/v1/health')
      .catch(() => null);
    if (h) supervisor = { pid: h.pid, uptimeMs: h.uptimeMs, socket: h.socket, log: h.log };
  }
  const { listWorkflows } = await import('../workflows/load.js');
  const workflows = (await listWorkflows(ctx.jaggersDir).catch(() => []))
    .filter((w) => w.source !== 'built-in')
    .map((w) => ({ name: w.name, file: w.source, error: w.error }));
  const { flows: listFlowViews } = await import('./flows.js');
  const flows = (await listFlowViews(ctx).catch(() => [])).map((f) => ({ name: f.name, file: f.file, error: f.problem, schedule: f.schedule }));
  const ok =
    tmux.ok &&
    !projectError &&
    profiles.every((p) => !p.error) &&
    agents.every((a) => a.found && !a.error) &&
    workflows.every((w) => !w.error) &&
    flows.every((f) => !f.error);
  return {
    ok,
    tmux,
    socket: describeSocket(ctx.server),
    session: ctx.session,
    serverRunning: running,
    projectFile: (await ctx.project().catch(() => null)) ? path.join(ctx.projectRoot, PROJECT_FILE) : null,
    projectError,
    profiles,
    agents,
    supervisor,
    workflows,
    flows,
  };
}

/** A version the rules were not checked against is worth a look, not a failure. */
const versionMark = (v: VersionReport) => (v.fit === 'newer' || v.fit === 'older' || v.fit === 'unknown' ? 'warn' : 'ok  ');

/** A profile's line: `FAIL` when it does not load, `miss` when its CLI is not installed (no failure: a CLI you do not use), else its version's mark. */
function profileLine(p: DoctorReport['profiles'][number]): string {
  if (p.error) return `FAIL profile ${p.name}: ${p.error}`;
  if (!p.found) return `miss profile ${p.name}: ${p.file} (command ${p.command}: not found on PATH${p.install ? `; install it: ${p.install}` : ''})`;
  return `${p.version ? versionMark(p.version) : 'ok  '} profile ${p.name}: ${p.file} (command ${p.command}: ${p.found})${p.version ? `, ${p.version.note}` : ''}${p.signals ? `; reads ${p.signals.join(', then ')}` : ''}`;
}

export function renderDoctor(r: DoctorReport): string {
  const mark = (ok: boolean) => (ok ? 'ok  ' : 'FAIL');
  return (
    [
      `${mark(r.tmux.ok)} tmux: ${r.tmux.version ?? r.tmux.error}`,
      `ok   socket: ${r.socket} (session ${r.session}, server ${r.serverRunning ? 'running' : 'not running'})`,
      r.projectError ? `FAIL project file: ${r.projectError}` : `ok   project file: ${r.projectFile ?? 'none (jaggers init writes one)'}`,
      ...r.profiles.map(profileLine),
      ...r.agents.map(
        (a) =>
          `${a.found && !a.error && a.version ? versionMark(a.version) : mark(!!a.found && !a.error)} agent ${a.agent}: ${a.error ?? (a.found ? `${a.command} is ${a.found}${a.version ? `, ${a.version.note}` : ''}` : `command ${JSON.stringify(a.command)} not found on its PATH: install it${a.install ? ` (${a.install})` : ''}, or fix the profile's command`)}`,
      ),
      ...r.workflows.map((w) => `${mark(!w.error)} workflow ${w.name}: ${w.error ?? w.file}`),
      ...r.flows.map((f) => `${mark(!f.error)} flow ${f.name}: ${f.error ?? `${f.file} (${f.schedule})`}`),
      r.supervisor
        ? `ok   supervisor: pid ${r.supervisor.pid}, up ${Math.round(r.supervisor.uptimeMs / 1000)} s, API ${r.supervisor.socket}, log ${r.supervisor.log}`
        : `ok   supervisor: not running${r.serverRunning ? ' (the next command starts it)' : ''}`,
    ].join('\n') + '\n'
  );
}
