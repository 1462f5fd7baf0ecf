// `assign --worktree` jobs through supervisor crashes (issue 28): jobs for new workers in worktrees of
// their own, the supervisor killed with kill -9 at random moments (while worktrees are made, windows
// opened, prompts typed, turns run). Every job still ends done, its worker got its prompt exactly once,
// its work sits on its own branch as one commit, and its branch, commits and diff stat are recorded with
// its end. JG_WT_CRASH_SEED replays a run's choices (it is printed).
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withApi } from '../../src/api/connect.js';
import type { HealthView, JobView } from '../../src/api/types.js';
import { resolveContext } from '../../src/context.js';
import { JaggersError } from '../../src/errors.js';
import { waitPidGone } from '../helpers/api.js';
import { whenDirSays } from '../helpers/dir-watch.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';
import { initRigRepo } from '../helpers/git-repo.js';
import { seededRandom } from '../helpers/seeded.js';

const SEED = Number(process.env.JG_WT_CRASH_SEED ?? randomBytes(4).readUInt32LE());
const JOBS = 4;
const KILLS = 3;
const hex = (n: number) => randomBytes(n).toString('hex');
const down = (e: unknown) => e instanceof JaggersError && (e.code === 'E_SUPERVISOR_DOWN' || e.code === 'E_SUPERVISOR_START');

describe('assign --worktree through supervisor crashes', () => {
  let rig: Rig;
  let promptsFile: string;
  let git: (args: string[], cwd?: string) => string;

  beforeEach(async () => {
    rig = await Rig.create();
    git = await initRigRepo(rig);
    await writeFile(path.join(rig.root, 'README.md'), 'hello\n');
    git(['add', 'README.md']);
    git(['commit', '-q', '-m', 'first']);
    await mkdir(path.join(rig.root, 'prompts'));
    promptsFile = path.join(rig.root, 'prompts', 'workers.jsonl');
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '400'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeProject(rig.root, { agents: [{ name: 'home', profile: 'fake' }] });
  });
  afterEach(async () => rig.cleanup());

  it(`${JOBS} worktree jobs, the supervisor killed ${KILLS} times at random moments: each done once, its work one commit on its branch, recorded`, async () => {
    console.log(`worktree crash seed ${SEED} (JG_WT_CRASH_SEED=${SEED} replays it)`);
    const rand = seededRandom(SEED);
    expect((await rig.run(['up'])).code).toBe(0);
    const ctx = await resolveContext({}, rig.env, rig.root);
    const call = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
      for (let tries = 1; ; tries++) {
        try {
          return await withApi(ctx, (c) => c.call<T>(method, url, body), { readOnly: true });
        } catch (e) {
          if (!down(e) || tries >= 20) throw e;
        }
      }
    };
    const ids = Array.from({ length: JOBS }, () => `j-${hex(6)}`);
    const made = async () => {
      for (const [i, id] of ids.entries())
        await call<JobView>('POST', '/v1/jobs', { id, target: 'fake', worktree: true, text: `write: job-${i}.txt "job ${i} ${id}\\n"` });
    };
    const kills: number[] = [];
    const killer = async () => {
      for (let k = 0; k < KILLS; k++) {
        // A random moment: after a random number of worktrees made, plus up to 1.5 s.
        const after = Math.floor(rand() * JOBS);
        await whenDirSays(
          path.join(rig.root, '.jaggers'),
          async () => (await readdir(path.join(rig.root, '.jaggers', 'worktrees')).catch(() => [])).length,
          (n) => n >= after,
          { timeoutMs: 60_000, what: `${after} worktrees made` },
        );
        await new Promise((r) => setTimeout(r, Math.floor(rand() * 1500))); // a random moment, not a wait for a state
        const { pid } = await call<HealthView>('GET', '/v1/health');
        process.kill(pid, 'SIGKILL');
        kills.push(pid);
        await waitPidGone(pid);
        // The next command starts the next supervisor, which follows the jobs on.
        expect((await call<HealthView>('GET', '/v1/health')).pid).not.toBe(pid);
      }
    };
    await Promise.all([made(), killer()]);
    expect(kills).toHaveLength(KILLS);
    for (const id of ids) {
      const j = await call<JobView & { worktree: { result: Record<string, unknown> | null } }>('GET', `/v1/jobs/${id}/wait?timeout=120`);
      expect(j.state, `${id}: ${j.reason}`).toBe('done');
      expect(j.worktree?.result, id).toMatchObject({ branch: `jaggers/${id}`, commits: 1, files: 1 });
    }
    // Each worker got its prompt once (the fake agents' own record), and each branch holds its file alone.
    const prompts = (await readFile(promptsFile, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { agent: string; prompt: string });
    for (const [i, id] of ids.entries()) {
      const wt = path.join(rig.root, '.jaggers', 'worktrees', id);
      const sent = prompts.filter((p) => p.agent === `fake-${id}`).map((p) => p.prompt);
      expect(sent.length, `${id} was typed into its worker ${sent.length} times: ${JSON.stringify(sent)}`).toBe(1);
      expect(
        git(['log', '--format=%s', `main..jaggers/${id}`])
          .trim()
          .split('\n'),
      ).toHaveLength(1);
      expect(git(['diff', '--name-only', `main...jaggers/${id}`]).trim()).toBe(`job-${i}.txt`);
      expect(git(['status', '--porcelain'], wt)).toBe('');
    }
    expect(git(['status', '--porcelain'])).toBe('?? jaggers.json\n?? prompts/\n');
  }, 240_000);
});
