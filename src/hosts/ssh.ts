// How jaggers runs the system's `ssh` (issue 31; docs/hosts.md): the user's own configuration
// (~/.ssh/config, the agent, known_hosts) as `ssh` reads it, with BatchMode (never a prompt: a
// password or passphrase asked for is a failure) and StrictHostKeyChecking=yes (a host key that is
// not known, or changed, is an error, never accepted). Pure: argv in, failures out.
import os from 'node:os';
import path from 'node:path';
import type { ErrorCode } from '../errors.js';
import type { HostSpec } from './schema.js';

/** What every ssh run shares: the binary, the config file (-F) when one is set, the home `~` is. */
export interface SshSettings {
  /** `ssh`, or JAGGERS_SSH. */
  bin: string;
  /** JAGGERS_SSH_CONFIG: a config file read instead of ~/.ssh/config (`ssh -F`); null: ssh's own. */
  configFile: string | null;
  /** This machine's home, for a `~/` in `identity`. */
  home: string;
}

export function sshSettings(env: NodeJS.ProcessEnv): SshSettings {
  return { bin: env.JAGGERS_SSH || 'ssh', configFile: env.JAGGERS_SSH_CONFIG || null, home: env.HOME || os.homedir() };
}

/** The options every run gets: no prompts, strict host keys, a bounded connect. */
export const SSH_OPTIONS: readonly string[] = ['-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', '-o', 'ConnectTimeout=10'];

export function expandHome(p: string, home: string): string {
  return p === '~' ? home : p.startsWith('~/') ? path.join(home, p.slice(2)) : p;
}

/** ssh's options for `host` (no destination): `-F`, the fixed options, the port and identity, then `extra`. */
export function sshOptions(host: HostSpec, s: SshSettings, extra: readonly string[] = []): string[] {
  return [
    ...(s.configFile ? ['-F', s.configFile] : []),
    ...SSH_OPTIONS,
    ...(host.port !== undefined ? ['-p', String(host.port)] : []),
    ...(host.identity !== undefined ? ['-i', expandHome(host.identity, s.home)] : []),
    ...extra,
  ];
}

/** `ssh <options> -- <destination> <remote command>`: the remote command is one string its login shell runs. */
export function sshArgv(host: HostSpec, s: SshSettings, remoteCommand: string | null, extra: readonly string[] = []): string[] {
  return [...sshOptions(host, s, extra), '--', host.ssh, ...(remoteCommand === null ? [] : [remoteCommand])];
}

/** One word for a POSIX shell: single-quoted, a `'` inside as `'\''`. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** argv as the one command line ssh sends (run by the remote login shell). */
export function remoteCommandLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}

/** Why ssh failed, as a value: ssh exits 255 for its own errors, and says which on stderr. */
export type SshFailure =
  | { reason: 'ssh-missing'; bin: string }
  | { reason: 'host-key-unknown' }
  | { reason: 'host-key-changed' }
  | { reason: 'auth-failed'; detail: string }
  | { reason: 'unreachable'; detail: string }
  | { reason: 'dropped'; detail: string }
  | { reason: 'ssh-failed'; detail: string };

function lastLine(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const l = lines[lines.length - 1] ?? '';
  return l.length > 300 ? `${l.slice(0, 297)}...` : l;
}

/**
 * The failure an ssh run's end shows, or null when ssh itself did not fail (the remote command's own
 * exit code, which may be anything but 255). `spawnError`: the binary could not be started (ENOENT).
 */
export function classifySshFailure(r: { exitCode: number | null; stderr: string; spawnError?: string | null }, bin: string): SshFailure | null {
  if (r.spawnError) return /ENOENT/.test(r.spawnError) ? { reason: 'ssh-missing', bin } : { reason: 'ssh-failed', detail: r.spawnError };
  if (r.exitCode !== 255) return null;
  const e = r.stderr;
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed/i.test(e)) return { reason: 'host-key-changed' };
  if (/host key is known for|Host key verification failed/i.test(e)) return { reason: 'host-key-unknown' };
  if (/Permission denied|Too many authentication failures|no mutual signature|Authentication failed/i.test(e))
    return { reason: 'auth-failed', detail: lastLine(e) };
  if (/closed by remote host|Broken pipe|Timeout, server .* not responding|Connection reset by peer/i.test(e))
    return { reason: 'dropped', detail: lastLine(e) };
  if (
    /Could not resolve hostname|Connection refused|Connection timed out|No route to host|Network is unreachable|Connection closed by|kex_exchange_identification|Operation timed out/i.test(
      e,
    )
  )
    return { reason: 'unreachable', detail: lastLine(e) };
  return { reason: 'ssh-failed', detail: lastLine(e) || 'ssh exited with 255 and said nothing' };
}

/** One sentence for the failure, naming the host (`box`) and where it is (`me@build port 2222`). */
export function describeSshFailure(name: string, host: HostSpec, f: SshFailure): string {
  const where = `host ${name} (${host.ssh}${host.port !== undefined ? ` port ${host.port}` : ''})`;
  switch (f.reason) {
    case 'ssh-missing':
      return `${where}: the ssh client \`${f.bin}\` is not installed here (Debian: apt-get install openssh-client)`;
    case 'host-key-unknown':
      return `${where}: its host key is not in known_hosts, and jaggers never accepts a host key unasked: check its fingerprint and add it (connect once with \`ssh ${host.ssh}\`, or ssh-keyscan into ~/.ssh/known_hosts)`;
    case 'host-key-changed':
      return `${where}: its host key is NOT the one known_hosts has for it (a reinstalled host, or someone in between): check with the host's owner before you replace the line in known_hosts`;
    case 'auth-failed':
      return `${where}: login refused (${f.detail}): jaggers uses keys only, never a password prompt: add your key to the host's authorized_keys, load it in ssh-agent, or set \`identity\``;
    case 'unreachable':
      return `${where}: cannot connect (${f.detail})`;
    case 'dropped':
      return `${where}: the connection dropped (${f.detail})`;
    case 'ssh-failed':
      return `${where}: ssh failed: ${f.detail}`;
  }
}

/** The error code a failure is thrown with: a host key problem has its own. */
export function sshErrorCode(f: SshFailure | null): ErrorCode {
  return f && (f.reason === 'host-key-unknown' || f.reason === 'host-key-changed') ? 'E_SSH_HOST_KEY' : 'E_SSH';
}
