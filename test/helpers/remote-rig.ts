// A project here and a host `box` on the loopback sshd (test/helpers/sshd.ts) for tests of work across
// hosts: the throwaway user runs this checkout's node and dist/ (both readable by anyone) through
// `jaggers` and `jaggers-fake-agent` wrappers on its PATH, its tmux servers in a folder of the test
// (TMUX_TMPDIR), never the user's; `proj` is that user's folder for the host's `dir`.
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { packageRoot } from '../../src/package-root.js';
import { Rig } from './rig.js';
import { startSshd, type SshdRig } from './sshd.js';

export interface RemoteRig {
  sshd: SshdRig;
  rig: Rig;
  /** The host's `dir`: a folder of the throwaway user's. */
  proj: string;
  /** The environment of a command here: the rig's, with the ssh config that names box. */
  env(): NodeJS.ProcessEnv;
  /** `down` here (which stops the host's side), the rig, the sshd and the wrappers' folders. */
  stop(): Promise<void>;
}

export async function startRemoteRig(): Promise<RemoteRig> {
  // Short paths in /tmp (the user's tmux sockets go under tmuxDir), each test file's own.
  const bin = await mkdtemp('/tmp/jgssh-bin-');
  const tmuxDir = await mkdtemp('/tmp/jgssh-tmux-');
  await chmod(bin, 0o755);
  await chmod(tmuxDir, 0o1777);
  const wrap = (name: string, script: string) =>
    writeFile(path.join(bin, name), `#!/bin/sh\nexec node ${path.join(packageRoot, 'bin', script)} "$@"\n`, { mode: 0o755 });
  await wrap('jaggers', 'jaggers.js');
  await wrap('jaggers-fake-agent', 'jaggers-fake-agent.js');
  const sshd = await startSshd({ path: `${bin}:/usr/local/bin:/usr/bin:/bin`, env: { TMUX_TMPDIR: tmuxDir } });
  const rig = await Rig.create();
  const proj = path.join(sshd.home, 'proj');
  await mkdir(proj);
  await chown(proj, sshd.uid, sshd.gid);
  const env = () => ({ ...rig.env, JAGGERS_SSH_CONFIG: sshd.configFile });
  return {
    sshd,
    rig,
    proj,
    env,
    stop: async () => {
      await rig.run(['down'], { env: env() }).catch(() => {});
      await rig.cleanup();
      await sshd.stop();
      await rm(bin, { recursive: true, force: true });
      await rm(tmuxDir, { recursive: true, force: true });
    },
  };
}

/** Ask `probe` until it returns a value (not undefined), at most `ms`; fails with the last thing it saw. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
