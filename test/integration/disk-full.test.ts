// A real full disk: `.jaggers/` is a 2 MB tmpfs (mounting needs root; skipped otherwise) under a real
// supervisor with a fake agent on a private tmux server. Filled to the brim, the supervisor stays up,
// refuses new work with E_DISK_FULL naming the path and the error, and says why (health, status, window
// 0); with the filler gone the next request works, and what was journaled before is intact.
import { execa } from 'execa';
import fs from 'node:fs';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthView, JobResultView, JobView } from '../../src/api/types.js';
import { appendDurable } from '../../src/fs/durable.js';
import { api, raw, readRegistry, untilEvent, waitPidGone } from '../helpers/api.js';
import { apiSocketPath } from '../../src/api/paths.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

const asRoot = process.getuid?.() === 0;

/** Write `file` until the disk refuses even one more byte. */
function fill(file: string): number {
  const fd = fs.openSync(file, 'w');
  let total = 0;
  try {
    for (let chunk = 1 << 16; chunk >= 1; chunk >>= 1) {
      const buf = Buffer.alloc(chunk, 0x78);
      for (;;) {
        try {
          total += fs.writeSync(fd, buf);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
          break;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return total;
}

describe.skipIf(!asRoot)('a full disk under a running supervisor (a real 2 MB tmpfs; needs root to mount, skipped otherwise)', () => {
  let rig: Rig;
  let jdir: string;
  let mounted = false;
  let pid = 0;

  const jg = (args: string[]) => rig.run(args);
  const untilState = async (id: string, states: string[]): Promise<JobView> =>
    untilEvent(
      api(rig),
      'job',
      async () => {
        const j = await api(rig).call<JobView>('GET', `/v1/jobs/${id}`);
        return states.includes(j.state) ? j : null;
      },
      `job ${id} ${states.join('/')}`,
    );

  beforeAll(async () => {
    rig = await Rig.create();
    jdir = path.join(rig.root, '.jaggers');
    await mkdir(jdir);
    await execa('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', jdir]);
    mounted = true;
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    const up = await jg(['up']);
    expect(up.code, up.stderr).toBe(0);
    pid = (await api(rig).call<HealthView>('GET', '/v1/health')).pid;
  }, 60_000);

  afterAll(async () => {
    try {
      await rig?.tmux(['kill-server']).catch(() => {});
      if (pid) await waitPidGone(pid).catch(() => {});
    } finally {
      if (mounted) {
        const r = await execa('umount', [jdir], { reject: false });
        if (r.exitCode !== 0) await execa('umount', ['-l', jdir], { reject: false });
      }
      await rig?.cleanup();
    }
  });

  /** The disk is full: new work refused with E_DISK_FULL naming the path; the supervisor alive and saying why. */
  async function whileFull(): Promise<void> {
    // A message needs a new file: the disk refuses it; the API says so with 507 and the path.
    const msg = await jg(['message', 'alpha', '-m', 'a message while the disk is full']);
    expect(msg.code).toBe(1);
    expect(msg.stderr).toMatch(new RegExp(`jaggers: writing ${jdir}/inbox/m-[0-9a-f]+\\.md failed: ENOSPC: no space left on device`));
    const viaApi = await raw({ socketPath: apiSocketPath(jdir) }, 'POST', '/v1/messages', JSON.stringify({ to: 'alpha', text: 'and again' }));
    expect(viaApi.status).toBe(507);
    expect(viaApi.json().error).toEqual({
      code: 'E_DISK_FULL',
      message: expect.stringMatching(new RegExp(`^the disk is failing: writing ${jdir}/\\S+ failed with ENOSPC`)),
    });
    // New work of another kind too, before anything is written.
    const refused = await jg(['assign', 'alpha', '-m', 'a job while the disk is full']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the disk is failing: writing .* failed with ENOSPC: no space left on device.*new work is refused/);

    // The supervisor is alive and says why: health, status (on stderr), window 0.
    process.kill(pid, 0);
    const h = await api(rig).call<HealthView>('GET', '/v1/health');
    expect(h.pid).toBe(pid);
    // The last write refused: the inbox file, or the log's own line saying so, or the snapshot (its timer may fire meanwhile).
    expect(h.disk).toMatchObject({ path: expect.stringContaining(`${jdir}/`), code: 'ENOSPC', error: 'ENOSPC: no space left on device, write' });
    const st = await jg(['status']);
    expect(st.code).toBe(0);
    expect(st.stdout).toMatch(/alpha\s+(idle|done)\s/);
    expect(st.stderr).toMatch(/jaggers: warning: the disk is failing since .*: writing .* failed with ENOSPC.*new work is refused \(E_DISK_FULL\)/);
    // Window 0 redraws at most four times a second: its table gets the line a moment after it is printed.
    const w0 = (await rig.tmux(['display-message', '-p', '-t', `${rig.session}:0`, '#{pane_id}'])).trim();
    await rig.waitForScreen(w0, /! the disk is failing since/);
  }

  /** Space again (the filler removed): the next request works without anything else done. */
  async function afterFull(first: string): Promise<void> {
    const second = await jg(['assign', 'alpha', '-m', 'the job after the disk came back']);
    expect(second.code, second.stderr).toBe(0);
    expect((await untilState(second.stdout.trim(), ['done', 'failed'])).state).toBe('done');
    expect((await api(rig).call<HealthView>('GET', '/v1/health')).disk).toBeNull();
    const sent = await jg(['message', 'alpha', '-m', 'a message after the disk came back']);
    expect(sent.code, sent.stderr).toBe(0);
    expect((await jg(['status'])).stderr).not.toMatch(/disk/);

    // Nothing lost, nothing half-written: the first job and its reply are as they were, the journal reads
    // whole, and no temp file is left behind.
    const res = await api(rig).call<JobResultView>('GET', `/v1/jobs/${first}/result`);
    expect(res.job.state).toBe('done');
    expect(res.reply).toContain('the job before the disk filled');
    const reg = readRegistry(rig.root);
    expect(reg.jobs[first]?.state).toBe('done');
    expect(Object.values(reg.jobs).map((j) => j.state)).toEqual(['done', 'done']);
    expect(Object.keys(reg.messages)).toHaveLength(1);
    for (const d of ['inbox', 'jobs', 'handover']) expect((await readdir(path.join(jdir, d)).catch(() => [])).filter((n) => n.includes('.tmp-'))).toEqual([]);
    expect(pid).toBe((await api(rig).call<HealthView>('GET', '/v1/health')).pid);
  }

  it('stays up, refuses new work with E_DISK_FULL naming the path, says why; goes on once space is back, with nothing lost', async () => {
    // Work journaled before the disk fills.
    const first = (await jg(['assign', 'alpha', '-m', 'the job before the disk filled'])).stdout.trim();
    expect(first).toMatch(/^j-[0-9a-f]{12}$/);
    expect((await untilState(first, ['done', 'failed'])).state).toBe('done');
    // The log ends on a page boundary: its next line needs a page the full disk does not have.
    const log = fs.realpathSync(path.join(jdir, 'logs', 'current.log'));
    let pad = (4096 - (fs.statSync(log).size % 4096)) % 4096;
    if (pad < 64) pad += 4096;
    const padLine = JSON.stringify({ level: 30, msg: 'padding', p: '' });
    fs.appendFileSync(log, `${padLine.slice(0, -2)}${'x'.repeat(pad - padLine.length - 1)}"}\n`);
    expect(fs.statSync(log).size % 4096).toBe(0);
    const filler = path.join(jdir, 'filler');
    try {
      expect(fill(filler)).toBeGreaterThan(1_000_000);
      await whileFull();
    } finally {
      await rm(filler, { force: true });
    }
    await afterFull(first);
    // The log's own failed line was kept and written once the disk took writes again.
    const msgs = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(msgs).toContain('the disk is failing: new work is refused');
    expect(msgs).toContain('the disk takes writes again');
  }, 120_000);

  it('an append the full disk cuts short leaves the file as it was before it (no half line for the next append to follow)', async () => {
    const file = path.join(jdir, 'cut.jsonl');
    await writeFile(file, '{"n":1}\n');
    const filler = path.join(jdir, 'filler2');
    try {
      fill(filler);
      // Bigger than the room left in the file's last page: part of it goes in before the disk refuses.
      await expect(appendDurable(file, `{"n":2,"pad":"${'p'.repeat(9000)}"}\n`)).rejects.toMatchObject({ code: 'E_DISK_FULL' });
      expect((await stat(file)).size).toBe(8);
    } finally {
      await rm(filler, { force: true });
    }
    await appendDurable(file, '{"n":3}\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('{"n":1}\n{"n":3}\n');
  });
});
