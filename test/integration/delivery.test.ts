import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handoff } from '../../src/commands/handoff.js';
import { resolveContext } from '../../src/context.js';
import { deliverNow } from '../../src/delivery/deliver.js';
import { paneIO } from '../../src/tmux/pane-io.js';
import { sanitizeText } from '../../src/delivery/sanitize.js';
import { PaneWatcher } from '../../src/panes/watcher.js';
import { parseArtifact } from '../../src/handover/artifact.js';
import { loadProfile } from '../../src/profiles/load.js';
import { listPanes } from '../../src/tmux/commands.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';
import { whenDirSays } from '../helpers/dir-watch.js';
import { readRegistry } from '../helpers/api.js';

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

/** The fake agent's own record of a session: every prompt it received, hashed. */
async function sessionTurns(rig: Rig, agent: string) {
  const reg = readRegistry(rig.root);
  const term = Object.values(reg.terminals as Record<string, { agent: string; sessionId: string }>).find((t) => t.agent === agent)!;
  const s = JSON.parse(await readFile(path.join(rig.home, '.fake-agent', 'sessions', `${term.sessionId}.json`), 'utf8'));
  return s.turns as { prompt: string; sha256: string; bytes: number; reply: string }[];
}

describe('delivery and handoffs on real tmux with the fake agent', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '200']);
    await writeFakeProfile(rig.root, 'picky', ['--think-ms', '200', '--picker']);
    await writeFakeProfile(rig.root, 'slowpaste', ['--think-ms', '200'], { delivery: { settleMs: 4000 } });
    await writeProject(rig.root, {
      agents: [
        ...['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => ({ name, profile: 'fake' })),
        { name: 'picky', profile: 'picky' },
        { name: 'slow', profile: 'slowpaste' },
        { name: 'deep', profile: 'fake', cwd: 'sub/dir' },
      ],
    });
    await mkdir(path.join(rig.root, 'sub', 'dir'), { recursive: true });
    expect((await rig.run(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  async function direct() {
    const c = await rig.control();
    const watcher = new PaneWatcher(c);
    await watcher.start();
    const panes = await listPanes(c, rig.session);
    const targets = new Map<string, { paneId: string; agent: string; profile: Awaited<ReturnType<typeof loadProfile>>['profile'] }>();
    for (const p of panes.filter((x) => x.agent)) {
      const { profile } = await loadProfile(p.profile!, path.join(rig.root, '.jaggers'));
      watcher.watch({ paneId: p.paneId, windowId: p.windowId, agent: p.agent!, profile, pid: p.panePid });
      targets.set(p.agent!, { paneId: p.paneId, agent: p.agent!, profile });
    }
    const io = paneIO(c);
    // One at a time per pane, as the runner does it.
    const tails = new Map<string, Promise<unknown>>();
    const send = (agent: string, text: string) => {
      const run = (tails.get(agent) ?? Promise.resolve()).then(() => deliverNow(io, watcher, targets.get(agent)!, text));
      tails.set(
        agent,
        run.catch(() => {}),
      );
      return run;
    };
    // The agent's own record of its turns (its session file), not a watcher's count: this file tests delivery.
    const doneTurns = (agent: string, n: number, timeoutMs = 30_000) =>
      whenDirSays(
        path.join(rig.home, '.fake-agent', 'sessions'),
        () => sessionTurns(rig, agent).catch(() => []),
        (turns) => turns.length >= n && turns.every((t) => t.reply),
        { timeoutMs, what: `${agent}'s turn ${n}` },
      ).then(() => undefined);
    return { send, doneTurns, watcher, targets };
  }

  it('delivers 100 KB and 1 MB pasted prompts byte-exact', async () => {
    const { send, doneTurns } = await direct();
    const line = 'The quick brown fox 日本語 🎉 é\u0301 "q" $x `y` ;\n';
    for (const [i, size] of [100 * 1024, 1024 * 1024].entries()) {
      const text = line.repeat(Math.ceil(size / Buffer.byteLength(line))) + 'END';
      const r = await send('a1', text);
      expect(r).toMatchObject({ kind: 'delivered', submits: 1 });
      await doneTurns('a1', i + 1);
      const turn = (await sessionTurns(rig, 'a1'))[i]!;
      expect({ bytes: turn.bytes, sha: turn.sha256 }).toEqual({ bytes: Buffer.byteLength(text), sha: sha(text) });
    }
  });

  it('hostile strings arrive exactly as written; control characters are removed', async () => {
    const { send, doneTurns } = await direct();
    const hostile = [
      'ends with a semicolon;',
      'dollar $HOME and ${PATH} and $(whoami)',
      'backticks `rm -rf /` and \'single\' "double" quotes',
      'CJK 日本語 中文 한국어, emoji 🎉👩‍👩‍👧, combining é (e\u0301)',
      'tmux syntax #{pane_id} ~ \\ ; \\;',
      '-b looks like an option',
      '--',
      "'",
    ];
    for (const [i, text] of hostile.entries()) {
      expect((await send('a2', text)).kind).toBe('delivered');
      await doneTurns('a2', i + 1);
    }
    const escapes = 'before\u001b[201~after\u001b[31mred\u0007\r\nnext line\u0000';
    expect(sanitizeText(escapes)).toBe('beforeafterred\nnext line');
    expect((await send('a2', escapes)).kind).toBe('delivered');
    await doneTurns('a2', hostile.length + 1);
    const turns = await sessionTurns(rig, 'a2');
    expect(turns.map((t) => t.sha256)).toEqual([...hostile, 'beforeafterred\nnext line'].map(sha));
  });

  it('a pane a person left in copy mode (scrolled back) gets the prompt: the mode is left first', async () => {
    const { send, doneTurns, targets } = await direct();
    const c = await rig.control();
    const paneId = targets.get('a3')!.paneId;
    await c.runOk(['copy-mode', '-t', paneId]);
    await c.runOk(['send-keys', '-t', paneId, '-X', 'cursor-up']);
    expect((await c.runOk(['display-message', '-p', '-t', paneId, '#{pane_in_mode}']))[0]).toBe('1');
    const r = await send('a3', 'typed while a person scrolled back');
    expect(r).toMatchObject({ kind: 'delivered', submits: 1 });
    await doneTurns('a3', 1);
    expect((await sessionTurns(rig, 'a3')).map((t) => t.prompt)).toEqual(['typed while a person scrolled back']);
    expect((await c.runOk(['display-message', '-p', '-t', paneId, '#{pane_in_mode}']))[0]).toBe('0');
    // A pane not in a mode stays as it is (the mode's cancel is not sent to the program).
    expect((await send('a3', 'and once more')).kind).toBe('delivered');
    await doneTurns('a3', 2);
    expect((await sessionTurns(rig, 'a3')).map((t) => t.prompt)).toEqual(['typed while a person scrolled back', 'and once more']);
  });

  it('gets a prompt through a picker that eats the first Enter, exactly once', async () => {
    const { send, doneTurns } = await direct();
    const r = await send('picky', '@notes.md summarize them');
    expect(r).toMatchObject({ kind: 'delivered', submits: 2 });
    await doneTurns('picky', 1);
    const turns = await sessionTurns(rig, 'picky');
    expect(turns.map((t) => t.prompt)).toEqual(['@notes.md summarize them']);
  });

  it('20 concurrent handoffs to 5 agents: each delivered once, in order per pane', async () => {
    const ctx = await resolveContext({}, rig.env, rig.root);
    const agents = ['a1', 'a2', 'a3', 'a4', 'a5'];
    const jobs = Array.from({ length: 20 }, (_, i) => ({ agent: agents[i % 5]!, msg: `job ${i} for ${agents[i % 5]}` }));
    const results = await Promise.all(jobs.map((j) => handoff(ctx, j.agent, { message: j.msg, wait: true, task: 'concurrent' })));
    expect(results.every((r) => r.delivery.kind === 'delivered' && r.reply !== null)).toBe(true);
    // Each pane received its four prompts once each, in the order their turns were allocated.
    for (const agent of agents) {
      const turns = await sessionTurns(rig, agent);
      const answers = turns.map((t) => /answer: (.*)/.exec(t.reply)?.[1]);
      const inTurnOrder = results
        .map((r, i) => ({ r, msg: jobs[i]!.msg }))
        .filter(({ r }) => r.agent === agent)
        .sort((x, y) => x.r.turn - y.r.turn)
        .map(({ msg }) => msg);
      expect(answers).toEqual(inTurnOrder);
      expect([...answers].sort()).toEqual(
        jobs
          .filter((j) => j.agent === agent)
          .map((j) => j.msg)
          .sort(),
      );
    }
    // Each reply names its own handover file and was written as the next turn's artifact.
    // Turns of one task are allocated once each, even when 20 handoffs run at the same time.
    const turns = results.flatMap((r) => [r.turn]);
    expect(new Set(turns).size).toBe(20);
    for (const r of results) {
      expect(r.reply!.text).toContain(`read ${path.relative(rig.root, r.artifact)}`);
      const reply = parseArtifact(await readFile(r.reply!.artifact, 'utf8'));
      expect(reply.meta).toMatchObject({ task: 'concurrent', source_agent: r.agent, reply_to: path.basename(r.artifact) });
      expect(Number(reply.meta.turn)).toBeGreaterThan(r.turn);
    }
  });

  it('hands over a 1 MB file: the agent reads the artifact byte-exact', async () => {
    const ctx = await resolveContext({}, rig.env, rig.root);
    const body = 'line of the big payload ✓\n'.repeat(40_000);
    await writeFile(path.join(rig.root, 'big.md'), body);
    const r = await handoff(ctx, 'a3', { file: 'big.md', wait: true, from: 'a1' });
    const onDisk = await readFile(r.artifact);
    expect(parseArtifact(onDisk.toString('utf8')).body).toBe(body);
    expect(r.reply!.text).toContain(`(${onDisk.length} bytes, sha256:${sha(onDisk)})`);
    // The fake agent's Stop hook carries the reply (its transcript holds the same, docs/hooks.md).
    expect(r.reply!.from).toBe('hook');
    expect(parseArtifact(onDisk.toString('utf8')).meta).toMatchObject({ turn: 1, source_agent: 'a1', target_agent: 'a3', workflow: 'handoff' });
  });

  it('an agent in a folder of its own gets the handover path as seen from there', async () => {
    const ctx = await resolveContext({}, rig.env, rig.root);
    const r = await handoff(ctx, 'deep', { message: 'from the project root to sub/dir', wait: true });
    expect(r.pointer).toMatch(/^Read \.\.\/\.\.\/\.jaggers\/handover\/turn_1_\w+\.md /);
    const onDisk = await readFile(r.artifact);
    expect(r.reply!.text).toContain(`(${onDisk.length} bytes, sha256:${sha(onDisk)})`);
  });

  it('a pane that dies mid-delivery gives a clear error and keeps the artifact', async () => {
    const ctx = await resolveContext({}, rig.env, rig.root);
    const pending = handoff(ctx, 'slow', { message: 'you will not see this', wait: true });
    const outcome = pending.then(
      () => null,
      (e: Error) => e,
    );
    await rig.waitForScreen('slow', /\[jg:[0-9a-f]{16}\]/); // pasted, waiting its 4 s settle before Enter
    const pid = (await listPanes(await rig.control(), rig.session)).find((p) => p.agent === 'slow')!.panePid!;
    process.kill(pid, 'SIGKILL');
    const err = await outcome;
    expect(err?.message).toMatch(/handoff: slow's pane went away: .*; the handover file stays at .*turn_1_[0-9a-f]{6}\.md/);
    const file = /stays at (\S+)/.exec(err!.message)![1]!;
    expect(existsSync(file)).toBe(true);
    expect(parseArtifact(await readFile(file, 'utf8')).body).toBe('you will not see this\n');
  });

  it('an unknown agent or a missing file is a clear error', async () => {
    const r = await rig.run(['handoff', 'ghost', '--message', 'hi']);
    expect(r.stderr).toMatch(/handoff: unknown agent "ghost" in session jgtest: agents are a1, a2, a3, a4, a5, picky, slow/);
    const f = await rig.run(['handoff', 'a1', '--file', 'missing.md']);
    expect(f.stderr).toBe(`jaggers: handoff --file: "missing.md" (${path.join(rig.root, 'missing.md')}) does not exist\n`);
    const both = await rig.run(['handoff', 'a1']);
    expect(both.stderr).toMatch(/give exactly one of --message TEXT or --file PATH/);
  });
});
