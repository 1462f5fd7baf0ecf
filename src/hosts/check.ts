// `jaggers host check <name>` (docs/hosts.md): one remote shell script run over one SSH connection
// reports what the host has; pure code here writes the script, reads its answer and judges it.
import { shellQuote } from './ssh.js';

/** The oldest tmux jaggers drives (src/tmux/version.ts has the same rule for this machine). */
export const MIN_REMOTE_TMUX = { major: 3, minor: 2 } as const;

/** What the host must have: the project's folder there and the commands of the CLIs its agents run. */
export interface HostNeeds {
  dir: string;
  commands: readonly string[];
}

const MARK = 'jaggers-host-check';

/**
 * A POSIX sh script printing one tab-separated fact a line, framed by a first and a last line (so a
 * login banner or a shell's greeting around it is ignored, and a cut-off answer is seen as one).
 */
export function checkScript(needs: HostNeeds): string {
  const commands = needs.commands.map(shellQuote).join(' ');
  return [
    `printf '%s\\t1\\n' ${MARK}`,
    `printf 'user\\t%s\\n' "$(id -un 2>/dev/null)"`,
    `printf 'home\\t%s\\n' "$HOME"`,
    `printf 'uid\\t%s\\n' "$(id -u 2>/dev/null)"`,
    `printf 'tmp\\t%s\\n' "\${TMPDIR:-/tmp}"`,
    `printf 'path\\t%s\\n' "$PATH"`,
    `if command -v tmux >/dev/null 2>&1; then printf 'tmux\\t%s\\t%s\\n' "$(command -v tmux)" "$(tmux -V 2>&1 | head -n 1)"; else printf 'tmux\\t\\t\\n'; fi`,
    ...(commands ? [`for c in ${commands}; do printf 'cli\\t%s\\t%s\\n' "$c" "$(command -v "$c" 2>/dev/null)"; done`] : []),
    `if command -v jaggers >/dev/null 2>&1; then printf 'jaggers\\t%s\\t%s\\n' "$(command -v jaggers)" "$(jaggers --version 2>&1 | head -n 1)"; else printf 'jaggers\\t\\t\\n'; fi`,
    `d=${shellQuote(needs.dir)}`,
    `case $d in '~') d=$HOME ;; '~/'*) d=$HOME/\${d#'~/'} ;; esac`,
    `if [ -d "$d" ]; then w=no; [ -w "$d" ] && w=yes; printf 'dir\\t%s\\tyes\\t%s\\n' "$d" "$w"; else printf 'dir\\t%s\\tno\\tno\\n' "$d"; fi`,
    `printf '%s-end\\n' ${MARK}`,
  ].join('\n');
}

/** What the script found on the host. */
export interface HostFacts {
  user: string;
  home: string;
  /** The user's uid and temp folder (TMPDIR, else /tmp): where its jaggers puts a socket too long for its folder. */
  uid: number | null;
  tmp: string;
  path: string;
  tmux: { path: string; version: string } | null;
  /** Each needed command and where it is (null: not on PATH). */
  clis: { command: string; path: string | null }[];
  jaggers: { path: string; version: string } | null;
  dir: { path: string; exists: boolean; writable: boolean };
}

/** The script's answer read back; null when it is not all there (cut off, or not our script's). */
export function parseCheckOutput(stdout: string): HostFacts | null {
  const lines = stdout.split(/\r?\n/);
  const start = lines.findIndex((l) => l === `${MARK}\t1`);
  const end = lines.indexOf(`${MARK}-end`);
  if (start < 0 || end < start) return null;
  const facts: HostFacts = {
    user: '',
    home: '',
    uid: null,
    tmp: '/tmp',
    path: '',
    tmux: null,
    clis: [],
    jaggers: null,
    dir: { path: '', exists: false, writable: false },
  };
  for (const line of lines.slice(start + 1, end)) {
    const [key, a = '', b = '', c = ''] = line.split('\t');
    if (key === 'user') facts.user = a;
    else if (key === 'home') facts.home = a;
    else if (key === 'uid') facts.uid = /^\d+$/.test(a) ? Number(a) : null;
    else if (key === 'tmp') facts.tmp = a.replace(/(.)\/+$/, '$1') || '/tmp';
    else if (key === 'path') facts.path = a;
    else if (key === 'tmux') facts.tmux = a ? { path: a, version: b } : null;
    else if (key === 'cli') facts.clis.push({ command: a, path: b || null });
    else if (key === 'jaggers') facts.jaggers = a ? { path: a, version: b.trim() } : null;
    else if (key === 'dir') facts.dir = { path: a, exists: b === 'yes', writable: c === 'yes' };
  }
  return facts;
}

export interface CheckItem {
  /** `ssh`, `tmux`, `cli <command>`, `jaggers`, `dir`. */
  what: string;
  ok: boolean;
  detail: string;
}

function tmuxItem(t: HostFacts['tmux']): CheckItem {
  if (!t) return { what: 'tmux', ok: false, detail: 'not found on PATH: install tmux 3.2 or newer there' };
  const m = /tmux (?:next-)?(\d+)\.(\d+)/.exec(t.version);
  if (!m) return { what: 'tmux', ok: false, detail: `${t.path} says ${JSON.stringify(t.version)}, not a tmux version` };
  const [major, minor] = [Number(m[1]), Number(m[2])];
  const ok = major > MIN_REMOTE_TMUX.major || (major === MIN_REMOTE_TMUX.major && minor >= MIN_REMOTE_TMUX.minor);
  const need = `${MIN_REMOTE_TMUX.major}.${MIN_REMOTE_TMUX.minor}`;
  return { what: 'tmux', ok, detail: ok ? `${t.version} (${t.path})` : `${t.version} is too old (${t.path}): jaggers needs tmux ${need} or newer` };
}

/** Every check, in the order they are listed; the version the host's jaggers must have is this one's. */
export function judgeHost(facts: HostFacts, localVersion: string, login: string): CheckItem[] {
  const items: CheckItem[] = [{ what: 'ssh', ok: true, detail: `logged in as ${facts.user || '?'}${login}` }, tmuxItem(facts.tmux)];
  for (const c of facts.clis)
    items.push({
      what: `cli ${c.command}`,
      ok: c.path !== null,
      detail: c.path ?? `not found on PATH there (${facts.path}): install it, or add its folder to that PATH`,
    });
  const j = facts.jaggers;
  items.push(
    !j
      ? { what: 'jaggers', ok: false, detail: `not found on PATH there (${facts.path}): install it: npm install -g jaggers@${localVersion}` }
      : j.version === localVersion
        ? { what: 'jaggers', ok: true, detail: `${j.version} (${j.path}), the same as here` }
        : {
            what: 'jaggers',
            ok: false,
            detail: `${JSON.stringify(j.version)} there (${j.path}), ${localVersion} here: install the same version (npm install -g jaggers@${localVersion})`,
          },
  );
  const d = facts.dir;
  items.push(
    !d.exists
      ? { what: 'dir', ok: false, detail: `${d.path} is not a folder there: make it (mkdir -p), or fix \`dir\`` }
      : d.writable
        ? { what: 'dir', ok: true, detail: d.path }
        : { what: 'dir', ok: false, detail: `${d.path} is not writable by ${facts.user || 'that user'}` },
  );
  return items;
}
