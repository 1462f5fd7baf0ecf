// gemini's home for one pane (issue 27). gemini 0.61 takes its home from `GEMINI_CLI_HOME` (its
// `homedir()`: the user settings, sign-in, trusted folders, chats, extensions, commands... all under
// `<home>/.gemini/`), so jaggers points it at an overlay under the pane's hook folder whose `.gemini/`
// holds the person's own settings.json with jaggers' hooks joined in, and a link to every other entry of
// the person's real `~/.gemini`: sign-in, sessions (`tmp/`), trust and history stay the person's own
// files. Nothing of the person's is written by jaggers, except two folders gemini itself makes at every
// start (`tmp/`, `history/`), made a moment earlier so the links to them resolve.
//
// What gemini does through such links (read in its bundle, and seen): a file it writes in place
// (writeFile: state.json, oauth_creds.json, google_accounts.json, installation_id...) is written through
// the link to the person's file, also when that file does not exist yet (a dangling link); a file it
// replaces by a rename (projects.json, trustedFolders.json) replaces the link with a file of the overlay.
// trustedFolders.json therefore goes by `GEMINI_CLI_TRUSTED_FOLDERS_PATH` to the person's own file;
// projects.json's slugs are also kept in `tmp/<slug>/.project_root`, which gemini reads first. A
// dangling link to a folder breaks gemini's mkdir: folders that do not exist are not linked. (gemini's
// relauncher, which the profile's GEMINI_CLI_NO_RELAUNCH turns off, reads `$GEMINI_CLI_HOME/settings.json`
// without `.gemini/` for `advanced.autoConfigureMemory`: with the overlay it finds none, the default.)
// Other uses of its home that change: docs/hooks.md "Known limits".
import path from 'node:path';
import { joinHooks, parseSettings } from './settings-join.js';

/** What the overlay is built from: the person's files, read defensively (null: not there; other errors throw). */
export interface GeminiHomeReader {
  /** The names in a folder; null when it does not exist. */
  list(dir: string): string[] | null;
  /** A file's text; null when it does not exist. */
  read(file: string): string | null;
  /** Whether anything (a link to nothing too) is at `p`. */
  exists(p: string): boolean;
}

/** The overlay home under a pane's hook folder: `GEMINI_CLI_HOME`. */
export const OVERLAY_HOME = 'home';
const GEMINI_DIR = '.gemini';
const SETTINGS = 'settings.json';
const TRUSTED_FOLDERS = 'trustedFolders.json';

/** Folders gemini makes under `~/.gemini` at every start (each project's temp and chat folder; its shell history). */
const MADE_AT_START = ['tmp', 'history'];
/**
 * Files gemini 0.61 writes in place: linked even while they do not exist, so that the person's own file
 * appears when gemini writes it, as it would without jaggers.
 */
const WRITTEN_IN_PLACE = [
  'state.json',
  'installation_id',
  'oauth_creds.json',
  'google_accounts.json',
  'gemini-credentials.json',
  'mcp-oauth-tokens.json',
  'trusted_hooks.json',
  'GEMINI.md',
];
/** What gemini reads from its home outside `.gemini/`: `~/.env` (keys such as GEMINI_API_KEY) and `~/.agents/skills`. */
const HOME_ENTRIES = ['.env', '.agents'];

export interface OverlayPlan {
  /** The overlay home (`GEMINI_CLI_HOME`). */
  home: string;
  settings: { path: string; text: string };
  links: { path: string; target: string }[];
  /** Folders in the person's `~/.gemini` to make when missing. */
  folders: string[];
  env: Record<string, string>;
}

export type OverlayResult = { ok: true; plan: OverlayPlan } | { ok: false; why: string };

/**
 * The overlay for a pane whose hook folder is `dir`: `realHome` is the home gemini would use without
 * jaggers (`GEMINI_CLI_HOME`, else HOME, of the pane), `hooks` jaggers' hook definitions per event.
 * `trustedFoldersSet`: the pane's environment names its own GEMINI_CLI_TRUSTED_FOLDERS_PATH (kept).
 */
export function planOverlay(
  o: { dir: string; realHome: string; hooks: Readonly<Record<string, readonly unknown[]>>; trustedFoldersSet: boolean },
  fs: GeminiHomeReader,
): OverlayResult {
  const home = path.join(o.dir, OVERLAY_HOME);
  const rel = path.relative(o.dir, o.realHome);
  if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel)))
    return { ok: false, why: `gemini's home ${o.realHome} is inside jaggers' hook folder ${o.dir}` };
  const realGemini = path.join(o.realHome, GEMINI_DIR);
  const overlayGemini = path.join(home, GEMINI_DIR);
  const settingsFile = path.join(realGemini, SETTINGS);

  const entries = attempt(() => fs.list(realGemini), realGemini);
  if (!entries.ok) return entries;
  const text = attempt(() => fs.read(settingsFile), settingsFile);
  if (!text.ok) return text;
  const parsed = text.value === null ? ({ ok: true, settings: {} } as const) : parseSettings(text.value, settingsFile);
  if (!parsed.ok) return parsed;
  const joined = joinHooks(parsed.settings, o.hooks, settingsFile);
  if (!joined.ok) return joined;

  const present = new Set(entries.value ?? []);
  const folders = MADE_AT_START.filter((n) => !present.has(n)).map((n) => path.join(realGemini, n));
  const names = [...new Set([...present, ...MADE_AT_START, ...WRITTEN_IN_PLACE])].filter((n) => n !== SETTINGS).sort();
  const links = names.map((n) => ({ path: path.join(overlayGemini, n), target: path.join(realGemini, n) }));
  for (const n of HOME_ENTRIES) {
    const target = path.join(o.realHome, n);
    if (fs.exists(target)) links.push({ path: path.join(home, n), target });
  }
  return {
    ok: true,
    plan: {
      home,
      settings: { path: path.join(overlayGemini, SETTINGS), text: `${JSON.stringify(joined.settings, null, 2)}\n` },
      links,
      folders,
      env: { GEMINI_CLI_HOME: home, ...(o.trustedFoldersSet ? {} : { GEMINI_CLI_TRUSTED_FOLDERS_PATH: path.join(realGemini, TRUSTED_FOLDERS) }) },
    },
  };
}

function attempt<T>(read: () => T, what: string): { ok: true; value: T } | { ok: false; why: string } {
  try {
    return { ok: true, value: read() };
  } catch (e) {
    return { ok: false, why: `cannot read ${what}: ${(e as Error).message}` };
  }
}
