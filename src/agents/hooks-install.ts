// A pane's native hooks (issue 27), as the launcher installs them: the profile's HookKit says which
// flags, environment, files and links make the CLI call the hook bridge (bin/jaggers-hook); the files and
// links go only under `.jaggers/hooks/<terminalId>/` (any other path is refused), never into the user's
// own settings, and that folder goes on `down` and when the agent's window closes.
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HOOKS } from '../clis/kinds.js';
import type { HookInstall } from '../clis/types.js';
import { JaggersError } from '../errors.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import { hookSpoolDir } from '../panes/hook-spool.js';
import type { McpLaunch } from '../mcp/register.js';
import type { Profile } from '../profiles/schema.js';

/** What a launch gains from the hooks: checked, with the folder its files go in. */
export interface HookLaunch extends HookInstall {
  kind: string;
  dir: string;
}

/** The folder of one terminal's hook files. */
export function hookDir(projectRoot: string, terminalId: string): string {
  return path.join(projectRoot, '.jaggers', 'hooks', terminalId);
}

/** The folder of every terminal's hook files (removed whole on `down`). */
export function hooksRoot(projectRoot: string): string {
  return path.join(projectRoot, '.jaggers', 'hooks');
}

/** `sh <bin>/jaggers-hook <spool> <terminalId>`: the bridge's command line, to which a CLI appends its event. */
export function bridgeCommand(binDir: string, projectRoot: string, terminalId: string): string[] {
  return ['sh', path.join(binDir, 'jaggers-hook'), hookSpoolDir(path.join(projectRoot, '.jaggers')), terminalId];
}

/** One word for `sh -c`: single-quoted unless it is plainly safe. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Are hooks off? `JAGGERS_HOOKS=0` (or `off`, `false`) in the supervisor's environment, `"hooks": false`
 * in jaggers.json, or on the agent's entry there; null: on.
 */
export function hooksOff(env: Record<string, string | undefined>, project: { hooks?: boolean } | null, agent: { hooks?: boolean } | null): string | null {
  const v = env.JAGGERS_HOOKS?.trim().toLowerCase();
  if (v === '0' || v === 'off' || v === 'false' || v === 'no') return `JAGGERS_HOOKS=${env.JAGGERS_HOOKS}`;
  if (project?.hooks === false) return 'jaggers.json "hooks": false';
  if (agent?.hooks === false) return 'the agent\'s "hooks": false in jaggers.json';
  return null;
}

/**
 * The install of a profile's hooks for one terminal (null: the profile has none): the kit's answer,
 * each file checked to be inside the terminal's hook folder.
 */
export function hookLaunch(
  profile: Profile,
  id: {
    projectRoot: string;
    binDir: string;
    terminalId: string;
    cwd: string;
    version?: string | null;
    /** The pane's environment before the kit's additions (HookInstallContext.env). */
    env?: Readonly<Record<string, string | undefined>>;
  },
): HookLaunch | null {
  const kind = profile.detect.hooks;
  if (!kind) return null;
  const dir = hookDir(id.projectRoot, id.terminalId);
  const bridge = bridgeCommand(id.binDir, id.projectRoot, id.terminalId);
  const got = HOOKS[kind].install({
    bridge,
    bridgeShell: bridge.map(shellQuote).join(' '),
    dir,
    cwd: id.cwd,
    version: id.version ?? null,
    ...(id.env ? { env: id.env } : {}),
  });
  // A kit that can install nothing here (gemini with a settings file of the person's it cannot join:
  // `unavailable` says why, and doctor shows it): no hooks, so no warning that they never fired either.
  if (got.unavailable || !installsAny(got)) return null;
  for (const f of got.files) checkInside(dir, f.path, kind);
  for (const l of got.links ?? []) checkInside(dir, l.path, kind);
  for (const f of got.fresh ?? []) checkInside(dir, f, kind);
  return {
    kind,
    dir,
    args: [...got.args],
    env: { ...got.env },
    files: got.files.map((f) => ({ path: path.resolve(f.path), text: f.text })),
    ...(got.links?.length ? { links: got.links.map((l) => ({ path: path.resolve(l.path), target: path.resolve(l.target) })) } : {}),
    ...(got.fresh?.length ? { fresh: got.fresh.map((f) => path.resolve(f)) } : {}),
    ...(got.folders?.length ? { folders: got.folders.map((f) => path.resolve(f)) } : {}),
  };
}

/**
 * One variable that names both jaggers' MCP config and the CLI's hook settings (qwen takes each through
 * `QWEN_CODE_SYSTEM_DEFAULTS_PATH`): the hook file gets the MCP config's keys too, and the variable
 * names it, so the CLI reads both. Two files that cannot be joined (not JSON objects) are an error.
 */
export function shareSettingsFiles(mcp: McpLaunch | null, hooks: HookLaunch | null): HookLaunch | null {
  if (!mcp || !hooks) return hooks;
  let files = hooks.files;
  for (const [key, hookFile] of Object.entries(hooks.env)) {
    const mcpFile = mcp.env[key];
    if (mcpFile === undefined || mcpFile === hookFile) continue;
    const m = mcp.files.find((f) => path.resolve(f.path) === path.resolve(mcpFile));
    const h = files.find((f) => f.path === path.resolve(hookFile));
    const join = m && h ? joinedSettings(m.content, h.text) : null;
    if (join === null)
      throw new JaggersError(
        'E_PROFILE_INVALID',
        `hooks ${hooks.kind}: ${key} names both ${hookFile} (hooks) and ${mcpFile} (jaggers' MCP server), which cannot be joined into one file`,
      );
    files = files.map((f) => (f === h ? { ...f, text: join } : f));
  }
  return files === hooks.files ? hooks : { ...hooks, files };
}

function joinedSettings(mcpText: string, hookText: string): string | null {
  try {
    const a: unknown = JSON.parse(mcpText);
    const b: unknown = JSON.parse(hookText);
    const obj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
    return obj(a) && obj(b) ? `${JSON.stringify({ ...a, ...b }, null, 2)}\n` : null;
  } catch {
    return null;
  }
}

/** Whether an install adds anything to a start. */
function installsAny(got: HookInstall): boolean {
  return got.args.length > 0 || got.files.length > 0 || (got.links?.length ?? 0) > 0 || Object.keys(got.env).length > 0;
}

/** A file a kit wants written must be inside the terminal's hook folder: anything else is refused. */
export function checkInside(dir: string, file: string, kind: string): void {
  const rel = path.relative(dir, path.resolve(dir, file));
  if (!path.isAbsolute(file) || rel === '' || rel.startsWith('..') || path.isAbsolute(rel))
    throw new JaggersError('E_INTERNAL', `hooks ${kind}: refusing to write ${JSON.stringify(file)}: hook files go only under ${dir}`);
}

/**
 * Write a launch's hook files and links (the folder made private first; its `fresh` folders emptied, the
 * kit's `folders` made); a launch without hooks removes an old install. Removing never follows a link:
 * what a link points at is left alone.
 */
export async function writeHookFiles(hooks: HookLaunch | null, off: { dir: string } | null): Promise<void> {
  if (!hooks) {
    if (off) await rm(off.dir, { recursive: true, force: true });
    return;
  }
  await ensurePrivateFolder(hooks.dir);
  for (const f of hooks.fresh ?? []) {
    checkInside(hooks.dir, f, hooks.kind);
    await rm(f, { recursive: true, force: true });
  }
  for (const f of hooks.folders ?? []) await mkdir(f, { recursive: true });
  for (const f of hooks.files) {
    checkInside(hooks.dir, f.path, hooks.kind);
    await ensurePrivateFolder(path.dirname(f.path));
    const tmp = `${f.path}.${process.pid}.tmp`;
    await writeFile(tmp, f.text, { mode: 0o600 });
    await rename(tmp, f.path);
  }
  for (const l of hooks.links ?? []) {
    checkInside(hooks.dir, l.path, hooks.kind);
    await ensurePrivateFolder(path.dirname(l.path));
    await rm(l.path, { recursive: true, force: true });
    await symlink(l.target, l.path);
  }
}

/** A terminal's hook folder, gone (its window closed). */
export async function removeHookDir(projectRoot: string, terminalId: string): Promise<void> {
  await rm(hookDir(projectRoot, terminalId), { recursive: true, force: true });
}

/**
 * The signals a profile reads its CLI by, strongest first, on the installed release (`version`; null:
 * unknown): its hooks where its kit installs any for that release (asked for a pane's hook folder under
 * `jaggersDir`, with `env` as the pane's: gemini's answer depends on the person's own settings file)
 * with what to know about them on this machine (the kit's caveat, under `env`), its state file, its
 * screen rules.
 */
export function profileSignals(profile: Profile, version: string | null, jaggersDir: string = os.tmpdir(), env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  const kind = profile.detect.hooks;
  if (kind) {
    let got: HookInstall | null = null;
    try {
      const dir = path.join(jaggersDir, 'hooks', 'jg-probe');
      got = HOOKS[kind].install({ bridge: ['sh', 'jaggers-hook'], bridgeShell: 'sh jaggers-hook', dir, cwd: dir, version, env });
    } catch {
      got = null;
    }
    const any = got !== null && installsAny(got);
    const caveat = any ? (HOOKS[kind].caveat?.(env) ?? null) : null;
    if (any) out.push(caveat ? `hooks (${kind}; note: ${caveat})` : `hooks (${kind})`);
    else if (got?.unavailable) out.push(`no hooks (${kind}: ${got.unavailable})`);
    else out.push(`no hooks on ${version ? `release ${version}` : 'this release'} (${kind} installs none)`);
  }
  if (profile.detect.stateFile) out.push(`state file (${profile.detect.stateFile})`);
  out.push(`screen (${profile.detect.rules.length} rule${profile.detect.rules.length === 1 ? '' : 's'})`);
  return out;
}
