// A project too deep for a unix socket path has its socket under `$TMPDIR/jaggers-<uid>/`, where any local
// user may make that folder first. The CLI (run as a person would, as its own process) must refuse a
// folder that is not ours and closed to others, naming it, before it talks to a socket in it or starts
// anything; with no folder there it makes one 0700 and works.
import { execa } from 'execa';
import { chmod, chown, lstat, mkdir, rm, stat, symlink } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apiSocketPath } from '../../src/api/paths.js';
import { packageRoot } from '../../src/package-root.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

const asRoot = process.getuid?.() === 0;
const uid = process.getuid?.() ?? 0;

describe('the socket folder under the temp folder', () => {
  let rig: Rig;
  let project: string;
  let tmp: string;
  let folder: string;
  let socket: string;

  beforeAll(async () => {
    rig = await Rig.create();
    // Deep enough that .jaggers/jaggers.sock does not fit in a unix socket path.
    project = path.join(rig.root, 'a-project-folder-nested-so-deep-that-its-socket-path-is-too-long-for-a-unix-socket-x');
    await mkdir(project, { recursive: true });
    await writeFakeProfile(project, 'fake', ['--think-ms', '100']);
    await writeProject(project, { agents: [{ name: 'alpha', profile: 'fake' }] });
    // A temp folder of the test's own, open to all as /tmp is.
    tmp = path.join(path.dirname(rig.root), 'tmp');
    await mkdir(tmp);
    await chmod(tmp, 0o1777);
    folder = path.join(tmp, `jaggers-${uid}`);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      socket = apiSocketPath(path.join(project, '.jaggers'));
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(path.dirname(socket)).toBe(folder);
  });
  afterEach(async () => {
    await rig.tmux(['kill-server']).catch(() => {});
    await rm(folder, { recursive: true, force: true });
  });
  afterAll(async () => rig.cleanup());

  /** `jaggers <args>` as its own process, from the project folder, with the test's TMPDIR. */
  const jaggers = (args: string[]) =>
    execa('node', [path.join(packageRoot, 'bin', 'jaggers.js'), ...args], { cwd: project, env: { ...rig.env, TMPDIR: tmp }, extendEnv: false, reject: false });

  /** Another user's fake supervisor on the socket: it answers every request with its own agent, and counts them. */
  async function impostor(): Promise<{ requests: string[]; close: () => Promise<void> }> {
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.setHeader('content-type', 'application/json');
      const row = { agent: 'evil', state: 'idle', since: new Date().toISOString(), rule: 'impostor', terminalId: 'jg-00000000' };
      res.end(JSON.stringify(req.url === '/v1/terminals' ? [row] : row));
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    await chmod(socket, 0o777);
    return { requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
  }

  const hasSession = async () => (await execa('tmux', ['-L', rig.socket, 'has-session', '-t', rig.session], { env: rig.env, reject: false })).exitCode === 0;

  it('a folder open to everyone (0777) with a socket in it: status and up refuse, naming it; nothing reaches that socket', async () => {
    await mkdir(folder);
    await chmod(folder, 0o777);
    const fake = await impostor();
    try {
      const st = await jaggers(['status']);
      expect(st.stdout).not.toMatch(/evil/);
      expect(st.exitCode).toBe(1);
      expect(st.stderr).toContain(`refusing to use ${folder} (owner uid ${uid}, mode 0777): its group and everyone may write into it`);
      const up = await jaggers(['up']);
      expect(up.exitCode).toBe(1);
      expect(up.stderr).toContain(`refusing to use ${folder} (owner uid ${uid}, mode 0777)`);
      expect(fake.requests).toEqual([]);
      // `up` stopped before it made the session.
      expect(await hasSession()).toBe(false);
    } finally {
      await fake.close();
    }
  });

  it.skipIf(!asRoot)('a folder another user made (uid 65534, 0700) is refused, naming its owner (needs root to chown; skipped otherwise)', async () => {
    await mkdir(folder, { mode: 0o700 });
    const fake = await impostor();
    await chown(folder, 65534, 65534);
    try {
      const st = await jaggers(['status']);
      expect(st.exitCode).toBe(1);
      expect(st.stderr).toContain(`refusing to use ${folder} (owner uid 65534, mode 0700): it is owned by uid 65534, not by you (uid 0)`);
      const up = await jaggers(['up']);
      expect(up.exitCode).toBe(1);
      expect(up.stderr).toContain(`refusing to use ${folder} (owner uid 65534`);
      expect(fake.requests).toEqual([]);
      expect(await hasSession()).toBe(false);
    } finally {
      await fake.close();
    }
  });

  it('a symlink in its place is refused, not followed, even to a good folder of ours', async () => {
    const elsewhere = path.join(tmp, 'elsewhere');
    await mkdir(elsewhere, { mode: 0o700 });
    await symlink(elsewhere, folder);
    try {
      const st = await jaggers(['status']);
      expect(st.exitCode).toBe(1);
      expect(st.stderr).toContain(`refusing to use ${folder} (owner uid ${uid}, mode 0777): it is a symbolic link (not followed)`);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('with no folder there, up makes it 0700 with the socket 0600 in it, and status answers through it', async () => {
    const up = await jaggers(['up']);
    expect(up.exitCode, up.stderr).toBe(0);
    const f = await lstat(folder);
    expect(f.isDirectory()).toBe(true);
    expect(f.uid).toBe(uid);
    expect(f.mode & 0o777).toBe(0o700);
    const s = await stat(socket);
    expect(s.isSocket()).toBe(true);
    expect(s.mode & 0o777).toBe(0o600);
    const st = await jaggers(['status']);
    expect(st.exitCode, st.stderr).toBe(0);
    expect(st.stdout).toMatch(/alpha\s+idle/);
  }, 60_000);
});
