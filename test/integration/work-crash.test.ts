// Every kind of work item through supervisor crashes: handoffs, sends, jobs, messages, a workflow's turns
// and a flow's runs, to four agents at once, while the supervisor is killed with kill -9 at random moments.
// Each item recorded reaches its agent exactly once, each terminal gets its items in its queue's order,
// every item ends done, and every handoff (in flight at a kill or not) ends done with its reply
// recorded and returned to its caller. The ground truth is what the fake agents received (their
// FAKE_AGENT_PROMPTS logs), checked by `checkWork` (which can fail: see test/unit/work-check.test.ts).
//
// JG_WORK_CRASH_KILLS sets the number of kills; JG_WORK_CRASH_SEED replays a run's choices (it is printed).
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withApi } from '../../src/api/connect.js';
import type { HandoffResult, HealthView, InputResult, JobView, MessageView, TaskView } from '../../src/api/types.js';
import { resolveContext, type Context } from '../../src/context.js';
import { JaggersError } from '../../src/errors.js';
import { api, explained, fakeTurns, waitPidGone } from '../helpers/api.js';
import { execa } from 'execa';
import { packageRoot } from '../../src/package-root.js';
import { existsSync } from 'node:fs';
import { whenDirSays } from '../helpers/dir-watch.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';
import { seededRandom } from '../helpers/seeded.js';
import { checkWork, workProblems, type WorkItemSeen } from '../helpers/work-check.js';

const KILLS = Number(process.env.JG_WORK_CRASH_KILLS ?? 5);
const SEED = Number(process.env.JG_WORK_CRASH_SEED ?? randomBytes(4).readUInt32LE());
const AGENTS = ['a0', 'a1', 'a2', 'a3'];
/** Items of each kind per agent, made one after the other by that agent's client. */
const PER_AGENT = Number(process.env.JG_WORK_CRASH_ITEMS ?? 8);
const SETTLE_TIMEOUT_MS = 180_000;

const hex = (n: number) => randomBytes(n).toString('hex');
const supervisorDown = (e: unknown) => e instanceof JaggersError && (e.code === 'E_SUPERVISOR_DOWN' || e.code === 'E_SUPERVISOR_START');

interface JournalLine {
  type: string;
  jobId?: string;
  messageId?: string;
  state?: string;
  [k: string]: unknown;
}

describe('work items through supervisor crashes', () => {
  let rig: Rig;
  let promptsDir: string;
  beforeEach(async () => {
    rig = await Rig.create();
    promptsDir = path.join(rig.root, 'prompts');
    await mkdir(promptsDir);
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '250', '--replies', 'receipt']);
    await writeProject(rig.root, {
      agents: AGENTS.map((name) => ({ name, profile: 'fake', env: { FAKE_AGENT_PROMPTS: path.join(promptsDir, `${name}.jsonl`) } })),
    });
  });
  afterEach(async () => rig.cleanup());

  const journal = async (): Promise<JournalLine[]> =>
    (await readFile(path.join(rig.root, '.jaggers', 'events.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as JournalLine);

  const prompts = async () => {
    const out: { agent: string; prompt: string }[] = [];
    for (const f of (await readdir(promptsDir)).filter((x) => x.endsWith('.jsonl')).sort()) {
      const text = await readFile(path.join(promptsDir, f), 'utf8');
      for (const l of text
        .slice(0, text.lastIndexOf('\n') + 1)
        .split('\n')
        .filter(Boolean)) {
        const p = JSON.parse(l) as { agent: string; prompt: string };
        out.push({ agent: p.agent, prompt: p.prompt });
      }
    }
    return out;
  };

  it(`handoffs, sends, jobs, messages, workflow turns and flow runs, the supervisor killed ${KILLS} times at random moments: each item once, in queue order, handoffs done with their replies`, async () => {
    const rand = seededRandom(SEED);
    expect((await rig.run(['up'])).code).toBe(0);
    const ctx: Context = await resolveContext({}, rig.env, rig.root);
    // A request the supervisor dropped (it was killed) is sent again with the same id, as the commands do.
    const call = async <T>(method: string, url: string, body: unknown): Promise<T> => {
      for (let tries = 1; ; tries++) {
        try {
          return await withApi(ctx, (c) => c.call<T>(method, url, body), { readOnly: true });
        } catch (e) {
          if (!supervisorDown(e) || tries >= 20) throw e;
        }
      }
    };

    // A workflow task (its turns are items of the task's own windows) and a flow every 3 s for a3.
    const task = await call<TaskView>('POST', '/v1/tasks', {
      id: `crash-${hex(3)}`,
      workflow: 'collaborative',
      text: 'crash test',
      agents: ['a0', 'a1'],
      detached: true,
    });
    const flow = await rig.run(['flow', 'add', 'tick', '--schedule', '*/3 * * * * *', '--agent', 'a3', '--prompt', 'a flow run']);
    expect(flow.code, flow.stderr).toBe(0);

    // Each agent's client: items of every kind, one after the other, in a random order.
    const handoffs: { id: string; agent: string; result: HandoffResult }[] = [];
    let made = 0;
    const client = async (agent: string) => {
      const kinds = Array.from({ length: PER_AGENT }, (_, k) => ['handoff', 'send', 'job', 'message'][k % 4]!).sort(() => rand() - 0.5);
      for (const [n, kind] of kinds.entries()) {
        const tag = `${agent} ${kind} #${n} ${hex(3)}`;
        if (kind === 'handoff') {
          const id = `j-${hex(6)}`;
          const result = await call<HandoffResult>('POST', '/v1/handoffs', { id, agent, message: tag, timeout: 120 });
          handoffs.push({ id, agent, result });
        } else if (kind === 'send') {
          await call<InputResult>('POST', `/v1/terminals/${agent}/input`, { id: `j-${hex(6)}`, text: tag });
        } else if (kind === 'job') {
          await call<JobView>('POST', '/v1/jobs', { id: `j-${hex(6)}`, target: agent, text: tag });
        } else {
          await call<MessageView>('POST', '/v1/messages', { id: `m-${hex(6)}`, to: agent, text: tag });
        }
        made++;
      }
    };

    const health = () => explained(rig, 'GET /v1/health', () => withApi(ctx, (c) => c.call<HealthView>('GET', '/v1/health'), { readOnly: true }));
    const kills: number[] = [];
    const killer = async () => {
      for (let k = 0; k < KILLS; k++) {
        // A random moment while the clients work: after some of their items, plus a random delay.
        const after = Math.floor(((k + rand()) / KILLS) * AGENTS.length * PER_AGENT * 0.8);
        await whenDirSays(
          promptsDir,
          () => made,
          (n) => n >= after,
          { timeoutMs: SETTLE_TIMEOUT_MS, what: `${after} items made` },
        );
        if (k % 3 !== 2) {
          // Right as an agent takes a prompt: the supervisor may not have recorded that it went in yet
          // (the moment a wrong guess would type it twice).
          const seen = (await prompts()).length;
          await whenDirSays(
            promptsDir,
            async () => (await prompts()).length,
            (n) => n > seen,
            { timeoutMs: SETTLE_TIMEOUT_MS, what: 'the next prompt taken' },
          );
          await new Promise((r) => setTimeout(r, Math.floor(rand() * 20)));
        } else await new Promise((r) => setTimeout(r, Math.floor(rand() * 1500))); // a random moment, not a wait for a state
        const { pid } = await health();
        process.kill(pid, 'SIGKILL');
        kills.push(pid);
        await waitPidGone(pid);
        expect((await health()).pid).not.toBe(pid);
      }
    };
    await Promise.all([Promise.all(AGENTS.map(client)), killer()]);
    expect(kills).toHaveLength(KILLS);
    // The task ends, the flow stops; then every item recorded ends.
    const taskEnd = await withApi(ctx, (c) => c.call<TaskView>('GET', `/v1/tasks/${task.id}/wait?timeout=120`), { readOnly: true });
    expect(taskEnd.status, taskEnd.reason ?? '').toBe('done');
    expect((await rig.run(['flow', 'disable', 'tick'])).code).toBe(0);
    const ended = async () => {
      const lines = await journal();
      const open = new Set<string>();
      for (const e of lines) {
        if (e.type === 'job-created') open.add(e.jobId!);
        if (e.type === 'message-created') open.add(e.messageId!);
        if (e.type === 'job-state' && ['done', 'failed', 'cancelled'].includes(e.state!)) open.delete(e.jobId!);
        if (e.type === 'message-delivered') open.delete(e.messageId!);
      }
      return open.size;
    };
    await whenDirSays(path.join(rig.root, '.jaggers'), ended, (n) => n === 0, { timeoutMs: SETTLE_TIMEOUT_MS, what: 'every item ended' });

    // What was recorded: every item, its kind, terminal, place, state, and what its prompt carries.
    const lines = await journal();
    const items = new Map<string, WorkItemSeen & { state: string; reply: string | null }>();
    const texts = new Map<string, string>();
    for (const e of lines) {
      if (e.type === 'job-created') {
        const prompt = await readFile(path.join(rig.root, String(e.prompt)), 'utf8');
        texts.set(e.jobId!, prompt);
        items.set(e.jobId!, {
          id: e.jobId!,
          kind: (e.work as WorkItemSeen['kind']) ?? 'job',
          terminalId: String(e.terminalId),
          agent: String(e.target),
          seq: 0,
          key: '',
          state: 'queued',
          reply: null,
        });
      } else if (e.type === 'message-created') {
        items.set(e.messageId!, {
          id: e.messageId!,
          kind: 'message',
          terminalId: String(e.to),
          agent: String(e.toAgent),
          seq: 0,
          key: String(e.file),
          state: 'pending',
          reply: null,
        });
      } else if (e.type === 'job-state') {
        const i = items.get(e.jobId!)!;
        i.state = e.state!;
        if (typeof e.artifact === 'string') i.key = e.artifact;
        if (typeof e.agent === 'string') i.agent = e.agent.replace(/\+.*$/, '');
        if (typeof e.reply === 'string') i.reply = e.reply;
      } else if (e.type === 'message-delivered') items.get(e.messageId!)!.state = 'done';
    }
    // Places in the one order (jobs and messages alike), as the reducer gives them.
    let seq = 0;
    for (const e of lines) if (e.type === 'job-created' || e.type === 'message-created') items.get((e.jobId ?? e.messageId)!)!.seq = ++seq;
    for (const i of items.values()) if (i.kind === 'send') i.key = texts.get(i.id)!;
    // An item that never started carries no file yet: nothing matches it.
    for (const i of items.values()) if (!i.key) i.key = `(${i.id} never went in)`;
    const all = [...items.values()];
    const kinds = new Set(all.map((i) => i.kind));
    expect([...kinds].sort()).toEqual(['flow', 'handoff', 'job', 'message', 'send', 'turn']);

    const got = await prompts();
    const verdict = checkWork(all, got);
    const problems = workProblems(verdict);
    // How the kills fell: items found gone in by the next supervisor, typed again, messages claimed again.
    const reasons = lines.filter((e) => e.type === 'job-state').map((e) => String(e.reason));
    const claims = new Map<string, number>();
    for (const e of lines) if (e.type === 'message-claimed') claims.set(e.messageId!, (claims.get(e.messageId!) ?? 0) + 1);
    console.info(
      `work-crash seed=${SEED}: ${all.length} items (${[...kinds].map((k) => `${k} ${all.filter((i) => i.kind === k).length}`).join(', ')}), ` +
        `${KILLS} kills, ${got.length} prompts received; found gone in after a restart: ${reasons.filter((r) => /before the supervisor restarted/.test(r)).length}, ` +
        `typed again: ${reasons.filter((r) => /again \(the last try left no trace\)/.test(r)).length}, messages claimed again: ${[...claims.values()].filter((n) => n > 1).length}`,
    );
    // A failure names what the journal says of each item it is about (to read the kills' effect from).
    const historyOf = (id: string) =>
      lines
        .filter((e) => e.jobId === id || e.messageId === id)
        .map((e) => `  ${e.ts} ${e.type} ${e.state ?? ''} ${e.nonce ?? ''} ${e.artifact ?? ''} ${e.reason ?? ''}`)
        .join('\n');
    const about = [...verdict.lost, ...verdict.doubled.map((d) => d.id), ...verdict.misrouted.map((m) => m.id)];
    expect(problems.slice(0, 30), `${problems.length} problems (seed ${SEED})\n${about.map((id) => `${id}:\n${historyOf(id)}`).join('\n')}`).toEqual([]);
    expect(all.filter((i) => i.state !== 'done').map((i) => `${i.id} ${i.kind} ${i.state}`)).toEqual([]);
    // Every handoff: done with its reply recorded, and its caller got that reply.
    for (const h of handoffs) {
      const rec = items.get(h.id)!;
      expect(rec.reply, h.id).not.toBeNull();
      expect(h.result.reply?.artifact, h.id).toBe(path.join(rig.root, rec.reply!));
    }
    expect(handoffs.length).toBeGreaterThan(0);
    expect(got).toHaveLength(all.length);
  }, 400_000);

  it('a headless handoff in flight when the supervisor is killed: the next one waits for the run it left and records its reply; the CLI ran once', async () => {
    // The CLI takes 2 s to answer headless (a shell in front of the fake agent), so the kill falls inside the run.
    const demo = JSON.parse(await readFile(path.join(packageRoot, 'profiles', 'demo.json'), 'utf8')) as Record<string, unknown>;
    const { writeProfile } = await import('../helpers/profiles.js');
    await writeProfile(rig.root, 'slowhead', {
      ...demo,
      name: 'slowhead',
      command: 'sh',
      args: ['-c', 'case " $* " in *" -p "*) sleep 2;; esac; exec jaggers-fake-agent --think-ms 200 "$@"', 'slowhead'],
    });
    await writeProject(rig.root, { agents: [{ name: 'h', profile: 'slowhead' }] });
    expect((await rig.run(['up'])).code).toBe(0);
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    const run = execa(
      process.execPath,
      [path.join(packageRoot, 'bin', 'jaggers.js'), 'handoff', 'h', '--headless', '-m', 'headless through a crash', '--json'],
      {
        cwd: rig.root,
        env: rig.env,
        reject: false,
      },
    );
    // The run started (its shell wrote its pid): now the supervisor dies.
    const work = path.join(rig.root, '.jaggers', 'work');
    await whenDirSays(path.join(rig.root, '.jaggers'), () => existsSync(work), Boolean, { timeoutMs: 30_000, what: 'the work folder' });
    const runDir = path.join(
      work,
      (
        await whenDirSays(
          work,
          () => readdir(work),
          (names) => names.length > 0,
          { timeoutMs: 30_000, what: 'a run folder' },
        )
      )[0]!,
    );
    await whenDirSays(runDir, () => existsSync(path.join(runDir, '1.pid')), Boolean, { timeoutMs: 30_000, what: "the headless run's pid file" });
    process.kill(pid, 'SIGKILL');
    await waitPidGone(pid);
    const r = await run;
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as HandoffResult;
    expect(out.reply?.text).toContain('headless through a crash');
    // The CLI ran once: one turn in the conversation, and one run folder attempt.
    const turns = await fakeTurns(rig, 'h');
    expect(turns.filter((t) => t.prompt.includes('Read ')).length).toBe(1);
    const jobs = await api(rig).call<JobView[]>('GET', '/v1/jobs');
    expect(jobs.map((j) => [j.work, j.headless, j.state])).toEqual([['handoff', true, 'done']]);
    // Its pane has the agent's TUI again, in the same conversation.
    await rig.waitForScreen('h', /Type your message|│ > /, { timeoutMs: 30_000 });
  }, 120_000);
});
