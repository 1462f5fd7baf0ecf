// A project here and a host `box` on the loopback sshd (test/helpers/sshd.ts) for tests of work across
// hosts: the throwaway user runs this checkout's node and dist/ (both readable by anyone) through
// `jaggers` and `jaggers-fake-agent` wrappers on its PATH, its tmux servers in a folder of the test
// (TMUX_TMPDIR), never the user's; `proj` is that user's folder for the host's `dir`.
import { execa } from 'execa';
import { existsSync, readFileSync } from 'node:fs';
import { chown, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApiClient } from '../../src/api/client.js';
import { hostSocketPath } from '../../src/api/paths.js';
import { shellQuote } from '../../src/hosts/ssh.js';
import { Rig } from './rig.js';
import { HOST_ALIAS, hostTools, startSshd, type SshdRig } from './sshd.js';

export { until } from './sshd.js';

/** The prompts a fake agent took (FAKE_AGENT_PROMPTS: one JSON line each). */
export function promptsOf(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { prompt: string }).prompt);
}

export interface RemoteRig {
  sshd: SshdRig;
  rig: Rig;
  /** The host's `dir`: a folder of the throwaway user's. */
  proj: string;
  /** The environment of a command here: the rig's, with the ssh config that names box. */
  env(): NodeJS.ProcessEnv;
  /** The host's supervisor's API, through the socket forwarded here. */
  far(): ApiClient;
  /** The host's project: `<dir>/.jaggers/hosted/<session>`. */
  remoteRoot(): string;
  /**
   * `jaggers <args>` run on box in the host's project, through a login of its own (not the local
   * supervisor's connection), as an agent there when `terminalId` is given (its JAGGERS_TERMINAL_ID).
   */
  onBox(args: string[], o?: { terminalId?: string }): Promise<{ code: number; stdout: string; stderr: string }>;
  /** The `ssh` arguments that run `jaggers <args>` as `onBox` does (for a long-lived one: `jaggers mcp` there). */
  boxArgv(args: string[], o?: { terminalId?: string }): string[];
  /**
   * The local supervisor's logins to box refused (its ssh config names a closed port) until `allow()`;
   * `onBox` still logs in. A cut connection then stays down.
   */
  refuseLogins(): Promise<{ allow(): Promise<void> }>;
  /**
   * The two-agent team of the cross-host tests, written to jaggers.json and brought `up`: `near` here (the
   * demo agent thinking 1.5 s, its prompts in the returned file) and `far` on box, as `far` says.
   */
  upTeam(far: { args: string[]; env?: Record<string, string> }): Promise<{ nearPrompts: string }>;
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
  // onBox's own ssh config: a copy, so refusing the local supervisor's logins does not refuse its.
  const boxConfig = path.join(sshd.dir, 'ssh_config.onbox');
  await copyFile(sshd.configFile, boxConfig);
  const remoteRoot = () => path.join(proj, '.jaggers', 'hosted', rig.session);
  const boxArgv = (args: string[], o: { terminalId?: string } = {}) => {
    const who = o.terminalId ? `JAGGERS_TERMINAL_ID=${shellQuote(o.terminalId)} ` : '';
    return ['-F', boxConfig, HOST_ALIAS, `${who}jaggers --project ${shellQuote(remoteRoot())} ${args.map(shellQuote).join(' ')}`];
  };
  return {
    sshd,
    rig,
    proj,
    env,
    far: () => new ApiClient({ socketPath: hostSocketPath(path.join(rig.root, '.jaggers'), 'box') }, rig.session),
    remoteRoot,
    boxArgv,
    onBox: async (args, o = {}) => {
      const r = await execa('ssh', boxArgv(args, o), { reject: false });
      return { code: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
    upTeam: async (far) => {
      const nearPrompts = path.join(rig.root, 'near-prompts.jsonl');
      await writeFile(
        path.join(rig.root, 'jaggers.json'),
        JSON.stringify({
          hosts: { box: { ssh: HOST_ALIAS, dir: proj } },
          agents: [
            { name: 'near', profile: 'demo', args: ['--think-ms', '1500'], env: { FAKE_AGENT_PROMPTS: nearPrompts } },
            { name: 'far', profile: 'demo', host: 'box', ...far },
          ],
        }),
      );
      const up = await rig.run(['up'], { env: env() });
      if (up.code !== 0) throw new Error(`up failed (${up.code}): ${up.stderr}`);
      return { nearPrompts };
    },
    refuseLogins: async () => {
      const good = await readFile(sshd.configFile, 'utf8');
      await writeFile(sshd.configFile, good.replace(/^ {2}Port \d+$/m, '  Port 1'));
      return { allow: () => writeFile(sshd.configFile, good) };
    },
    stop: async () => {
      await rig.run(['down'], { env: env() }).catch(() => {});
      await rig.cleanup();
      await sshd.stop();
      await tools.remove();
    },
  };
}
