// The real ssh side of a HostConnection (src/hosts/connection.ts): one master process per host
// (`ssh -M -S <control socket>`, in the foreground and ours, so its end is the connection's end), and
// commands, long-lived commands and socket forwards that go through it (`-S`, `-O forward`).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { JaggersError } from '../errors.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import type { MasterProcess, RemoteProcess, RunResult, SshPorts } from './connection.js';
import type { HostSpec } from './schema.js';
import { classifySshFailure, describeSshFailure, remoteCommandLine, sshArgv, sshErrorCode, sshOptions, type SshSettings } from './ssh.js';

/** ssh binds the control socket at its path plus `.` and 16 random characters first, and sun_path holds 107 bytes. */
const MAX_CONTROL_PATH = 107 - 17 - 1;

/**
 * `.jaggers/ssh/<host>.ctl`; when that is too long for a unix socket, a short path derived from it in the
 * temp folder (`jaggers-<uid>/ssh-<16 hex>.ctl`). Its folder is made private (0700) before use.
 */
export function controlPathFor(jaggersDir: string, name: string): string {
  const p = path.join(jaggersDir, 'ssh', `${name}.ctl`);
  if (Buffer.byteLength(p) <= MAX_CONTROL_PATH) return p;
  const hash = createHash('sha256').update(path.resolve(p)).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `jaggers-${process.getuid?.() ?? 'u'}`, `ssh-${hash}.ctl`);
}

export interface SshTarget {
  /** The host's name in jaggers.json, for messages. */
  name: string;
  host: HostSpec;
  settings: SshSettings;
  /** The master's control socket (controlPathFor). */
  controlPath: string;
  env: NodeJS.ProcessEnv;
}

/** The line the master's remote shell prints once logged in: the connection is up. */
export const READY_MARK = 'jaggers-ssh-ready';

/** Remove a socket file left by an ended process (never anything else). */
function removeStaleSocket(p: string): void {
  try {
    if (lstatSync(p).isSocket()) unlinkSync(p);
  } catch {
    // not there
  }
}

/** Make the control socket's folder private; call once before the connection opens. */
export async function prepareControlPath(controlPath: string): Promise<void> {
  await ensurePrivateFolder(path.dirname(controlPath));
}

export function sshPorts(t: SshTarget): SshPorts {
  const { bin } = t.settings;
  const viaMaster = ['-S', t.controlPath, '-o', 'ControlMaster=no', '-T'];
  const why = (exitCode: number | null, stderr: string, spawnError: string | null, signal: string | null): string => {
    const f = classifySshFailure({ exitCode: exitCode ?? 255, stderr, spawnError }, bin);
    if (f && (f.reason !== 'ssh-failed' || stderr.trim())) return describeSshFailure(t.name, t.host, f);
    return `host ${t.name}: ssh ended (${signal ? `signal ${signal}` : `exit ${exitCode}`})`;
  };

  const startProcess = (argv: string[]) => {
    const child = spawn(bin, argv, { env: t.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let spawnError: string | null = null;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => void (stderr = (stderr + d).slice(-20_000)));
    const closed = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      child.once('error', (e) => {
        spawnError = (e as NodeJS.ErrnoException).code ?? e.message;
        resolve({ code: null, signal: null });
      });
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    const kill = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const hard = setTimeout(() => child.kill('SIGKILL'), 3000);
      void closed.then(() => clearTimeout(hard));
    };
    return { child, closed, kill, stderr: () => stderr, spawnError: () => spawnError };
  };

  return {
    startMaster(): MasterProcess {
      removeStaleSocket(t.controlPath);
      const p = startProcess(
        sshArgv(t.host, t.settings, `echo ${READY_MARK}; exec cat >/dev/null`, [
          '-M',
          '-S',
          t.controlPath,
          '-o',
          'ControlPersist=no',
          '-o',
          'ServerAliveInterval=15',
          '-o',
          'ServerAliveCountMax=3',
          '-o',
          'StreamLocalBindUnlink=yes',
          '-T',
        ]),
      );
      let out = '';
      const ready = new Promise<void>((resolve, reject) => {
        p.child.stdout.setEncoding('utf8');
        p.child.stdout.on('data', (d: string) => {
          out = (out + d).slice(-4096);
          if (out.split(/\r?\n/).includes(READY_MARK)) resolve();
        });
        void p.closed.then(({ code, signal }) => {
          const errorCode = sshErrorCode(classifySshFailure({ exitCode: code ?? 255, stderr: p.stderr(), spawnError: p.spawnError() }, bin));
          reject(new JaggersError(errorCode, why(code, p.stderr(), p.spawnError(), signal)));
        });
      });
      ready.catch(() => {});
      const exited = p.closed.then(({ code, signal }) => {
        removeStaleSocket(t.controlPath);
        return { reason: why(code, p.stderr(), p.spawnError(), signal) };
      });
      return { ready, exited, kill: p.kill };
    },

    async run(argv, opts): Promise<RunResult> {
      const p = startProcess(sshArgv(t.host, t.settings, remoteCommandLine(argv), viaMaster));
      p.child.stdin.end();
      let stdout = '';
      p.child.stdout.setEncoding('utf8');
      p.child.stdout.on('data', (d: string) => void (stdout += d));
      const timer = opts?.timeoutMs ? setTimeout(p.kill, opts.timeoutMs) : null;
      const { code } = await p.closed;
      if (timer) clearTimeout(timer);
      if (p.spawnError()) throw new JaggersError('E_SSH', why(code, p.stderr(), p.spawnError(), null));
      return { exitCode: code, stdout, stderr: p.stderr() };
    },

    start(argv): RemoteProcess {
      const p = startProcess(sshArgv(t.host, t.settings, remoteCommandLine(argv), viaMaster));
      const exited = p.closed.then(({ code }) => ({ exitCode: code, stdout: '', stderr: p.stderr() }));
      return { stdin: p.child.stdin, stdout: p.child.stdout, stderr: p.child.stderr, exited, kill: p.kill };
    },

    async forward(local, remote) {
      removeStaleSocket(local);
      await control(['-O', 'forward', '-L', `${local}:${remote}`]);
    },

    async cancel(local, remote) {
      try {
        await control(['-O', 'cancel', '-L', `${local}:${remote}`]);
      } finally {
        removeStaleSocket(local);
      }
    },

    release(local) {
      removeStaleSocket(local);
    },
  };

  async function control(args: string[]): Promise<void> {
    const argv = [...sshOptions(t.host, t.settings, ['-S', t.controlPath, ...args]), '--', t.host.ssh];
    const { execa } = await import('execa');
    const r = await execa(bin, argv, { env: t.env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 15_000 });
    if (r.exitCode !== 0)
      throw new JaggersError('E_SSH', `host ${t.name}: ssh ${args.slice(0, 2).join(' ')} failed: ${String(r.stderr).trim() || `exit ${r.exitCode}`}`);
  }
}
