// A project here and a host `box` on the loopback sshd (test/helpers/sshd.ts) for tests of work across
// hosts: the throwaway user runs this checkout's node and dist/ (both readable by anyone) through
// `jaggers` and `jaggers-fake-agent` wrappers on its PATH, its tmux servers in a folder of the test
// (TMUX_TMPDIR), never the user's; `proj` is that user's folder for the host's `dir`.
import { chown, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Rig } from './rig.js';
import { hostTools, startSshd, type SshdRig } from './sshd.js';

export { until } from './sshd.js';

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
  const tools = await hostTools('jgssh');
  const sshd = await startSshd({ path: `${tools.bin}:/usr/local/bin:/usr/bin:/bin`, env: { TMUX_TMPDIR: tools.tmuxDir } });
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
      await tools.remove();
    },
  };
}
