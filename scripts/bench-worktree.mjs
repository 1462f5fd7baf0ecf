#!/usr/bin/env node
// What jaggers' worktree create costs on top of `git worktree add` alone (issue 28: at most 300 ms more).
// Prints figures beside the reference from the same run; asserts nothing.
//
// A generated repository of about 50 MB (many files of text, one commit) in a temp folder, with its own
// HOME (the machine's ~/.gitconfig is not read). Each run times, in turn (the order swaps every run):
//   - `git worktree add -b plain/<i> <folder> HEAD`, one process, as a person would run it;
//   - `create('b<i>')` of src/agents/worktrees (from dist/): its checks, the add, its record, the unlock;
// then removes both (not timed); `sync` before each timed step. One warm-up run is dropped. Also timed: a second create of the same name
// (the idempotent path), a remove of a clean worktree, and a squash merge of one small commit.
//
// Usage: npm run build && node scripts/bench-worktree.mjs [runs=7] [megabytes=50] [files=5000]
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cpuPressure, load, pct } from './bench-lib.mjs';
import { openWorktrees } from '../dist/src/agents/worktrees/worktrees.js';
import { createGit } from '../dist/src/git/run.js';

const runs = Number(process.argv[2] ?? 7);
const megabytes = Number(process.argv[3] ?? 50);
const files = Number(process.argv[4] ?? 5000);

const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'jaggers-bench-worktree-')));
const root = path.join(base, 'repo');
const home = path.join(base, 'home');
const end = async () => rm(base, { recursive: true, force: true });
process.on('SIGINT', () => void end().then(() => process.exit(130)));

try {
  await mkdir(root, { recursive: true });
  await mkdir(home, { recursive: true });
  await writeFile(path.join(home, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n');
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
  for (const k of Object.keys(env)) if (k.startsWith('GIT_') && k !== 'GIT_CONFIG_NOSYSTEM') delete env[k];
  const git = (args, cwd = root) => execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });

  // The repository: `files` files of base64 text in 100 folders, `megabytes` in all, one commit.
  let t = performance.now();
  git(['init', '-q', '-b', 'main']);
  const size = Math.floor((megabytes * 1024 * 1024) / files);
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `src/d${i % 100}`);
    if (i < 100) await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, `f${i}.txt`),
      randomBytes(Math.ceil((size * 3) / 4))
        .toString('base64')
        .replace(/(.{76})/g, '$1\n'),
    );
  }
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'generated']);
  const du = execFileSync('du', ['-sm', '--apparent-size', '--exclude=.git', root], { encoding: 'utf8' }).split('\t')[0];
  const packed = execFileSync('du', ['-sm', path.join(root, '.git')], { encoding: 'utf8' }).split('\t')[0];
  console.log(`repository: ${files} files, ${du} MB checked out, .git ${packed} MB (made in ${((performance.now() - t) / 1000).toFixed(1)} s)`);
  console.log(
    `git ${git(['version']).trim().replace('git version ', '')}, node ${process.version}, ${os.cpus().length} cores, load ${load()}, cpu pressure ${cpuPressure()}`,
  );

  // The same git runner jaggers makes, timing its `git worktree add` calls: create's own cost is its
  // whole time less that call's, measured in the same create (the checkout's time varies far more
  // from run to run on a busy machine than our overhead does).
  const real = createGit({ env });
  let addMs = 0;
  const timed = {
    run: async (cwd, args, o) => {
      const s = performance.now();
      const r = await real.run(cwd, args, o);
      if (args[0] === 'worktree' && args[1] === 'add') addMs += performance.now() - s;
      return r;
    },
  };
  const wt = await openWorktrees(root, { env, git: timed });
  // Each timed checkout starts with no dirty pages from the one before: writing 50 MB back to disk
  // throttles the next writer, whichever it is (seen here: the same add took 0.5 s or 3.5 s).
  const flush = () => execFileSync('sync');
  const plain = [];
  const ours = [];
  const again = [];
  const removal = [];
  const merges = [];
  const own = [];
  for (let i = 0; i <= runs; i++) {
    const timePlain = () => {
      flush();
      const dir = path.join(root, '.jaggers', 'plain', `p${i}`);
      const s = performance.now();
      const r = spawnSync('git', ['worktree', 'add', '-q', '-b', `plain/p${i}`, dir, 'HEAD'], { cwd: root, env, stdio: 'ignore' });
      const ms = performance.now() - s;
      if (r.status !== 0) throw new Error(`git worktree add exited ${r.status}`);
      return ms;
    };
    const timeOurs = async () => {
      flush();
      addMs = 0;
      const s = performance.now();
      await wt.create(`b${i}`);
      const ms = performance.now() - s;
      own.push(ms - addMs);
      return ms;
    };
    let p;
    let o;
    if (i % 2 === 0) {
      p = timePlain();
      o = await timeOurs();
    } else {
      o = await timeOurs();
      p = timePlain();
    }
    let s = performance.now();
    await wt.create(`b${i}`);
    const a = performance.now() - s;
    // A squash merge of one small commit into a branch checked out nowhere (update-ref).
    git(['branch', '-f', `into${i}`, 'main']);
    const made = await wt.create(`m${i}`, { base: `into${i}` });
    await writeFile(path.join(made.path, 'merged.txt'), `run ${i}\n`);
    await wt.commit(`m${i}`, 'small change');
    s = performance.now();
    await wt.merge(`m${i}`, { mode: 'squash' });
    const m = performance.now() - s;
    s = performance.now();
    await wt.remove(`b${i}`);
    const rmMs = performance.now() - s;
    await wt.remove(`m${i}`);
    git(['worktree', 'remove', '--force', path.join(root, '.jaggers', 'plain', `p${i}`)]);
    git(['branch', '-q', '-D', `plain/p${i}`, `into${i}`]);
    if (i === 0) {
      own.length = 0;
      continue; // warm-up
    }
    plain.push(p);
    ours.push(o);
    again.push(a);
    removal.push(rmMs);
    merges.push(m);
    console.log(
      `run ${i}: git worktree add ${p.toFixed(0)} ms, create ${o.toFixed(0)} ms (+${(o - p).toFixed(0)}; its own steps ${own.at(-1)?.toFixed(0)} ms), again ${a.toFixed(0)} ms, squash merge ${m.toFixed(0)} ms, remove ${rmMs.toFixed(0)} ms`,
    );
  }
  const med = (xs) => pct(xs, 50);
  const diffs = ours.map((o, i) => o - (plain[i] ?? 0));
  console.log('');
  console.log(`median of ${runs} runs:`);
  console.log(`  git worktree add alone        ${med(plain).toFixed(0)} ms`);
  console.log(`  jaggers create                ${med(ours).toFixed(0)} ms`);
  console.log(
    `  difference of the medians     ${(med(ours) - med(plain)).toFixed(0)} ms (median of the per-run differences ${med(diffs).toFixed(0)} ms; target: at most 300 ms)`,
  );
  console.log(`  create's own steps            ${med(own).toFixed(0)} ms (create less its git worktree add; p90 ${pct(own, 90).toFixed(0)} ms)`);
  console.log(`  create again (same name)      ${med(again).toFixed(0)} ms`);
  console.log(`  squash merge (one commit)     ${med(merges).toFixed(0)} ms`);
  console.log(`  remove (clean)                ${med(removal).toFixed(0)} ms`);
} finally {
  await end();
}
