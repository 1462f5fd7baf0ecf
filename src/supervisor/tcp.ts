// `jaggers serve --listen HOST:PORT`: the API on TCP as well, behind a bearer token kept in
// `.jaggers/token` (0600), for tools that cannot reach a unix socket.
import { randomBytes } from 'node:crypto';
import { chmod, open, readFile } from 'node:fs/promises';
import { tokenPath } from '../api/paths.js';
import { JaggersError } from '../errors.js';

export interface ListenAddress {
  host: string;
  port: number;
}

/** `127.0.0.1:7420`, `[::1]:7420`, or `:7420` (loopback); anything else is a clear error naming `source`. */
export function parseListen(s: string, source: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:]+)\]|([^:\s]*)):(\d{1,5})$/.exec(s.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new JaggersError('E_USAGE', `${source}: listen address must look like 127.0.0.1:7420, got ${JSON.stringify(s)}`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

/** The token, made (64 hex, file mode 0600) the first time it is needed. */
export async function ensureToken(jaggersDir: string): Promise<string> {
  const file = tokenPath(jaggersDir);
  try {
    const fh = await open(file, 'wx', 0o600);
    const token = randomBytes(32).toString('hex');
    await fh.writeFile(`${token}\n`);
    await fh.close();
    return token;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new JaggersError('E_FILE', `cannot write ${file}: ${(e as Error).message}`);
  }
  await chmod(file, 0o600);
  const token = (await readFile(file, 'utf8')).trim();
  if (!/^[0-9a-f]{32,}$/.test(token)) throw new JaggersError('E_FILE', `${file}: not a jaggers token (remove it and run jaggers serve again)`);
  return token;
}
