// A headless work item (`handoff --headless`, a workflow's headless step): the agent's CLI runs once in
// its pinned conversation, outside its pane, by phases each journaled before the next:
//   prepare  queued -> starting   the handover file and the nonce
//   launch   starting -> running  the pane's TUI stopped (a placeholder holds the pane), the CLI started
//                                  detached under a small shell that writes its output and exit status
//                                  to .jaggers/work/<id>/<attempt>.{out,err,status}
//   await    running              the status file appears (a file event)
//   record   running -> done      the TUI resumed in its pane, the reply artifact, the item's end
// The CLI outlives a supervisor killed meanwhile and still leaves its output; the next supervisor waits
// for that status file instead of running the turn again.
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { rename } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_LIMIT_WAIT_MS } from '../../machines/terminal.machine.js';
import { headlessLimit } from '../clis/shared/headless-limit.js';
import { regexOf } from '../detect/classify.js';
import { readReset } from '../detect/limit.js';
import { makeNonce, sanitizeText } from '../delivery/sanitize.js';
import { JaggersError } from '../errors.js';
import { readConfinedText, RUN_FOLDERS } from '../fs/confine.js';
import { writeFileAtomic } from '../fs/durable.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import type { Profile } from '../profiles/schema.js';
import { isFinal, type JobRecord } from '../sessions/registry.js';
import { writeReply, type TurnParty } from '../turns/artifacts.js';
import { headlessArgv, headlessResult, IN_USE, type AgentLaunch, type HeadlessArgv, type HeadlessPane } from '../turns/headless.js';
import { pointerFor, prepareTurn, type PreparedTurn, type TurnEnv, type TurnTarget } from '../turns/turn.js';
import type { WorkJournal } from './journal.js';
import type { Outcomes } from './outcomes.js';
import type { TerminalEntry } from './ports.js';
import { cutByLimit, type LimitNow } from './limit-wait.js';
import { DEFAULT_JOB_TIMEOUT_S, fromOf, labelOf, preparedOf } from './run-turn.js';
import { turnUsageEvents, type UsageSource } from './usage.js';

export interface HeadlessRunPorts {
  env: TurnEnv;
  journal: WorkJournal;
  outcomes: Outcomes;
  /** The agent's profile, from its terminal's record (a headless item may have no pane to read it from). */
  profile(name: string): Promise<Profile>;
  /** How the agent's CLI runs outside its pane: environment, extra arguments, folder. */
  launch(terminalId: string, task: string): Promise<AgentLaunch>;
  /** The agent's live pane, to stop and resume around the run; null when it has none. */
  pane(e: TerminalEntry, target: TurnTarget): HeadlessPane | null;
  /** The tokens a session spent, from its CLI's records: the run's usage is recorded with its end (docs/usage.md). */
  usage?: UsageSource;
  /** The usage limit the pane's machine read (state `limited`): a run a limit stopped waits for its reset (docs/limits.md). */
  limit?(paneId: string): LimitNow | null | undefined;
}

/** What a run was started with, kept beside its output so a later supervisor reads it the same way. */
interface Attempt extends HeadlessArgv {
  n: number;
  sessionId: string | null;
  replyFile: string;
}

const workDir = (jaggersDir: string, id: string) => path.join(jaggersDir, 'work', id);

export async function runHeadless(p: HeadlessRunPorts, given: JobRecord, e: TerminalEntry | undefined, signal: AbortSignal): Promise<void> {
  const { env, journal } = p;
  let j = journal.data.jobs[given.id] ?? given;
  if (isFinal(j.state)) return;
  const label = `${labelOf(j)} (headless)`;
  const terminalId = j.terminalId!;
  const outcome = p.outcomes.get(j.id) ?? p.outcomes.start(j.id);
  const terminal = journal.data.terminals[terminalId];
  const dir = workDir(env.jaggersDir, j.id);
  let pane: HeadlessPane | null = null;
  let sessionId: string | null = terminal?.sessionId ?? null;
  let conversation = (terminal?.turns ?? 0) > 0;
  let stopped = false;
  /** The environment the CLI ran with (its HOME, CODEX_HOME...), for its usage; a run followed again after a restart has the supervisor's. */
  let launchEnv: Record<string, string> | undefined;
  try {
    if (!terminal) throw new JaggersError('E_AGENT_UNKNOWN', `${label}: no terminal ${terminalId} in the registry`);
    const profile = e?.profile ?? (await p.profile(terminal.profile));
    const live = e && !e.pane.dead && env.watch.status(e.pane.paneId) !== 'exited' ? e : undefined;
    const target: TurnTarget = { paneId: live?.pane.paneId ?? terminalId, agent: terminal.agent, terminalId, profile, pid: null };
    pane = live ? p.pane(live, target) : null;
    const pinned = terminal.sessionId;
    if (!pinned && !profile.session.headlessIdFrom)
      throw new JaggersError('E_NOT_PINNED', `${label}: agent ${terminal.agent} (${terminalId}) has no pinned session yet`);
    const from = fromOf(j);
    let prepared: PreparedTurn;
    if (j.state === 'queued') {
      const payload = await readConfinedText(env, j.prompt, `${label}: its prompt`);
      const id = j.id;
      const workflow = j.workflow === 'handoff' || !j.workflow ? 'headless' : j.workflow;
      prepared = await prepareTurn(env, target, { task: j.task ?? j.id, workflow, payload, from }, (pr, d) => {
        const cur = d.jobs[id];
        if (!cur || isFinal(cur.state)) return [];
        const reason = `starting ${profile.command} headless in ${terminal.agent}'s conversation`;
        return [
          {
            type: 'job-state',
            jobId: id,
            state: 'starting',
            reason,
            agent: terminal.agent,
            nonce: pr.nonce,
            artifact: path.relative(env.projectRoot, pr.prompt.artifact),
            turn: pr.prompt.turn,
          },
        ];
      });
      const now = await journal.after(j.id);
      if (!now || now.state !== 'starting') return;
      j = now;
    } else {
      prepared = await preparedOf(env, j, target, terminal.cwd || env.projectRoot);
    }
    const pointer = sanitizeText(pointerFor(target, prepared.prompt, prepared.nonce || makeNonce()));
    outcome.pointer = pointer;
    const first = !pinned || terminal.turns === 0;
    await ensurePrivateFolder(path.dirname(dir));
    await ensurePrivateFolder(dir);
    let attempt = await lastAttempt(dir);
    if (j.state === 'starting') {
      await pane?.stop();
      stopped = true;
      if (!attempt || (await readRunFile(dir, `${attempt.n}.pid`)) === null) {
        const launch = await p.launch(terminalId, j.task ?? j.id);
        launchEnv = launch.env;
        attempt = await start(dir, 1, profile, launch, { sessionId: pinned, first, prompt: pointer, label });
      }
      const pid = Number((await readRunFile(dir, `${attempt.n}.pid`)) ?? '0') || undefined;
      j = (await journal.change(j.id, 'running', `${profile.command} runs headless (pid ${pid ?? '?'})`, pid ? { pid } : {})) ?? j;
      outcome.delivery = { kind: 'headless', submits: 0, evidence: null, ms: performance.now() - outcome.t0 };
      env.emit({
        phase: 'delivered',
        agent: terminal.agent,
        terminalId,
        task: j.task ?? j.id,
        turn: prepared.prompt.turn,
        artifact: prepared.prompt.artifact,
        job: j.id,
      });
    } else {
      // Followed again after a restart: the pane still holds the placeholder.
      pane?.hold();
      stopped = true;
    }
    if (!attempt) throw new JaggersError('E_TURN_FAILED', `${label}: the headless run left no record in ${dir}; run it again`);
    const limitRules = profile.detect.rules.filter((r) => r.status === 'limited').map((r) => regexOf(r.pattern));
    /**
     * The run stopped at a usage or rate limit (`lines`, docs/limits.md): the pane's TUI comes back, the agent
     * is `limited` with the reset time the lines give, and the item waits for it (its run's files are kept
     * aside, so the next run starts anew).
     */
    const limited = async (lines: string[]): Promise<void> => {
      if (stopped) await pane?.resume(sessionId, conversation);
      stopped = false;
      env.watch.limitSeen?.(target.paneId, lines, 'headless');
      const now = Date.now();
      const r = readReset(lines, now);
      const seen = (live && p.limit?.(target.paneId)) || { resetAt: r.resetAt, until: r.resetAt ?? now + DEFAULT_LIMIT_WAIT_MS, said: r.said };
      env.log.info({ job: j.id, agent: terminal.agent, limit: lines }, 'headless run stopped at a usage limit; the item waits for the reset');
      const after = await cutByLimit(journal, j, terminal.agent, lines, seen);
      await rename(dir, `${dir}-cut${after?.limited?.cuts ?? (j.limited?.cuts ?? 0) + 1}`).catch((e: Error) =>
        env.log.warn({ job: j.id, err: e.message }, "could not keep the limited run's files aside"),
      );
    };
    if (isFinal(j.state) || signal.aborted) return;
    const since = Date.parse(j.history.findLast((h) => h.state === 'running')?.at ?? new Date().toISOString());
    const deadline = since + (j.timeoutMs ?? DEFAULT_JOB_TIMEOUT_S * 1000);
    for (;;) {
      const status = await waitForStatus(dir, attempt.n, deadline, signal);
      if (status === 'stopped') return;
      // What the CLI wrote (its output, errors and reply) is read as any file an agent made: confined.
      const written = (name: string) => readConfinedText(env, path.join(dir, name), `${label}: ${profile.command}'s ${name}`, { folders: RUN_FOLDERS });
      const out = await written(`${attempt.n}.out`).catch(() => '');
      const err = await written(`${attempt.n}.err`).catch(() => '');
      if (status === 'timeout')
        throw new JaggersError('E_TIMEOUT', `${label}: ${profile.command} did not finish within ${Math.round((deadline - since) / 1000)} s`);
      if (status === 'vanished')
        throw new JaggersError('E_TURN_FAILED', `${label}: ${profile.command}'s run ended without an exit status (killed?); its output is in ${dir}`);
      if (status !== 0) {
        const lines = headlessLimit({ stdout: out, stderr: err, status, rules: limitRules, at: Date.now() });
        if (lines) return await limited(lines);
      }
      if (status !== 0 && attempt.first && attempt.n === 1 && pinned && IN_USE.test(err)) {
        // Its session exists already (someone talked in the pane): a later turn's arguments.
        const launch = await p.launch(terminalId, j.task ?? j.id);
        launchEnv = launch.env;
        attempt = await start(dir, 2, profile, launch, { sessionId: pinned, first: false, prompt: pointer, label });
        continue;
      }
      if (status !== 0) throw new JaggersError('E_FILE', `${label}: ${profile.command} exited ${status}: ${err.trim().slice(-500)}`);
      const fileText = attempt.usesFile ? await written(path.basename(attempt.replyFile)).catch(() => null) : null;
      const ran = headlessResult(profile, { stdout: out, fileText, usesFile: attempt.usesFile, sessionId: attempt.sessionId });
      conversation = true;
      if (!pinned && ran.sessionId) {
        const sid = ran.sessionId;
        await env.registry.update((d) => ({
          events: d.terminals[terminalId]?.sessionId ? [] : [{ type: 'session-pinned' as const, terminalId, sessionId: sid, how: 'discovered' as const }],
          result: null,
        }));
        env.log.info({ agent: terminal.agent, session: sid }, 'pinned the session the first headless turn made');
      }
      sessionId = ran.sessionId ?? sessionId;
      const cut = headlessLimit({ stdout: out, stderr: err, status, rules: limitRules, at: Date.now(), reply: ran.text });
      if (cut) return await limited(cut);
      if (stopped) await pane?.resume(sessionId, conversation);
      stopped = false;
      const party: TurnParty = { agent: terminal.agent, terminalId };
      const id = j.id;
      const replyArtifact = await writeReply(
        env.registry,
        { jaggersDir: env.jaggersDir, projectRoot: env.projectRoot },
        {
          prompt: prepared.prompt,
          target: party,
          from,
          text: ran.text,
          sessionId,
          extra: async (file, d) => {
            const cur = d.jobs[id];
            if (!cur || isFinal(cur.state)) return [];
            const done = { ...cur, state: 'done' as const, reason: 'the headless run finished', reply: path.relative(env.projectRoot, file) };
            const usage = await turnUsageEvents(p.usage, d, {
              job: cur,
              terminalId,
              agent: terminal.agent,
              profile,
              pid: null,
              ...(launchEnv ? { env: launchEnv } : {}),
              sessionId,
            });
            return [
              ...usage,
              { type: 'job-state', jobId: id, state: 'done', reason: done.reason, reply: done.reply },
              ...(await journal.resultEvents(d, done, ran.text)),
            ];
          },
        },
      );
      outcome.replyMs = performance.now() - outcome.t0;
      outcome.confirmedBy = 'headless';
      outcome.replyFrom = 'headless';
      await journal.after(j.id);
      env.emit({
        phase: 'done',
        agent: terminal.agent,
        terminalId,
        task: j.task ?? j.id,
        turn: prepared.prompt.turn,
        artifact: prepared.prompt.artifact,
        reply: replyArtifact,
        job: j.id,
      });
      return;
    }
  } catch (err) {
    if (signal.aborted) return;
    const x = err as JaggersError;
    const code = typeof x.code === 'string' && /^E_[A-Z_]+$/.test(x.code) ? x.code : 'E_TURN_FAILED';
    env.log.warn({ item: j.id, err: x.message }, 'headless turn failed');
    await journal.change(j.id, 'failed', `${x.message}${j.artifact ? `; the handover file stays at ${j.artifact}` : ''}`, { code });
  } finally {
    if (stopped && !signal.aborted)
      await pane
        ?.resume(sessionId, conversation)
        .catch((err: Error) => env.log.error({ err: err.message }, 'could not start the agent again in its pane after a headless turn'));
  }
}

/**
 * A small file of the run's own (its pid, exit status, attempt) as text, or null when it is missing or is
 * not such a file: read like every file in .jaggers/ an agent could reach (no link followed, a FIFO put
 * there never waited on, the size bounded).
 */
async function readRunFile(dir: string, name: string): Promise<string | null> {
  const jaggersDir = path.dirname(path.dirname(dir));
  const dirs = { projectRoot: path.dirname(jaggersDir), jaggersDir };
  return readConfinedText(dirs, path.join(dir, name), `headless run ${path.basename(dir)}: ${name}`, { max: RUN_FILE_MAX, folders: RUN_FOLDERS }).catch(
    () => null,
  );
}

const RUN_FILE_MAX = 64 * 1024;

async function exists(dir: string, name: string): Promise<boolean> {
  return (await readRunFile(dir, name)) !== null;
}

async function lastAttempt(dir: string): Promise<Attempt | null> {
  for (const n of [2, 1]) {
    const text = await readRunFile(dir, `${n}.json`);
    if (!text) continue;
    try {
      return JSON.parse(text) as Attempt;
    } catch {
      // Cut short by a crash while it was written: the attempt before it, or none.
    }
  }
  return null;
}

// The shell that runs the CLI: it writes its own pid first, then the CLI's output, then the exit status
// (each file complete before it appears: written aside and renamed).
const WRAPPER = [
  'dir=$1; n=$2; shift 2',
  'echo $$ > "$dir/$n.pid.tmp" && mv "$dir/$n.pid.tmp" "$dir/$n.pid"',
  '"$@" < /dev/null > "$dir/$n.out" 2> "$dir/$n.err"',
  'code=$?',
  'echo $code > "$dir/$n.status.tmp" && mv "$dir/$n.status.tmp" "$dir/$n.status"',
].join('\n');

async function start(
  dir: string,
  n: number,
  profile: Profile,
  launch: AgentLaunch,
  o: { sessionId: string | null; first: boolean; prompt: string; label: string },
): Promise<Attempt> {
  const replyFile = path.join(dir, `${n}.reply`);
  const argv = headlessArgv(profile, launch, { ...o, replyFile });
  const attempt: Attempt = { ...argv, n, sessionId: o.sessionId, replyFile };
  await writeFileAtomic(path.join(dir, `${n}.json`), JSON.stringify(attempt), { sync: false });
  const child = spawn('sh', ['-c', WRAPPER, 'jaggers-headless', dir, String(n), ...(launch.before ?? []), argv.command, ...argv.args], {
    cwd: launch.cwd,
    env: launch.env,
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => {
      if (child.pid) launch.started?.(child.pid);
      resolve();
    });
    child.once('error', (e) => reject(new JaggersError('E_FILE', `${o.label}: cannot start sh for ${profile.command}: ${e.message}`)));
  });
  // Its pid file, written first thing by the shell, tells a later supervisor the run started.
  await waitForFile(dir, `${n}.pid`, 10_000);
  return attempt;
}

function waitForFile(dir: string, name: string, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (v: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      w.close();
      resolve(v);
    };
    const w = watch(dir, (_e, f) => {
      if (f?.toString() === name) void exists(dir, name).then((x) => x && finish(true));
    });
    const timer = setTimeout(() => finish(false), ms);
    void exists(dir, name).then((x) => x && finish(true));
  });
}

/**
 * The run's exit status once its status file appears (a file event, not a poll), `timeout` at the
 * deadline (its process group is killed), `vanished` when its shell is gone without one, `stopped` when
 * the supervisor stops or the item is cancelled (the run is left alone or killed by the canceller).
 */
async function waitForStatus(dir: string, n: number, deadline: number, signal: AbortSignal): Promise<number | 'timeout' | 'vanished' | 'stopped'> {
  const statusFile = path.join(dir, `${n}.status`);
  const pid = Number((await readRunFile(dir, `${n}.pid`)) ?? '0');
  const read = async () => {
    const t = await readRunFile(dir, path.basename(statusFile));
    return t === null ? null : Number(t.trim());
  };
  return new Promise((resolve) => {
    let done = false;
    const finish = (v: number | 'timeout' | 'vanished' | 'stopped') => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearInterval(alive);
      w.close();
      signal.removeEventListener('abort', stop);
      resolve(v);
    };
    const check = () => void read().then((s) => s !== null && finish(Number.isNaN(s) ? 1 : s));
    const w = watch(dir, (_e, f) => {
      if (f?.toString() === `${n}.status`) check();
    });
    const timer = setTimeout(
      () => {
        if (pid > 0) killGroup(pid);
        finish('timeout');
      },
      Math.max(0, deadline - Date.now()),
    );
    // The shell is not this process's child after a restart: a look every 5 s says whether it still lives
    // (only while a run is followed; its status file ends the wait as soon as it appears).
    const alive = setInterval(() => {
      if (pid > 0 && !isAlive(pid)) void read().then((s) => finish(s === null ? 'vanished' : Number.isNaN(s) ? 1 : s));
    }, 5000);
    const stop = () => finish('stopped');
    signal.addEventListener('abort', stop, { once: true });
    check();
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Kill a headless run's process group (its shell leads it: spawned detached). */
export function killGroup(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGTERM');
    } catch {
      // gone already
    }
  }
}
