// Which shell the hook bridge (bin/jaggers-hook) runs as. A bash 5 or later does a call in one process
// (no `date`, no `cat`, no `mv`: it writes the file in place, its size in its name); plain sh needs all
// three. The bridge must not try a bash it merely finds on PATH: one that does not run would fail the
// CLI's hook (exit 126) and lose the call. So the supervisor runs the bash on its PATH once, when its
// spool starts, and names it in `<spool>.bash`; the bridge runs as the bash named there, else as plain sh.
import { execFile } from 'node:child_process';
import { rename, rm, writeFile } from 'node:fs/promises';

/** The file beside the spool folder that names the bash the bridge may run as. */
export function bridgeShellFile(spoolDir: string): string {
  return `${spoolDir}.bash`;
}

/** The bash on `env`'s PATH when it runs and is 5 or later: its absolute path; else null. */
export function findBash5(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  // Nothing of the person's shell set-up runs in it, as in the bridge.
  const clean: NodeJS.ProcessEnv = { ...env, LC_ALL: 'C' };
  for (const k of ['BASH_ENV', 'ENV', 'SHELLOPTS', 'BASHOPTS', 'POSIXLY_CORRECT']) delete clean[k];
  return new Promise((resolve) => {
    execFile('bash', ['-c', 'printf "%s %s" "${BASH_VERSINFO[0]}" "$BASH"'], { env: clean, timeout: 5000 }, (err, out) => {
      const m = err ? null : /^(\d+) (\/[^\n]+)$/.exec(String(out));
      resolve(m && Number(m[1]) >= 5 ? m[2]! : null);
    });
  });
}

/**
 * Name the bash the bridge may run as beside `spoolDir` (written whole, renamed into place), or remove
 * the name when there is none. Until it is written the bridge runs as plain sh. The bash named.
 */
export async function writeBridgeShell(spoolDir: string, find: () => Promise<string | null> = findBash5): Promise<string | null> {
  const file = bridgeShellFile(spoolDir);
  await rm(file, { force: true });
  const bash = await find();
  if (bash === null) return null;
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${bash}\n`, { mode: 0o600 });
  await rename(tmp, file);
  return bash;
}
