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

/** `127.0.0.1:7420`, `[::1]:7420`. */
export function formatAddress(a: ListenAddress): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/** Only this machine can reach it: 127.0.0.0/8, ::1 (also IPv4-mapped), localhost. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^::ffff:/, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * An address beyond this machine (0.0.0.0, a LAN address) only when asked for by name: the API drives the
 * agents, and on plain HTTP its bearer token can be read on the way.
 */
export function checkExposure(a: ListenAddress, allowRemote: boolean, source: string): void {
  if (isLoopback(a.host) || allowRemote) return;
  throw new JaggersError(
    'E_USAGE',
    `${source}: ${formatAddress(a)} is not a loopback address: whoever reaches it with the token drives your agents, and the ` +
      `token travels unencrypted (plain HTTP). Listen on 127.0.0.1, or add --allow-remote (API: "allowRemote": true) to listen there anyway`,
  );
}

/** Why a new listener could not start, naming the address, and what stays as it was (`of`: which listener, and its file). */
export function listenFailed(
  a: ListenAddress,
  e: unknown,
  current: string | null,
  of = { what: 'the API', file: 'serve.json', stop: 'jaggers serve --stop' },
): JaggersError {
  const code = (e as NodeJS.ErrnoException).code;
  const why = code === 'EADDRINUSE' ? 'the address is in use' : code === 'EADDRNOTAVAIL' ? 'not an address of this machine' : (e as Error).message;
  const same = current !== null && code === 'EADDRINUSE' && current.endsWith(`:${a.port}`);
  const stays = current
    ? `${of.what} stays on ${current}${same ? ` (which holds that port: \`${of.stop}\` first to move it)` : ''}`
    : `${of.what} is not on TCP`;
  return new JaggersError(
    'E_LISTEN',
    `cannot listen on ${formatAddress(a)}: ${why}${code && !why.includes(code) ? ` (${code})` : ''}; ${stays}, and .jaggers/${of.file} is unchanged`,
  );
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
