import { execa } from 'execa';
import { JaggersError } from '../errors.js';

/** Subscriptions (`refresh-client -B`) need 3.2; `new-window -e` needs 3.0. */
export const MIN_TMUX = { major: 3, minor: 2 } as const;

export interface TmuxVersion {
  raw: string;
  major: number;
  minor: number;
}

export function parseTmuxVersion(output: string): TmuxVersion | null {
  const m = /tmux (?:next-)?(\d+)\.(\d+)/.exec(output.trim());
  if (!m) return null;
  return { raw: output.trim(), major: Number(m[1]), minor: Number(m[2]) };
}

export function isSupported(v: TmuxVersion): boolean {
  return v.major > MIN_TMUX.major || (v.major === MIN_TMUX.major && v.minor >= MIN_TMUX.minor);
}

/** Find tmux and check its version; throws E_TMUX_NOT_FOUND / E_TMUX_TOO_OLD. */
export async function checkTmux(bin: string, env: NodeJS.ProcessEnv): Promise<TmuxVersion> {
  const r = await execa(bin, ['-V'], { env, extendEnv: false, reject: false });
  const errno = (r as { code?: string }).code;
  if (errno === 'ENOENT' || (r.failed && /ENOENT/.test(String(r.message)))) {
    throw new JaggersError(
      'E_TMUX_NOT_FOUND',
      bin === 'tmux'
        ? 'tmux not found on PATH: install it with apt-get install tmux or your package manager'
        : `tmux not found at ${bin} (from JAGGERS_TMUX): install it with apt-get install tmux or your package manager`,
    );
  }
  const v = parseTmuxVersion(String(r.stdout));
  if (!v) {
    throw new JaggersError('E_TMUX_NOT_FOUND', `${bin} -V printed ${JSON.stringify(String(r.stdout || r.stderr))}, not a tmux version`);
  }
  if (!isSupported(v)) {
    throw new JaggersError('E_TMUX_TOO_OLD', `${v.raw} is too old: jaggers needs tmux ${MIN_TMUX.major}.${MIN_TMUX.minor} or newer`);
  }
  return v;
}
