// `jaggers profile check <name>`: run a profile's CLI as a one-agent team on a private tmux server (its
// own TMUX_TMPDIR and socket, its own supervisor), walk it through idle, busy and done with a short
// prompt, and report which rule decided each state, on which screen lines. For people writing a
// profile for a CLI jaggers does not ship. Everything it learns comes from that supervisor's API.
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { withApi } from '../api/connect.js';
import type { StreamEvent, TerminalDetail, TerminalView } from '../api/types.js';
import { resolveContext, type Context } from '../context.js';
import { describeQuestion } from '../describe-question.js';
import { JaggersError } from '../errors.js';
import { installedVersion, type VersionReport } from '../profiles/cli-version.js';
import { loadProfile } from '../profiles/load.js';
import { findCommand } from '../agents/find-command.js';
import { stopServer } from '../api/session.js';
import { binDir } from '../package-root.js';
import { profileSignals } from '../agents/hooks-install.js';

export interface CheckStep {
  /** Seconds since the agent's window opened. */
  at: number;
  state: string;
  rule: string | null;
  source: string;
  lines: string[];
  /** Whether evidence decided this state (a rule for it, or a state file), not only the machine's own step. */
  evidence: boolean;
  /** What the screen rules alone say of the screen at that moment (a state file may have decided). */
  screenReads: { status: string; rule: string | null };
  /** The screen saved for this step, with --capture. */
  screenFile: string | null;
}

export interface ProfileCheckReport {
  profile: string;
  file: string;
  command: string;
  found: string | null;
  version: VersionReport | null;
  /** What the agent's states are read from, strongest first, on the installed release: hooks, state file, screen. */
  signals: string[];
  cwd: string;
  prompt: string;
  steps: CheckStep[];
  /** Each state the walk needs, and the rule that showed it (null: never seen). */
  seen: { idle: string | null; busy: string | null; done: string | null };
  question: { text: string; choices: string[]; selected?: number } | null;
  problem: string | null;
  captureDir: string | null;
  ok: boolean;
}

export interface ProfileCheckOptions {
  prompt?: string;
  /** Seconds for each wait (ready, busy, done). */
  timeout?: number;
  /** Where the CLI runs (default: a new empty folder). */
  cwd?: string;
  /** Save each state's screen into this folder. */
  capture?: string;
}

const DEFAULT_PROMPT = 'Reply with one short sentence: what is 2 + 2?';

export async function profileCheck(ctx: Context, name: string, opts: ProfileCheckOptions = {}): Promise<ProfileCheckReport> {
  const { profile, file, builtin } = await loadProfile(name, ctx.jaggersDir);
  const timeout = opts.timeout ?? 60;
  const prompt = opts.prompt ?? DEFAULT_PROMPT;
  if (prompt.trim() === '' || /[\r\n]/.test(prompt))
    throw new JaggersError('E_USAGE', `profile check: --prompt must be one non-empty line, got ${JSON.stringify(prompt)}`);
  const found = findCommand(profile.command, `${binDir}${path.delimiter}${profile.env.PATH ?? ctx.env.PATH ?? ''}`, ctx.cwd);
  const version = found ? await installedVersion(found, profile, { ...ctx.env, ...profile.env, NO_UPDATE_NOTIFIER: '1' }) : null;
  const report: ProfileCheckReport = {
    profile: name,
    file,
    command: profile.command,
    found,
    version,
    signals: profileSignals(profile, version?.installed ?? null, ctx.jaggersDir, { ...ctx.env, ...profile.env }),
    cwd: '',
    prompt,
    steps: [],
    seen: { idle: null, busy: null, done: null },
    question: null,
    problem: null,
    captureDir: opts.capture ? path.resolve(ctx.cwd, opts.capture) : null,
    ok: false,
  };
  if (!found) {
    report.problem = `command ${JSON.stringify(profile.command)} is not found on PATH: install it, or fix the profile's command`;
    return report;
  }

  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'jaggers-check-')));
  const project = path.join(base, 'project');
  const cwd = opts.cwd ? path.resolve(ctx.cwd, opts.cwd) : path.join(base, 'work');
  report.cwd = cwd;
  await mkdir(path.join(project, '.jaggers', 'profiles'), { recursive: true });
  await mkdir(path.join(base, 'tmux'), { recursive: true });
  await mkdir(cwd, { recursive: true });
  if (!builtin) await copyFile(file, path.join(project, '.jaggers', 'profiles', `${name}.json`));
  await writeFile(path.join(project, 'jaggers.json'), JSON.stringify({ agents: [{ name: 'check', profile: name, cwd }] }, null, 2) + '\n');
  if (report.captureDir) await mkdir(report.captureDir, { recursive: true });

  const env: NodeJS.ProcessEnv = {
    ...ctx.env,
    TMUX_TMPDIR: path.join(base, 'tmux'),
    JAGGERS_SOCKET: `jaggers-check-${randomBytes(4).toString('hex')}`,
    JAGGERS_SESSION_NAME: 'check',
    JAGGERS_PROJECT: project,
  };
  delete env.TMUX;
  delete env.TMUX_PANE;
  const sub = await resolveContext({}, env, project, ctx.warn);
  const started = Date.now();
  const stop = new AbortController();
  try {
    const { up } = await import('./up.js');
    const opened = await up(sub, { wait: false });
    if (opened.missing.length) {
      report.problem = `command ${profile.command} could not be started`;
      return report;
    }
    await withApi(sub, async (api) => {
      // Not caught: no supervisor yet makes withApi start it and call again.
      await api.call('GET', '/v1/terminals');
      // Every state the supervisor reports, with the rule and lines that decided it (and the screen).
      let chain = Promise.resolve();
      const record = () =>
        (chain = chain.then(async () => {
          const d = await api.call<TerminalDetail>('GET', '/v1/terminals/check').catch(() => null);
          if (!d) return;
          const last = report.steps.at(-1);
          if (last && last.state === d.state && last.rule === d.rule) return;
          let screenFile: string | null = null;
          if (report.captureDir) {
            const s = await api.call<{ screen: string }>('GET', '/v1/terminals/check/screen').catch(() => null);
            if (s) {
              screenFile = path.join(report.captureDir, `${name}-${String(report.steps.length + 1).padStart(2, '0')}-${d.state}.txt`);
              await writeFile(screenFile, s.screen.trimEnd() + '\n');
            }
          }
          report.steps.push({
            at: (Date.now() - started) / 1000,
            state: d.state,
            rule: d.rule,
            source: d.source,
            lines: d.lines,
            screenReads: { status: d.now.status, rule: d.now.rule },
            evidence: false,
            screenFile,
          });
          if (d.question) report.question = d.question;
        }));
      void api.events('/v1/events?types=state&agent=check', (e: StreamEvent) => void (e.type === 'state' && record()), { signal: stop.signal }).catch(() => {});
      record();
      const wait = (states: string) => api.call<TerminalView>('GET', `/v1/terminals/check/wait?state=${states}&timeout=${timeout}`).catch((e: Error) => e);

      const ready = await wait('idle,done,waiting_input,error,exited');
      await record();
      await chain;
      if (ready instanceof Error || !['idle', 'done'].includes(ready.state)) {
        const state = ready instanceof Error ? 'not ready' : ready.state;
        report.problem =
          state === 'waiting_input'
            ? `it waits for an answer before it is ready: ${report.question ? describeQuestion(report.question) : 'a menu on screen'} (answer it once by hand, or run with --cwd in a folder it already trusts)`
            : `it did not become idle within ${timeout} s (${ready instanceof Error ? ready.message : `it is ${ready.state}`})`;
        return;
      }
      const turnsBefore = ready.turns;
      await api.call('POST', '/v1/terminals/check/input', { text: prompt });
      // The turn ends when the machine counts it, or shows done or idle after busy.
      const deadline = Date.now() + timeout * 1000;
      for (;;) {
        const left = Math.ceil((deadline - Date.now()) / 1000);
        if (left <= 0) break;
        const v = await api.call<TerminalView>('GET', `/v1/terminals/check/wait?state=done,idle,waiting_input,error,exited&timeout=${left}`).catch(() => null);
        await record();
        await chain;
        if (!v) break;
        const sawBusy = report.steps.some((s) => s.state === 'busy');
        if (v.state === 'waiting_input' || v.state === 'error' || v.state === 'exited') break;
        if (v.turns > turnsBefore || (sawBusy && report.steps.at(-1)?.state !== 'busy')) break;
        // Still idle from before the prompt: wait for the next change.
        await api.call('GET', `/v1/terminals/check/wait?state=busy,waiting_input,error,exited&timeout=${Math.min(left, 10)}`).catch(() => null);
      }
      await record();
      await chain;
    });
  } finally {
    stop.abort();
    await stopServer(sub).catch(() => {});
    await rm(base, { recursive: true, force: true }).catch(() => {});
  }
  // A state counts as seen when evidence decided it: a screen rule for that state, or a state file.
  // (The machine also goes busy when a prompt goes in, whatever the screen shows: that is not a rule firing.)
  const statusOf = new Map(profile.detect.rules.map((r) => [r.name, r.status]));
  const byEvidence = (s: CheckStep, ...states: string[]) =>
    states.includes(s.state) && (s.source !== 'screen' || (s.rule !== null && states.includes(statusOf.get(s.rule) ?? '')));
  for (const s of report.steps) s.evidence = byEvidence(s, s.state, ...(s.state === 'done' ? ['idle'] : []));
  const busyAt = report.steps.findIndex((s) => byEvidence(s, 'busy'));
  const idle = report.steps.find((s) => byEvidence(s, 'idle', 'done'));
  const after = busyAt >= 0 ? report.steps.slice(busyAt + 1).find((s) => byEvidence(s, 'done', 'idle')) : undefined;
  const named = (s: CheckStep | undefined) => (s ? (s.rule ?? `(${s.source})`) : null);
  report.seen = { idle: named(idle), busy: named(report.steps[busyAt]), done: named(after) };
  if (!report.problem) {
    const last = report.steps.at(-1);
    if (last?.state === 'waiting_input')
      report.problem = `the prompt made it ask ${report.question ? describeQuestion(report.question) : 'something'}: use a --prompt that needs no tool`;
    else if (!report.seen.busy)
      report.problem = `no busy state was seen after the prompt: no busy rule fired (rules: ${rulesFor(profile.detect.rules, 'busy')})`;
    else if (!report.seen.done)
      report.problem = `the turn did not end within ${timeout} s, or no idle or done rule fired after it (rules: ${rulesFor(profile.detect.rules, 'idle', 'done')})`;
  }
  report.ok = report.problem === null;
  return report;
}

const rulesFor = (rules: readonly { name: string; status: string; pattern: string }[], ...states: string[]) =>
  rules
    .filter((r) => states.includes(r.status))
    .map((r) => `${r.name} /${r.pattern}/`)
    .join(', ') || 'none';

export function renderProfileCheck(r: ProfileCheckReport): string {
  const out = [
    `profile ${r.profile}: ${r.file}`,
    `command ${r.command}: ${r.found ?? 'not found'}${r.version ? `, ${r.version.note}` : ''}`,
    `signals: ${r.signals.join(', then ')}`,
  ];
  if (r.cwd) out.push(`ran in ${r.cwd} on a private tmux server, prompt ${JSON.stringify(r.prompt)}`);
  for (const s of r.steps) {
    const why = s.evidence
      ? `${s.rule ? `rule ${s.rule}` : 'no rule'} (${s.source})${s.lines[0] ? `  | ${s.lines[0].trim()}` : ''}`
      : `no ${s.state} rule fired`;
    out.push(`  +${s.at.toFixed(1).padStart(5)}s  ${s.state.padEnd(13)} ${why}`);
    if (s.source !== 'screen')
      out.push(`           the screen alone reads ${s.screenReads.status}${s.screenReads.rule ? ` (rule ${s.screenReads.rule})` : ' (no rule matched)'}`);
    if (s.screenFile) out.push(`           screen: ${s.screenFile}`);
  }
  const mark = (k: 'idle' | 'busy' | 'done') => `${k} ${r.seen[k] ? `seen (${r.seen[k]})` : 'NOT seen'}`;
  out.push(`${mark('idle')}, ${mark('busy')}, ${mark('done')}`);
  if (r.question) out.push(`it asked: ${describeQuestion(r.question)}`);
  out.push(r.ok ? 'ok: the profile reads this CLI through a turn' : `FAIL: ${r.problem}`);
  return out.join('\n') + '\n';
}
